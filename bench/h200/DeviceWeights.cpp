//===- DeviceWeights.cpp - Every expert's weights, on the device ----------===//

#include "bench/h200/DeviceWeights.h"

#include "runtime/numerics/ExpertSubset.h"
#include "runtime/numerics/InputGen.h"

#include <numeric>

namespace moegen::bench {

bool DeviceWeights::serves(const MoeSpec &other) const {
  const Problem &a = spec.problem, &b = other.problem;
  return a.modelDim == b.modelDim && a.interDim == b.interDim && a.experts == b.experts &&
         a.gateUp == b.gateUp && spec.formats.weight == other.formats.weight;
}

llvm::Expected<std::unique_ptr<DeviceWeights>> uploadWeights(const MoeSpec &spec,
                                                             runtime::Backend &backend) {
  auto w = std::make_unique<DeviceWeights>(backend);
  w->spec = spec;
  num::GenOptions gen;
  gen.seed = 42;
  auto in = num::generateInputs(spec, /*tokens=*/1, gen); // every expert's weights
  if (!in)
    return in.takeError();
  w->w1 = std::move(in->w1);
  w->w2 = std::move(in->w2);
  const num::PackedSizes sizes = num::packedSizes(spec);
  for (auto [field, bytes] : {std::pair{&w->w1Dev, sizes.w1},
                              {&w->w1Scale, sizes.w1Scale},
                              {&w->w2Dev, sizes.w2},
                              {&w->w2Scale, sizes.w2Scale}}) {
    auto p = w->arena.alloc(bytes, /*zero=*/true);
    if (!p)
      return p.takeError();
    *field = *p;
    w->deviceBytes += bytes;
  }
  std::vector<int32_t> all(spec.problem.experts);
  std::iota(all.begin(), all.end(), 0);
  auto sink = [&](num::PackedBuffer which, int64_t offset,
                  llvm::ArrayRef<uint8_t> bytes) -> llvm::Error {
    runtime::DevicePtr base = which == num::PackedBuffer::W1        ? w->w1Dev
                              : which == num::PackedBuffer::W1Scale ? w->w1Scale
                              : which == num::PackedBuffer::W2      ? w->w2Dev
                                                                    : w->w2Scale;
    return backend.copyToDevice(base + offset, bytes.data(), bytes.size());
  };
  if (llvm::Error e = num::packExperts(spec, w->w1, w->w2, all, sink))
    return std::move(e);
  return w;
}

} // namespace moegen::bench
