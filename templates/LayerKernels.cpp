//===- LayerKernels.cpp - Builds the kernels of a layer -------------------===//

#include "templates/LayerKernels.h"

#include "templates/TargetSupport.h"

#include "templates/finish/FinishKernel.h"
#include "templates/gemm/GemmKernel.h"
#include "templates/gemm/Sm90GemmKernel.h"
#include "templates/quant/QuantKernel.h"
#include "templates/reduce/ReduceKernel.h"
#include "templates/sort/SortKernel.h"

namespace moegen {

mlir::gpu::GPUFuncOp buildLayerKernel(mlir::ImplicitLocOpBuilder &b, mlir::gpu::GPUModuleOp module,
                                      const MoeSpec &spec, const TargetInfo &target,
                                      const PlannedKernel &k) {
  ScheduleIssues issues; // verified before: planning again cannot fail
  const std::string &symbol = k.signature.symbol;
  // moe-verify-schedule refuses a family without a template for the target;
  // reaching here with one is a caller's bug, not a kernel to build.
  if (!hasTemplateFor(k.family, target)) {
    mlir::emitError(b.getLoc()) << "kernel family '" << toString(k.family) << "' has no "
                                << target.chip << " template";
    return nullptr;
  }
  switch (k.family) {
  case KernelFamily::SortCount:
    return buildSortCountKernel(b, module, symbol, planSort(spec, target, issues));
  case KernelFamily::SortScan:
    return buildSortScanKernel(b, module, symbol, planSort(spec, target, issues), target);
  case KernelFamily::Sort:
    return buildSortKernel(b, module, symbol, planSort(spec, target, issues), target);
  case KernelFamily::QuantInput:
    return buildQuantKernel(b, module, symbol, *planInputQuant(spec, target, issues), target);
  case KernelFamily::QuantInter:
    return buildQuantKernel(b, module, symbol, *planInterQuant(spec, target, issues), target);
  case KernelFamily::Reduce:
    return buildReduceKernel(b, module, symbol, *planReduce(spec, target, issues));
  case KernelFamily::Finish:
    return buildFinishKernel(b, module, symbol, spec, target);
  case KernelFamily::Stage1:
  case KernelFamily::Stage2: {
    StageId stage = k.family == KernelFamily::Stage1 ? StageId::Stage1 : StageId::Stage2;
    GemmPlan plan = planGemm(spec, stage, target, issues);
    // sm_90a: mma.sync on operands dequantized to bf16 (Sm90GemmKernel.h).
    if (target.isNvptx())
      return buildSm90GemmKernel(b, module, symbol, spec, plan, target);
    return buildGemmKernel(b, module, symbol, spec, plan, target);
  }
  }
  return nullptr;
}

} // namespace moegen
