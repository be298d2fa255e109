//===- LayerPlan.cpp - The kernels that implement a layer -----------------===//

#include "templates/LayerPlan.h"

#include "templates/finish/FinishPlan.h"
#include "templates/gemm/GemmPlan.h"
#include "templates/quant/QuantPlan.h"
#include "templates/reduce/ReducePlan.h"
#include "templates/sort/SortPlan.h"

namespace moegen {

std::vector<PlannedKernel> planLayerKernels(const MoeSpec &spec, const TargetInfo &target,
                                            ScheduleIssues &issues) {
  using F = KernelFamily;
  std::vector<PlannedKernel> kernels;
  SortPlan sort = planSort(spec, target, issues);
  kernels.push_back({F::SortCount, sortCountKernelSignature(sortCountKernelSymbol(sort), sort)});
  kernels.push_back({F::SortScan, sortScanKernelSignature(sortScanKernelSymbol(sort), sort)});
  kernels.push_back({F::Sort, sortKernelSignature(sortKernelSymbol(sort), sort)});
  if (auto q = planInputQuant(spec, target, issues))
    kernels.push_back({F::QuantInput, quantKernelSignature(quantKernelSymbol(*q), *q)});
  GemmPlan stage1 = planGemm(spec, StageId::Stage1, target, issues);
  kernels.push_back({F::Stage1, gemmKernelSignature(gemmKernelSymbol(spec, stage1), spec, stage1)});
  // Split-K partial sums of stage 1 are finished by their own kernel.
  if (spec.stage1.kBatch > 1)
    kernels.push_back({F::Finish, finishKernelSignature(finishKernelSymbol(spec))});
  if (auto q = planInterQuant(spec, target, issues))
    kernels.push_back({F::QuantInter, quantKernelSignature(quantKernelSymbol(*q), *q)});
  GemmPlan stage2 = planGemm(spec, StageId::Stage2, target, issues);
  kernels.push_back({F::Stage2, gemmKernelSignature(gemmKernelSymbol(spec, stage2), spec, stage2)});
  if (auto r = planReduce(spec, target, issues))
    kernels.push_back({F::Reduce, reduceKernelSignature(reduceKernelSymbol(*r), *r)});
  return kernels;
}

} // namespace moegen
