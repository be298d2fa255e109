//===- StageTolerance.h - How close a kernel stage must come ----*- C++ -*-===//
//
// The tolerances a stage output is compared with against the reference
// (Compare.h), derived from the formats: what one rounding step of the output
// format, plus f32 accumulation-order noise, can explain. Shared by every
// check that runs kernels (runtime/check, tools/cuda-check). MLIR-free.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_NUMERICS_STAGETOLERANCE_H
#define MOEGEN_RUNTIME_NUMERICS_STAGETOLERANCE_H

#include "compiler/spec/Spec.h"
#include "runtime/numerics/Compare.h"

namespace moegen::num {

/// The comparison tolerance of a stage output in `format` (quantized: an MX
/// output that may land one code away; else bf16).
CompareOptions stageTolerance(DType format, bool quantized);

/// The tolerance of the whole layer's output: a quantized intermediate may
/// land a code away, so the bound is the intermediate format's.
CompareOptions layerTolerance(const MoeSpec &spec);

/// Stage 2's tolerance for its bf16 output. With reduce = atomic the
/// contributions are added in an order the hardware picks into a bf16, so each
/// of the topk additions may round differently by half an ulp of the largest
/// contribution (max |value| of `perSlot`, the reference's contributions).
CompareOptions stage2Tolerance(bool atomic, int64_t topk, const HostTensor &perSlot);

} // namespace moegen::num

#endif // MOEGEN_RUNTIME_NUMERICS_STAGETOLERANCE_H
