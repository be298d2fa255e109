//===- StageTolerance.cpp - How close a kernel stage must come ------------===//

#include "runtime/numerics/StageTolerance.h"

#include <algorithm>
#include <cmath>

namespace moegen::num {

CompareOptions stageTolerance(DType format, bool quantized) {
  CompareOptions o;
  if (!quantized) {
    // bf16 output: one rounding (2^-8 relative) plus f32 accumulation order
    // and the activation's hardware exp/rcp.
    o.rtol = 2e-2;
    o.atol = 1e-3;
    o.maxMismatch = 1e-3;
    o.maxCosineDiff = 1e-4;
    return o;
  }
  // A quantized output can land one code away when the value before
  // rounding sits at a rounding boundary: allow it on a small fraction.
  bool fp4 = format == DType::MXFP4;
  o.rtol = fp4 ? 0.34 : 0.13;
  o.atol = 1e-6;
  o.maxMismatch = 2e-2;
  o.maxCosineDiff = fp4 ? 1e-2 : 1e-3;
  return o;
}

CompareOptions layerTolerance(const MoeSpec &spec) {
  bool fused = spec.stage1.fusedQuant != FusedQuant::None;
  DType inter = spec.formats.activation;
  CompareOptions tol = stageTolerance(inter, fused);
  tol.maxCosineDiff = fused ? (inter == DType::MXFP4 ? 1e-2 : 1e-3) : 1e-4;
  tol.rtol = fused ? 0.25 : 5e-2;
  tol.atol = 1e-2;
  tol.maxMismatch = 5e-2;
  return tol;
}

CompareOptions stage2Tolerance(bool atomic, int64_t topk, const HostTensor &perSlot) {
  CompareOptions tol = stageTolerance(DType::BF16, false);
  if (!atomic)
    return tol;
  double largest = 0;
  for (float v : decode(perSlot))
    largest = std::max(largest, std::fabs(double(v)));
  tol.atol = std::max(tol.atol, topk * std::ldexp(largest, -8));
  return tol;
}

} // namespace moegen::num
