//===- LayerCheck.h - Run a layer and check every stage ---------*- C++ -*-===//
//
// Runs a layer the way a host application does -- compiled by the runtime's
// JIT, launched by MoeLayer::run with the spec's schedules -- on
// deterministic inputs, then reads every intermediate back through the
// workspace layout and compares it, decode-first, with the reference built
// from the same spec:
//   sort    exact (ids, weights, expert ids, num_valid_ids)
//   quant1  exact (MX activations: the host quantization of the input)
//   stage1  against the reference stage 1
//   quant2  exact (the host quantization of the kernels' stage-1 output)
//   stage2  against the reference stage 2 applied to the kernels' stage-2
//           input (so the stage is judged alone)
//   layer   the kernels' output against the reference layer
// Tolerances derive from the formats (stageTolerance). This is what
// `moegen run`, the kernel test matrix and the schedule property test use.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_CHECK_LAYERCHECK_H
#define MOEGEN_RUNTIME_CHECK_LAYERCHECK_H

#include "compiler/spec/Spec.h"
#include "runtime/backend/Backend.h"
#include "runtime/numerics/Compare.h"
#include "runtime/numerics/InputGen.h"
#include "runtime/numerics/StageTolerance.h"

#include <memory>

namespace moegen {
namespace runtime {
class KernelSource;
} // namespace runtime

struct LayerCheckOptions {
  int64_t tokens = 16;
  uint64_t seed = 0;
  /// When set, the inputs are read from this directory as `moegen ref`
  /// writes them (hidden, a1, topk_ids, topk_weights, w1, w2) instead of
  /// being generated; the token count comes from the files.
  std::string inputsDir;
  /// The device's CU count the layer launches for (LayerOptions::cuNum):
  /// small values make the GEMMs' persistent grids loop over many M tiles.
  int64_t cuNum = 256;
  /// Fill the output and the workspace with 0xff bytes (NaN in bf16, f32
  /// and e8m0 scales) instead of zeros before the run: a value a kernel
  /// should write but does not then fails the comparison instead of
  /// passing as a zero. What the layer must clear it clears itself.
  bool poison = false;
  /// Where the layer's kernels come from; null: the JIT, memory cache only.
  std::shared_ptr<runtime::KernelSource> kernels;
};

/// Reads the inputs `moegen ref` wrote into `dir` and checks their shapes and
/// formats against the spec; errors name the file and the mismatch.
llvm::Expected<num::LayerInputs> readLayerInputs(const MoeSpec &spec, llvm::StringRef dir);

struct StageCheck {
  std::string stage; // "sort", "stage1", "stage2", "layer"
  num::CompareResult result;
  num::CompareOptions tolerance;
};

struct LayerCheckResult {
  int64_t tokens = 0;
  std::vector<StageCheck> stages;
  bool passed() const;
  /// One line per stage: metrics and PASS/FAIL.
  std::string table() const;
};

/// The stage tolerances live with the comparison (runtime/numerics), so that
/// checks without MLIR use them too.
using num::layerTolerance;
using num::stageTolerance;

/// Compiles `spec` (memory cache only), runs it on `backend` and checks every
/// stage. Errors: the inputs, compilation, or a kernel fault on the backend.
llvm::Expected<LayerCheckResult> runLayerCheck(const MoeSpec &spec, runtime::Backend &backend,
                                               const LayerCheckOptions &options);

} // namespace moegen

#endif // MOEGEN_RUNTIME_CHECK_LAYERCHECK_H
