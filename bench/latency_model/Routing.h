//===- Routing.h - Expected shape of the sorted rows ------------*- C++ -*-===//
//
// The model's routing assumption: each token picks topk distinct experts
// uniformly at random (aiter's tuner draws random router scores), so each
// expert receives Binomial(tokens, topk/experts) rows. From that, the
// expected number of experts with rows and of sorted blocks of block_m rows
// (what the stage kernels' grids actually work on).
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_BENCH_LATENCY_MODEL_ROUTING_H
#define MOEGEN_BENCH_LATENCY_MODEL_ROUTING_H

#include <cstdint>

namespace moegen::latency {

struct Routing {
  double activeExperts = 0; // experts with at least one row
  double activeBlocks = 0;  // sorted blocks holding rows
  int64_t blocks() const { return static_cast<int64_t>(activeBlocks + 0.999); }
};

Routing expectedRouting(int64_t tokens, int64_t topk, int64_t experts, int64_t blockM);

} // namespace moegen::latency

#endif // MOEGEN_BENCH_LATENCY_MODEL_ROUTING_H
