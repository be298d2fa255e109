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

} // namespace moegen
