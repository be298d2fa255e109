//===- LayerRules.cpp - Every rule of every kernel of a layer -------------===//

#include "templates/LayerRules.h"

#include "templates/LayerPlan.h"
#include "templates/TargetSupport.h"
#include "templates/gemm/GemmPlan.h"

#include "templates/quant/QuantPlan.h"
#include "templates/reduce/ReducePlan.h"
#include "templates/sort/SortPlan.h"
#include "llvm/ADT/STLExtras.h"

namespace moegen {

ScheduleIssues checkLayer(const MoeSpec &spec, const TargetInfo &target,
                          llvm::ArrayRef<KernelFamily> families) {
  ScheduleIssues issues;
  planSort(spec, target, issues);
  planGemm(spec, StageId::Stage1, target, issues);
  planGemm(spec, StageId::Stage2, target, issues);
  planInputQuant(spec, target, issues);
  planInterQuant(spec, target, issues);
  planReduce(spec, target, issues);
  ScheduleIssues replanned; // the same issues again
  for (const PlannedKernel &k : planLayerKernels(spec, target, replanned)) {
    if (!families.empty() && !llvm::is_contained(families, k.family))
      continue;
    if (!hasTemplateFor(k.family, target))
      issues.push_back({k.family, "target",
                        "kernel family '" + toString(k.family).str() + "' has no " + target.chip +
                            " template yet (" + target.chip +
                            " has: " + familiesWithTemplates(target) + ")"});
  }
  return issues;
}

llvm::Error verifyLayerRules(const MoeSpec &spec, const TargetInfo &target,
                             llvm::ArrayRef<KernelFamily> families) {
  std::string text;
  for (const ScheduleIssue &issue : checkLayer(spec, target, families)) {
    std::string stage = toString(servedStage(issue.family)).str();
    auto it = spec.locations.find(stage);
    if (!text.empty())
      text += "\n";
    if (it != spec.locations.end())
      text += it->second.file + ":" + std::to_string(it->second.line) + ":" +
              std::to_string(it->second.col);
    else
      text += spec.name + "." + stage;
    text += ": error: " + issue.str();
  }
  if (text.empty())
    return llvm::Error::success();
  return llvm::createStringError(llvm::inconvertibleErrorCode(), text);
}

} // namespace moegen
