//===- Floor.cpp - The mxfp4 floor of a MoE layer on an H200 --------------===//

#include "bench/h200/Floor.h"

namespace moegen::bench {

Floor mxfp4Floor(const Problem &p, int64_t tokens, double expertsHit) {
  const double D = double(p.modelDim), I = double(p.interDim), M = double(tokens),
               k = double(p.topk);
  Floor f;
  const double weights = expertsHit * 3 * I * D * kMxfp4BytesPerElement; // w1 (2I x D) + w2
  const double activations = 2 * M * D * 2;                              // x in, out
  const double intermediate = 2 * M * k * I * 2;                         // written, read back
  f.bytes = weights + activations + intermediate;
  f.flops = 2 * M * k * 3 * I * D;
  f.bandwidthUs = f.bytes / kCopyBytesPerSecond * 1e6;
  f.computeUs = f.flops / kBf16FlopsPerSecond * 1e6;
  return f;
}

} // namespace moegen::bench
