//===- Lookup.h - From a problem to aiter's tuned choice --------*- C++ -*-===//
//
// Builds aiter's lookup key for a MoeSpec, explains what a lookup did (tier,
// keys tried, the row hit or the heuristic aiter falls back to) and maps the
// chosen kernels to moegen schedules.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_DISPATCH_LOOKUP_H
#define MOEGEN_RUNTIME_DISPATCH_LOOKUP_H

#include "compiler/spec/Spec.h"
#include "runtime/dispatch/KernelName.h"
#include "runtime/dispatch/TunedTable.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace moegen::dispatch {

/// aiter's strings: "torch.float4_e2m1fn_x2", "torch.float8_e4m3fn",
/// "torch.bfloat16", "torch.float32".
llvm::StringRef aiterDtypeName(DType t);
/// "ActivationType.Situv2" for "situv2", ... ; nullopt for a user-defined
/// activation aiter has no enum for.
std::optional<std::string> aiterActivationName(llvm::StringRef moegenName);
/// Accepts "situv2", "Situv2" or "ActivationType.Situv2".
std::string canonicalActType(llvm::StringRef s);
/// Accepts "mxfp4"/"fp4", "mxfp8"/"fp8", "bf16", or a torch.* string.
std::string canonicalDtype(llvm::StringRef s);

/// The 14-column key of a spec (token left 0): dtype bf16, per_1x32 when any
/// MX format is involved, use_g1u1 = 1.
llvm::Expected<TunedKey> aiterKeyFor(const MoeSpec &spec, llvm::StringRef gfx, int64_t cuNum);

/// The FlyDSL kernels aiter's no-row heuristic picks for an MX per_1x32
/// problem (aiter fused_moe.py, get_2stage_cfgs fallback), or nullopt when the heuristic is another
/// backend.
struct HeuristicChoice {
  int64_t blockM = 0;
  std::string kernelName1, kernelName2;
};
std::optional<HeuristicChoice> aiterHeuristic(const TunedKey &key, int64_t tokens);

/// The key's columns in one line, token left out.
std::string describeKey(const TunedKey &k);

/// A multi-line human-readable report of a lookup: tier, each key tried,
/// the hit (file:line, block_m, kernels) or the fallback, and the moegen
/// schedules the kernels map to (or why they do not).
std::string formatLookupReport(const TunedKey &query, const LookupResult &r);

} // namespace moegen::dispatch

#endif // MOEGEN_RUNTIME_DISPATCH_LOOKUP_H
