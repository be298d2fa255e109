//===- DeviceWeights.h - Every expert's weights, on the device --*- C++ -*-===//
//
// The timed calls read the weights of whatever experts their tokens route
// to, so every expert of the layer is generated (num::generateInputs' weights:
// w1 N(0,1) x 0.1, w2 N(0,1), quantized with RoundUp scales; seed 42),
// packed in the kernels' layouts and uploaded once. The host copy stays for
// the reference. Layers of the same expert shape and weight format (the
// three Kimi-K3 layers) share them.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_BENCH_H200_DEVICEWEIGHTS_H
#define MOEGEN_BENCH_H200_DEVICEWEIGHTS_H

#include "compiler/spec/Spec.h"
#include "runtime/backend/Backend.h"
#include "runtime/check/DeviceArena.h"
#include "runtime/numerics/Tensor.h"

#include <memory>

namespace moegen::bench {

struct DeviceWeights {
  explicit DeviceWeights(runtime::Backend &b) : arena(b) {}
  /// Whether `spec`'s layer reads these weights (same sizes, gate/up layout
  /// and weight format).
  bool serves(const MoeSpec &spec) const;

  MoeSpec spec;           // the layer they were made for
  num::HostTensor w1, w2; // [E, 2I, K], [E, K, I], every expert
  runtime::DevicePtr w1Dev = 0, w1Scale = 0, w2Dev = 0, w2Scale = 0;
  size_t deviceBytes = 0;
  DeviceArena arena;
};

llvm::Expected<std::unique_ptr<DeviceWeights>> uploadWeights(const MoeSpec &spec,
                                                             runtime::Backend &backend);

} // namespace moegen::bench

#endif // MOEGEN_BENCH_H200_DEVICEWEIGHTS_H
