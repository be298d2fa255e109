//===- LayerKernels.cpp - The kernels that implement a layer --------------===//

#include "templates/LayerKernels.h"

#include "templates/finish/FinishKernel.h"
#include "templates/gemm/GemmKernel.h"
#include "templates/quant/QuantKernel.h"
#include "templates/reduce/ReduceKernel.h"
#include "templates/sort/SortKernel.h"

namespace moegen {

std::vector<PlannedKernel> planLayerKernels(const MoeSpec &spec, const TargetInfo &target,
                                            ScheduleIssues &issues) {
  // In launch order: sort -> (input quant) -> stage1 -> (finish) -> (inter
  // quant) -> stage2 -> (reduce).
  std::vector<PlannedKernel> kernels;
  SortPlan sort = planSort(spec, target, issues);
  kernels.push_back({"sort", sortKernelSignature(sortKernelSymbol(sort), sort)});
  if (auto q = planInputQuant(spec, target, issues))
    kernels.push_back({"quant_input", quantKernelSignature(quantKernelSymbol(*q), *q)});
  GemmPlan stage1 = planGemm(spec, StageId::Stage1, target, issues);
  kernels.push_back({"stage1", gemmKernelSignature(gemmKernelSymbol(spec, stage1), spec, stage1)});
  // Split-K partial sums of stage 1 are finished by their own kernel.
  if (spec.stage1.kBatch > 1)
    kernels.push_back({"finish", finishKernelSignature(finishKernelSymbol(spec))});
  if (auto q = planInterQuant(spec, target, issues))
    kernels.push_back({"quant_inter", quantKernelSignature(quantKernelSymbol(*q), *q)});
  GemmPlan stage2 = planGemm(spec, StageId::Stage2, target, issues);
  kernels.push_back({"stage2", gemmKernelSignature(gemmKernelSymbol(spec, stage2), spec, stage2)});
  if (auto r = planReduce(spec, target, issues))
    kernels.push_back({"reduce", reduceKernelSignature(reduceKernelSymbol(*r), *r)});
  return kernels;
}

llvm::StringRef ownerFamily(llvm::StringRef family) {
  if (family == "quant_input" || family == "finish" || family == "sort")
    return "stage1";
  if (family == "quant_inter" || family == "reduce")
    return "stage2";
  return family;
}

mlir::gpu::GPUFuncOp buildLayerKernel(mlir::ImplicitLocOpBuilder &b, mlir::gpu::GPUModuleOp module,
                                      const MoeSpec &spec, const TargetInfo &target,
                                      const PlannedKernel &k) {
  ScheduleIssues issues; // verified before: planning again cannot fail
  if (k.family == "sort")
    return buildSortKernel(b, module, k.signature.symbol, planSort(spec, target, issues));
  if (k.family == "quant_input")
    return buildQuantKernel(b, module, k.signature.symbol, *planInputQuant(spec, target, issues));
  if (k.family == "quant_inter")
    return buildQuantKernel(b, module, k.signature.symbol, *planInterQuant(spec, target, issues));
  if (k.family == "reduce")
    return buildReduceKernel(b, module, k.signature.symbol, *planReduce(spec, target, issues));
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
