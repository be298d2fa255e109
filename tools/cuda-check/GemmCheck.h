//===- GemmCheck.h - The GEMM stages of a layer on a CUDA device -*- C++ -*-===//
//
// Runs the stage-1 and stage-2 kernels of a layer (PTX from `moegen compile
// --target sm_90a --kernels stage1,stage2`) as MoeLayer launches them -- the
// grids and argument bindings of runtime/api/FamilyLaunchers, the workspace
// of LayerPlan -- on the reference's generated inputs (runtime/numerics:
// generateInputs, sortMoe, the packed weights), and compares the decoded
// outputs with the reference stages under the tolerances of
// runtime/numerics/StageTolerance:
//   stage1  the kernel's rows (and scales) against referenceStage1
//   stage2  the kernel's output against referenceStage2 applied to the
//           kernel's own stage-1 output (the stage judged alone)
// Outputs are poisoned (0xA5) before the launches; what MoeLayer clears
// (scales, the atomic output) is cleared. Above `sampleTokens` tokens, the
// reference (single-threaded f32) runs on that many evenly spaced tokens,
// whose rows are independent of the others.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TOOLS_CUDA_CHECK_GEMMCHECK_H
#define MOEGEN_TOOLS_CUDA_CHECK_GEMMCHECK_H

#include "compiler/spec/Spec.h"
#include "runtime/backend/Backend.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

namespace moegen {

struct GemmCheckOptions {
  std::vector<int64_t> tokens;
  uint64_t seed = 0;
  int64_t sampleTokens = 32;
  /// The device's SMs: the persistent grids are capped at this times
  /// kPersistentWorkgroupsPerCU, as LayerOptions::cuNum does.
  int64_t smCount = 132;
  /// Reads `<symbol>.ptx`, NUL-terminated.
  llvm::function_ref<llvm::Expected<std::vector<char>>(llvm::StringRef symbol)> readPtx;
  /// Microseconds per launch over repeated launches (0: not timed).
  llvm::function_ref<llvm::Expected<double>(llvm::function_ref<llvm::Error()> launch)> time;
};

struct GemmCheckSummary {
  int checked = 0; // (kernel, tokens) pairs run
  bool ok = true;
};

/// Checks the spec's stage1 and stage2 kernels whose PTX exists (the others
/// are listed as not checked), one line per (kernel, tokens) on `os`.
GemmCheckSummary checkGemmStages(runtime::Backend &backend, const MoeSpec &spec,
                                 const GemmCheckOptions &options, llvm::raw_ostream &os);

} // namespace moegen

#endif // MOEGEN_TOOLS_CUDA_CHECK_GEMMCHECK_H
