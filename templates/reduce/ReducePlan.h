//===- ReducePlan.h - The stage-2 top-k reduction kernel's plan -*- C++ -*-===//
//
// Reduce-mode stage 2 writes one bf16 row per (token, slot) with the top-k
// weight already applied; this kernel sums each token's topk rows in slot
// order in f32 and rounds once to bf16, so the result does not depend on
// scheduling. A (token, slot) pair whose router choice is outside
// [0, experts) is not routed (the sorting kernel drops it, so stage 2 never
// writes its row): the kernel reads topk_ids to skip those rows, which
// therefore need no zero-initialization.
//
// One thread owns 8 consecutive columns (one 16-byte load per slot); a
// workgroup covers `threads * 8` columns of one token.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEMPLATES_REDUCE_REDUCEPLAN_H
#define MOEGEN_TEMPLATES_REDUCE_REDUCEPLAN_H

#include "compiler/spec/Spec.h"
#include "compiler/spec/TargetInfo.h"
#include "templates/KernelSignature.h"
#include "templates/ScheduleIssue.h"

#include <array>
#include <optional>

namespace moegen {

struct ReducePlan {
  int64_t cols = 0; // K of the per-slot rows (model_dim)
  int64_t topk = 0;
  int64_t experts = 0; // router ids in [0, experts) are routed
  int64_t threads = 256;

  static constexpr int64_t kVector = 8; // bf16 columns per thread
  int64_t vectorsPerRow() const { return cols / kVector; }
  /// Workgroups along the columns of one token.
  int64_t columnGroups() const { return (vectorsPerRow() + threads - 1) / threads; }
  /// Launch: {columnGroups, tokens, 1} workgroups of `threads`.
  std::array<int64_t, 3> grid(int64_t tokens) const { return {columnGroups(), tokens, 1}; }
};

/// The kernel's symbol, unique per plan: "moe_reduce_k16_c3584".
std::string reduceKernelSymbol(const ReducePlan &plan);
KernelSignature reduceKernelSignature(llvm::StringRef symbol, const ReducePlan &plan);

/// The rules of a plan (reported against stage 2).
void checkReducePlan(const ReducePlan &plan, const TargetInfo &target, ScheduleIssues &issues);

/// The reduction of reduce-mode stage 2; nullopt when stage 2 accumulates
/// with atomics.
std::optional<ReducePlan> planReduce(const MoeSpec &spec, const TargetInfo &target,
                                     ScheduleIssues &issues);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_REDUCE_REDUCEPLAN_H
