//===- SortPlan.cpp - The MoE sorting kernel's plan and rules -------------===//

#include "templates/sort/SortPlan.h"

namespace moegen {

std::string sortKernelSymbol(const SortPlan &plan) {
  return "moe_sort_e" + std::to_string(plan.experts) + "_k" + std::to_string(plan.topk) + "_bm" +
         std::to_string(plan.blockM);
}

SortPlan planSort(const MoeSpec &spec, const TargetInfo &target, ScheduleIssues &issues) {
  SortPlan p;
  p.blockM = spec.stage1.tileM; // one sorted block is one stage-1 M tile
  p.experts = spec.problem.experts;
  p.topk = spec.problem.topk;
  p.ldsBytes = 2 * 4 * p.experts;
  if (p.blockM <= 0 || (p.blockM & (p.blockM - 1)) != 0)
    issues.push_back(
        {KernelFamily::Sort, "block_m",
         "block_m=stage1 tile_m=" + std::to_string(p.blockM) + " must be a power of two"});
  if (p.topk > 255)
    issues.push_back({KernelFamily::Sort, "topk",
                      "topk=" + std::to_string(p.topk) + " does not fit the 8-bit slot field"});
  if (p.ldsBytes > target.ldsBytes)
    issues.push_back({KernelFamily::Sort, "lds",
                      "experts=" + std::to_string(p.experts) + " need " +
                          std::to_string(p.ldsBytes) + " bytes of LDS, over the " +
                          std::to_string(target.ldsBytes) + "-byte limit"});
  return p;
}

KernelSignature sortKernelSignature(llvm::StringRef symbol, const SortPlan &plan) {
  using K = KernelArgKind;
  return {symbol.str(),
          {{"topk_ids", K::Pointer},
           {"topk_weights", K::Pointer},
           {"sorted_ids", K::Pointer},
           {"sorted_weights", K::Pointer},
           {"sorted_experts", K::Pointer},
           {"num_valid_ids", K::Pointer},
           {"tokens", K::I32}},
          plan.threads};
}

} // namespace moegen
