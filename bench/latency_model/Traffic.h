//===- Traffic.h - Bytes each kernel must move through HBM ------*- C++ -*-===//
//
// The bandwidth floor's numerator per kernel family, counting each tensor
// once (re-reads are assumed to hit L2): the weights of the experts with
// rows, the activations of the sorted rows, the outputs, partials and
// per-slot rows the kernel writes, and the scales (one byte per 32 MX
// elements).
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_BENCH_LATENCY_MODEL_TRAFFIC_H
#define MOEGEN_BENCH_LATENCY_MODEL_TRAFFIC_H

#include "bench/latency_model/Routing.h"

#include "compiler/spec/KernelFamily.h"
#include "compiler/spec/Spec.h"

namespace moegen::latency {

double kernelBytes(KernelFamily family, const MoeSpec &spec, int64_t tokens, const Routing &r);

} // namespace moegen::latency

#endif // MOEGEN_BENCH_LATENCY_MODEL_TRAFFIC_H
