//===- LayerKernels.cpp - The kernels that implement a layer --------------===//

#include "templates/LayerKernels.h"

#include "templates/finish/FinishKernel.h"
#include "templates/gemm/GemmKernel.h"
#include "templates/sort/SortKernel.h"

namespace moegen {

std::vector<PlannedKernel> planLayerKernels(const MoeSpec &spec, const TargetInfo &target,
                                            ScheduleIssues &issues) {
  std::vector<PlannedKernel> kernels;
  SortPlan sort = planSort(spec, target, issues);
  kernels.push_back({"sort", sortKernelSignature(sortKernelSymbol(sort), sort)});
  for (StageId stage : {StageId::Stage1, StageId::Stage2}) {
    GemmPlan plan = planGemm(spec, stage, target, issues);
    kernels.push_back({toString(stage).str(),
                       gemmKernelSignature(gemmKernelSymbol(spec, plan), spec, plan)});
    // Split-K partial sums of stage 1 are finished by their own kernel.
    if (stage == StageId::Stage1 && spec.stage1.kBatch > 1)
      kernels.push_back({"finish", finishKernelSignature(finishKernelSymbol(spec))});
  }
  return kernels;
}

mlir::gpu::GPUFuncOp buildLayerKernel(mlir::ImplicitLocOpBuilder &b,
                                      mlir::gpu::GPUModuleOp module, const MoeSpec &spec,
                                      const TargetInfo &target, const PlannedKernel &k) {
  ScheduleIssues issues; // verified before: planning again cannot fail
  if (k.family == "sort")
    return buildSortKernel(b, module, k.signature.symbol, planSort(spec, target, issues));
  if (k.family == "finish")
    return buildFinishKernel(b, module, k.signature.symbol, spec);
  if (k.family == "stage1" || k.family == "stage2") {
    StageId stage = k.family == "stage1" ? StageId::Stage1 : StageId::Stage2;
    return buildGemmKernel(b, module, k.signature.symbol, spec,
                           planGemm(spec, stage, target, issues));
  }
  return nullptr;
}

} // namespace moegen
