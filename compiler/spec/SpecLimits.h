//===- SpecLimits.h - Bounds on every number a spec takes -------*- C++ -*-===//
//
// Every number a spec takes from outside (a .moe file, --set, a C++ caller)
// is checked here once, before anything sizes a buffer or builds an attribute
// (docs/dsl.md, "Limits"). Within these bounds no size computed later
// (weights E x 2I x K, sorted rows, tile products, byte counts) can overflow
// int64, and they stay far above any real MoE layer (DeepSeek/Kimi: K <= 7168,
// E <= 896, topk <= 16).
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_COMPILER_SPEC_SPECLIMITS_H
#define MOEGEN_COMPILER_SPEC_SPECLIMITS_H

#include "compiler/spec/Spec.h"

#include "llvm/Support/Error.h"

namespace moegen {
namespace limits {
constexpr int64_t kMaxDim = 65536;      // model_dim, inter_dim
constexpr int64_t kMaxExperts = 65536;  // experts
constexpr int64_t kMaxTopk = 255;       // the slot is 8 bits of a sorted token id
constexpr int64_t kMaxTile = 4096;      // tile_m, tile_n, tile_k
constexpr int64_t kMaxKBatch = kMaxDim; // a split cannot exceed K
constexpr int64_t kMaxKWave = 16;       // waves of one 1024-thread workgroup
constexpr int64_t kMaxWavesPerEU = 8;
constexpr int64_t kMaxPrefetch = 16;                   // K steps of weights loaded ahead
constexpr int64_t kMaxXcdSwizzle = 8;                  // workgroup groups: gfx950 has 8 XCDs
constexpr int64_t kMaxTokens = (int64_t(1) << 24) - 1; // the token is 24 bits of a sorted id
constexpr unsigned kMaxExprDepth = 256;                // nesting of an activation expression
} // namespace limits

/// Checks every field of a spec against `limits`, and the activation's
/// parameters (finite, not named like the printed arguments g and u). Errors
/// read "file:line:col: error: ..." where the spec wrote the value.
llvm::Error checkSpecLimits(const MoeSpec &spec);

/// Checks a token count against limits::kMaxTokens; `what` names its source
/// (e.g. "--tokens").
llvm::Error checkTokenCount(int64_t tokens, llvm::StringRef what);

/// Checks that generating a layer's inputs and reference for `tokens` tokens
/// (weights, router scores, per-slot rows) fits in `availableBytes` of host
/// memory; the error gives both numbers. Call after checkSpecLimits, whose
/// bounds keep the estimate within int64.
llvm::Error checkHostMemory(const MoeSpec &spec, int64_t tokens, uint64_t availableBytes);

/// The machine's physical memory in bytes (0 when unknown: no check).
uint64_t physicalMemoryBytes();

/// Height of an expression tree (a leaf is 1), measured only up to `cap` + 1,
/// so the walk never recurses deeper than that.
unsigned exprDepth(const ExprNode &node, unsigned cap);

} // namespace moegen

#endif // MOEGEN_COMPILER_SPEC_SPECLIMITS_H
