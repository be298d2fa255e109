//===- SortPlan.cpp - The MoE sorting kernels' plan and rules -------------===//

#include "templates/sort/SortPlan.h"

#include "templates/TargetSupport.h"

#include <algorithm>

namespace moegen {

std::string sortCountKernelSymbol(const SortPlan &plan) {
  return "moe_sort_count_e" + std::to_string(plan.experts) + "_k" + std::to_string(plan.topk);
}

std::string sortScanKernelSymbol(const SortPlan &plan) {
  return "moe_sort_scan_e" + std::to_string(plan.experts);
}

std::string sortKernelSymbol(const SortPlan &plan) {
  return "moe_sort_e" + std::to_string(plan.experts) + "_k" + std::to_string(plan.topk) + "_bm" +
         std::to_string(plan.blockM) +
         (plan.stageReadyCount ? "_ready" + std::to_string(plan.stageReadyCount) : "");
}

SortPlan planSort(const MoeSpec &spec, const TargetInfo &target, ScheduleIssues &issues) {
  SortPlan p;
  p.blockM = spec.stage1.tileM; // one sorted block is one stage-1 M tile
  p.experts = spec.problem.experts;
  p.topk = spec.problem.topk;
  p.stageReadyCount = stageReadyCount(spec, target);
  const int64_t chunkEntries =
      target.isNvptx() ? SortPlan::kNvptxChunkEntries : SortPlan::kChunkEntries;
  p.chunkTokens = std::max<int64_t>(1, chunkEntries / std::max<int64_t>(1, p.topk));
  p.singleEntries = target.isNvptx() ? chunkEntries : SortPlan::kSingleEntries;
  p.waveSize = target.waveSize;
  p.scanThreads = target.waveSize;
  // The lone wave's loop runs once per expert present: a wave of entries
  // where there are at most half a wave of experts, else half a wave.
  p.tinyEntries = p.experts <= target.waveSize / 2 ? target.waveSize : target.waveSize / 2;
  // One histogram and one owner row per wave: a layer with many experts
  // keeps fewer waves. On sm_90a down to two within the 48 KiB a kernel may
  // declare statically (Kimi's 896 experts: 4 warps, measured faster than 16
  // warps in dynamic shared memory), and beyond that the two warps' rows are
  // dynamic shared memory, up to the 227 KiB of a block.
  const int64_t limit = target.ldsBytes;
  if (target.isNvptx())
    while (p.threads > SortPlan::kMinNvptxThreads && p.scatterLdsBytes() > target.staticLdsBytes)
      p.threads /= 2;
  p.dynamicShared = target.isNvptx() && p.scatterLdsBytes() > target.staticLdsBytes;
  if (p.blockM <= 0 || p.blockM % SortPlan::kBlockMMultiple != 0)
    issues.push_back({KernelFamily::Sort, "block_m",
                      "block_m=stage1 tile_m=" + std::to_string(p.blockM) +
                          " must be a positive multiple of " +
                          std::to_string(SortPlan::kBlockMMultiple)});
  if (p.topk > 255)
    issues.push_back({KernelFamily::Sort, "topk",
                      "topk=" + std::to_string(p.topk) + " does not fit the 8-bit slot field"});
  if (p.scatterLdsBytes() > limit)
    issues.push_back({KernelFamily::Sort, "lds",
                      "experts=" + std::to_string(p.experts) + " need " +
                          std::to_string(p.scatterLdsBytes()) + " bytes of LDS, over the " +
                          std::to_string(limit) + "-byte limit of " + target.chip + " (at most " +
                          std::to_string(p.maxExperts(limit)) + " experts with " +
                          std::to_string(p.threads) + " threads)"});
  return p;
}

KernelSignature sortCountKernelSignature(llvm::StringRef symbol, const SortPlan &plan) {
  using K = KernelArgKind;
  return {symbol.str(),
          {{"topk_ids", K::Pointer}, {"chunk_counts", K::Pointer}, {"tokens", K::I32}},
          plan.threads};
}

KernelSignature sortScanKernelSignature(llvm::StringRef symbol, const SortPlan &plan) {
  using K = KernelArgKind;
  return {symbol.str(),
          {{"chunk_counts", K::Pointer}, {"expert_totals", K::Pointer}, {"tokens", K::I32}},
          plan.scanThreads};
}

KernelSignature sortKernelSignature(llvm::StringRef symbol, const SortPlan &plan) {
  using K = KernelArgKind;
  KernelSignature sig{symbol.str(),
                      {{"topk_ids", K::Pointer},
                       {"topk_weights", K::Pointer},
                       {"chunk_counts", K::Pointer},
                       {"expert_totals", K::Pointer},
                       {"sorted_ids", K::Pointer},
                       {"sorted_weights", K::Pointer},
                       {"sorted_experts", K::Pointer},
                       {"num_valid_ids", K::Pointer}},
                      plan.threads,
                      plan.dynamicShared ? plan.scatterLdsBytes() : 0};
  if (plan.stageReadyCount)
    sig.args.push_back({"stage_ready", K::Pointer});
  sig.args.push_back({"tokens", K::I32});
  return sig;
}

} // namespace moegen
