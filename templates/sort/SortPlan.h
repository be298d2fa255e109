//===- SortPlan.h - The MoE sorting kernel's plan and rules -----*- C++ -*-===//
#ifndef MOEGEN_TEMPLATES_SORT_SORTPLAN_H
#define MOEGEN_TEMPLATES_SORT_SORTPLAN_H

#include "compiler/spec/Spec.h"
#include "compiler/spec/TargetInfo.h"
#include "templates/KernelSignature.h"
#include "templates/ScheduleIssue.h"

namespace moegen {

/// The sorting kernel runs as one workgroup: its threads own experts (expert
/// e belongs to thread e mod threads), count their experts' entries, one
/// thread turns the padded counts into segment offsets, and each thread then
/// writes its experts' segments in (token, slot) order. The output is
/// therefore deterministic and ordered like aiter's.
struct SortPlan {
  int64_t blockM = 0;
  int64_t experts = 0;
  int64_t topk = 0;
  int64_t threads = 256;
  int64_t ldsBytes = 0; // counts and offsets, one i32 each per expert

  /// Sizes of the outputs for `tokens` tokens (aiter's formulas).
  int64_t maxPaddedRows(int64_t tokens) const { return tokens * topk + experts * blockM - topk; }
  int64_t maxBlocks(int64_t tokens) const { return (maxPaddedRows(tokens) + blockM - 1) / blockM; }
};

/// The sorted-id sentinel of padding rows: token = M, slot = topk.
inline uint32_t sortSentinel(int64_t tokens, int64_t topk) {
  return (static_cast<uint32_t>(topk) << 24) | static_cast<uint32_t>(tokens);
}
/// The kernel's symbol, unique per plan: "moe_sort_e896_k16_bm32".
std::string sortKernelSymbol(const SortPlan &plan);
/// Arguments: topk_ids, topk_weights, sorted_ids, sorted_weights, sorted_experts,
/// num_valid_ids, tokens.
KernelSignature sortKernelSignature(llvm::StringRef symbol, const SortPlan &plan);

SortPlan planSort(const MoeSpec &spec, const TargetInfo &target, ScheduleIssues &issues);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_SORT_SORTPLAN_H
