//===- ReducePlan.cpp - The stage-2 top-k reduction kernel's plan ---------===//

#include "templates/reduce/ReducePlan.h"

namespace moegen {

std::string reduceKernelSymbol(const ReducePlan &plan) {
  return "moe_reduce_k" + std::to_string(plan.topk) + "_c" + std::to_string(plan.cols);
}

void checkReducePlan(const ReducePlan &plan, const TargetInfo &target, ScheduleIssues &issues) {
  if (plan.cols <= 0 || plan.cols % ReducePlan::kVector != 0)
    issues.push_back({KernelFamily::Stage2, "reduce",
                      "reduce mode needs model_dim=" + std::to_string(plan.cols) +
                          " to be a multiple of " + std::to_string(ReducePlan::kVector)});
  if (plan.topk < 1)
    issues.push_back(
        {KernelFamily::Stage2, "topk", "topk=" + std::to_string(plan.topk) + " must be >= 1"});
  if (plan.threads <= 0 || plan.threads % target.waveSize != 0 ||
      plan.threads > target.maxThreadsPerWorkgroup)
    issues.push_back({KernelFamily::Stage2, "threads",
                      "reduction workgroup of " + std::to_string(plan.threads) +
                          " threads is not a whole number of waves within " +
                          std::to_string(target.maxThreadsPerWorkgroup)});
}

std::optional<ReducePlan> planReduce(const MoeSpec &spec, const TargetInfo &target,
                                     ScheduleIssues &issues) {
  if (spec.stage2.reduce != ReduceMode::Reduce)
    return std::nullopt;
  ReducePlan p;
  p.cols = spec.problem.modelDim;
  p.topk = spec.problem.topk;
  p.experts = spec.problem.experts;
  if (spec.formats.output != DType::BF16)
    issues.push_back(
        {KernelFamily::Stage2, "formats",
         "reduce mode writes bf16 output, not " + toString(spec.formats.output).str()});
  checkReducePlan(p, target, issues);
  return p;
}

KernelSignature reduceKernelSignature(llvm::StringRef symbol, const ReducePlan &plan) {
  using K = KernelArgKind;
  return {symbol.str(),
          {{"slot_rows", K::Pointer},
           {"topk_ids", K::Pointer},
           {"out", K::Pointer},
           {"tokens", K::I32}},
          plan.threads};
}

} // namespace moegen
