//===- LayerRules.cpp - Every rule of every kernel of a layer -------------===//

#include "templates/LayerRules.h"

#include "templates/gemm/GemmPlan.h"
#include "templates/quant/QuantPlan.h"
#include "templates/reduce/ReducePlan.h"
#include "templates/sort/SortPlan.h"

namespace moegen {

ScheduleIssues checkLayer(const MoeSpec &spec, const TargetInfo &target) {
  ScheduleIssues issues;
  planSort(spec, target, issues);
  planGemm(spec, StageId::Stage1, target, issues);
  planGemm(spec, StageId::Stage2, target, issues);
  planInputQuant(spec, target, issues);
  planInterQuant(spec, target, issues);
  planReduce(spec, target, issues);
  return issues;
}

llvm::Error verifyLayerRules(const MoeSpec &spec, const TargetInfo &target) {
  std::string text;
  for (const ScheduleIssue &issue : checkLayer(spec, target)) {
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
