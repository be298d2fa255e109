//===- FinishPlan.h - The split-K finishing kernel's contract ---*- C++ -*-===//
//
// Symbol, signature and grid of stage 1's split-K finishing kernel
// (FinishKernel.h describes what it computes). MLIR-free.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEMPLATES_FINISH_FINISHPLAN_H
#define MOEGEN_TEMPLATES_FINISH_FINISHPLAN_H

#include "compiler/spec/Spec.h"
#include "templates/KernelSignature.h"

#include "llvm/ADT/StringRef.h"

#include <array>

namespace moegen {

constexpr int64_t kFinishThreads = 256;

/// "moe_finish_i384_kb2_atomic_fp4_<hash>": the split and the output format
/// in words, the activation and top-k in a short hash.
std::string finishKernelSymbol(const MoeSpec &spec);
/// Arguments: partials, sorted_ids, sorted_weights, num_valid_ids, out,
/// out_scale, tokens.
KernelSignature finishKernelSignature(llvm::StringRef symbol);

/// Launch: one thread per (sorted row, 32-column block) of `maxPaddedRows`
/// sorted rows: {ceil(maxPaddedRows * I/32 / 256), 1, 1} workgroups.
std::array<int64_t, 3> finishGrid(const MoeSpec &spec, int64_t maxPaddedRows);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_FINISH_FINISHPLAN_H
