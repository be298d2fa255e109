//===- LayerCheck.h - Run a compiled layer and check every stage -*- C++ -*-===//
//
// Runs the kernels of a compiled layer on a backend (sort -> stage 1 ->
// stage 2) with deterministic inputs, and compares each stage, decode-first,
// with the reference built from the same spec:
//   sort    exact (ids, weights, expert ids, num_valid_ids)
//   stage1  against the reference stage 1
//   stage2  against the reference stage 2 applied to the kernel's own stage-1
//           output (so the stage is judged alone)
//   layer   the kernels' output against the reference layer
// Tolerances derive from the formats (stageTolerance). This is what
// `moegen run` and the kernel test matrix use.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_CHECK_LAYERCHECK_H
#define MOEGEN_RUNTIME_CHECK_LAYERCHECK_H

#include "compiler/Compiler.h"
#include "runtime/backend/Backend.h"
#include "runtime/numerics/Compare.h"

namespace moegen {

struct LayerCheckOptions {
  int64_t tokens = 16;
  uint64_t seed = 0;
};

struct StageCheck {
  std::string stage; // "sort", "stage1", "stage2", "layer"
  num::CompareResult result;
  num::CompareOptions tolerance;
};

struct LayerCheckResult {
  std::vector<StageCheck> stages;
  bool passed() const;
  /// One line per stage: metrics and PASS/FAIL.
  std::string table() const;
};

/// The comparison tolerance of a stage output in `format` (what one rounding
/// step of the format, plus f32 accumulation-order noise, can explain).
num::CompareOptions stageTolerance(DType format, bool quantized);

llvm::Expected<LayerCheckResult> runLayerCheck(const MoeSpec &spec, const CompiledLayer &layer,
                                               runtime::Backend &backend,
                                               const LayerCheckOptions &options);

} // namespace moegen

#endif // MOEGEN_RUNTIME_CHECK_LAYERCHECK_H
