//===- SortKernel.h - The MoE sorting kernels -------------------*- C++ -*-===//
//
// Token-to-expert sorting in aiter's format, as three kernels launched in
// order over chunks of plan.chunkTokens consecutive tokens (entries are the
// (token, slot) pairs of topk_ids, row-major); up to plan.singleEntries
// entries only sort runs, in one workgroup (the others get empty grids),
// taking the totals from its own counts, and up to plan.tinyEntries
// its wave 0 alone, in registers (emitTinySort in SortKernel.cpp):
//
//   sort_count  grid {chunks}, plan.threads threads. Each workgroup counts
//               its chunk's entries per expert in an LDS histogram (atomic
//               adds: counts do not depend on their order) and writes
//               chunk_counts[chunk][expert].
//   sort_scan   grid {experts}, plan.scanThreads threads (one wave), each
//               lane over plan.scanPerLane consecutive chunks. Per
//               expert, an exclusive prefix over the chunks replaces
//               chunk_counts[chunk][expert] with the chunk's base inside the
//               expert's segment; expert_totals[expert] gets the sum.
//   sort        grid {chunks}, plan.threads threads. Each wave takes a
//               contiguous part of the chunk and counts it per expert (one
//               LDS histogram per wave). Every workgroup lays the segments
//               out from expert_totals (alone, SortPlan::singleChunk: the
//               sum of its waves' histograms; each thread sums the padded
//               sizes of its contiguous experts, a workgroup prefix gives
//               the starts; empty experts take no rows), workgroup 0 writes
//               num_valid_ids, and workgroup (thread mod chunks) writes the
//               expert ids of its thread's experts' blocks and their padding
//               rows (one loop for all of the thread's experts; padding ends
//               on a block, so after up to 3 single rows it is written 4
//               rows a store). The histograms become per-wave next rows
//               (segment start + chunk base, zero alone, + earlier waves'
//               counts), and the wave walks its part a wave of entries
//               (64 on gfx950, 32 on sm_90a) at a time (loading the next
//               ones while placing these), placing them in steps: each
//               step, the lowest pending lane of every expert (an LDS
//               atomic min of lane ids) takes its expert's next row, and a
//               ballot tells whether any lane is left (sm_90a: warp barriers
//               between the step's phases, see emitPeel).
//               A lane is placed in the step of its rank among the lanes of
//               its expert, so rows follow (token, slot) order as in the
//               reference, whatever the workgroups' order; the steps are as
//               many as the most shared expert's lanes (about 2 for router
//               top-k over 896 experts).
//
// sort's arguments: topk_ids i32 [tokens, topk] (ids outside [0, experts)
// are dropped by all three), topk_weights f32 [tokens, topk], chunk_counts
// i32 [chunks, experts], expert_totals i32 [experts], sorted_ids i32
// [maxPaddedRows] ((slot << 24) | token; sentinel (topk << 24) | tokens),
// sorted_weights f32 [maxPaddedRows] (0 on padding), sorted_experts i32
// [maxBlocks] (expert of each block_m block), num_valid_ids i32 [2]
// ({padded rows used, tokens}), tokens i32. The region sizes come from
// SortPlan (countsBytes, totalsBytes, maxPaddedRows, maxBlocks).
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEMPLATES_SORT_SORTKERNEL_H
#define MOEGEN_TEMPLATES_SORT_SORTKERNEL_H

#include "templates/KernelBuilder.h"
#include "templates/sort/SortPlan.h"

namespace moegen {

/// Adds the sort_count kernel to `module`.
mlir::gpu::GPUFuncOp buildSortCountKernel(mlir::ImplicitLocOpBuilder &b,
                                          mlir::gpu::GPUModuleOp module, llvm::StringRef symbol,
                                          const SortPlan &plan);
/// Adds the sort_scan kernel to `module` (its wave sum as `target` has it).
mlir::gpu::GPUFuncOp buildSortScanKernel(mlir::ImplicitLocOpBuilder &b,
                                         mlir::gpu::GPUModuleOp module, llvm::StringRef symbol,
                                         const SortPlan &plan, const TargetInfo &target);
/// Adds the sort (layout and scatter) kernel to `module`; its placing step
/// synchronizes the wave as `target` needs (a ballot, and warp barriers on
/// sm_90a).
mlir::gpu::GPUFuncOp buildSortKernel(mlir::ImplicitLocOpBuilder &b, mlir::gpu::GPUModuleOp module,
                                     llvm::StringRef symbol, const SortPlan &plan,
                                     const TargetInfo &target);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_SORT_SORTKERNEL_H
