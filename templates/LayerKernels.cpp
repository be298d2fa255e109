//===- LayerKernels.cpp - Builds the kernels of a layer -------------------===//

#include "templates/LayerKernels.h"

#include "templates/finish/FinishKernel.h"
#include "templates/gemm/GemmKernel.h"
#include "templates/quant/QuantKernel.h"
#include "templates/reduce/ReduceKernel.h"
#include "templates/sort/SortKernel.h"

namespace moegen {

mlir::gpu::GPUFuncOp buildLayerKernel(mlir::ImplicitLocOpBuilder &b, mlir::gpu::GPUModuleOp module,
                                      const MoeSpec &spec, const TargetInfo &target,
                                      const PlannedKernel &k) {
  ScheduleIssues issues; // verified before: planning again cannot fail
  const std::string &symbol = k.signature.symbol;
  switch (k.family) {
  case KernelFamily::SortCount:
    return buildSortCountKernel(b, module, symbol, planSort(spec, target, issues));
  case KernelFamily::SortScan:
    return buildSortScanKernel(b, module, symbol, planSort(spec, target, issues));
  case KernelFamily::Sort:
    return buildSortKernel(b, module, symbol, planSort(spec, target, issues));
  case KernelFamily::QuantInput:
    return buildQuantKernel(b, module, symbol, *planInputQuant(spec, target, issues));
  case KernelFamily::QuantInter:
    return buildQuantKernel(b, module, symbol, *planInterQuant(spec, target, issues));
  case KernelFamily::Reduce:
    return buildReduceKernel(b, module, symbol, *planReduce(spec, target, issues));
  case KernelFamily::Finish:
    return buildFinishKernel(b, module, symbol, spec);
  case KernelFamily::Stage1:
    return buildGemmKernel(b, module, symbol, spec,
                           planGemm(spec, StageId::Stage1, target, issues));
  case KernelFamily::Stage2:
    return buildGemmKernel(b, module, symbol, spec,
                           planGemm(spec, StageId::Stage2, target, issues));
  }
  return nullptr;
}

} // namespace moegen
