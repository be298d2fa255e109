//===- Floor.h - The mxfp4 floor of a MoE layer on an H200 ------*- C++ -*-===//
//
// The least time a whole MoE call can take with mxfp4 weights on an H200, as
// shared/design/PEERS-H200.md defines it: the bytes the call must move (the
// weights of the distinct experts its tokens hit, 0.53 B per element with the
// e8m0 scales; x in and the output, bf16; the 2-stage intermediate, bf16,
// written and read back) over the measured copy bandwidth, or its FLOPs
// (2 * tokens * topk * 3 * inter_dim * model_dim) over the measured bf16
// dense rate (Hopper has no fp4 MMA), whichever is longer.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_BENCH_H200_FLOOR_H
#define MOEGEN_BENCH_H200_FLOOR_H

#include "compiler/spec/Spec.h"

namespace moegen::bench {

/// Measured on the H200 of PEERS-H200.md (best of two runs).
constexpr double kCopyBytesPerSecond = 4278e9; // device-to-device copy, read + write counted
constexpr double kBf16FlopsPerSecond = 794e12; // bf16 8192^3 matmul
constexpr double kMxfp4BytesPerElement = 0.53; // 0.5 B fp4 + 1 B e8m0 per 32, rounded up

struct Floor {
  double bytes = 0, flops = 0;
  double bandwidthUs = 0, computeUs = 0;
  double us() const { return bandwidthUs > computeUs ? bandwidthUs : computeUs; }
  bool computeBound() const { return computeUs > bandwidthUs; }
};

/// The floor of one call on `tokens` tokens whose routing hits `expertsHit`
/// distinct experts (a mean over calls may be fractional).
Floor mxfp4Floor(const Problem &p, int64_t tokens, double expertsHit);

} // namespace moegen::bench

#endif // MOEGEN_BENCH_H200_FLOOR_H
