//===- Plan.h - What moegen-bench-h200 runs ---------------------*- C++ -*-===//
//
// The method of shared/design/PEERS-H200.md, which the torch baseline
// (torch_baseline.py) follows too: token counts 1 ... 16384, and per count
// R input sets rotated within one CUDA graph (8 up to 64 tokens, else 2), so
// that a call does not find the previous call's experts in the 50 MB L2.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_BENCH_H200_PLAN_H
#define MOEGEN_BENCH_H200_PLAN_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace moegen::bench {

/// 1, 4, 16, 64, 256, 1024, 2048, 4096, 8192, 16384.
llvm::ArrayRef<int64_t> defaultTokenCounts();

/// The input sets of one timed graph at `tokens` tokens.
int64_t rotatedSets(int64_t tokens);

/// The layers timed by default (paths from the repository root): shape A
/// (Kimi-K3 TP8) a16w4, a4w4, a8w4; shape B (DeepSeek-V3 TP8, E=256 top-8)
/// a16w4, a4w4.
llvm::ArrayRef<const char *> defaultSpecs();

} // namespace moegen::bench

#endif // MOEGEN_BENCH_H200_PLAN_H
