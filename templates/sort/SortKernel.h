//===- SortKernel.h - The MoE sorting kernel --------------------*- C++ -*-===//
#ifndef MOEGEN_TEMPLATES_SORT_SORTKERNEL_H
#define MOEGEN_TEMPLATES_SORT_SORTKERNEL_H

#include "templates/KernelBuilder.h"
#include "templates/sort/SortPlan.h"

namespace moegen {

/// The sorting kernel's arguments, in order:
///   topk_ids       i32 [tokens, topk]      router choices (ids outside [0, experts) are dropped)
///   topk_weights   f32 [tokens, topk]
///   sorted_ids     i32 [maxPaddedRows]      (slot << 24) | token, sentinel (topk << 24) | tokens
///   sorted_weights f32 [maxPaddedRows]      0 on padding
///   sorted_experts i32 [maxBlocks]          expert of each block_m block, empty experts skipped
///   num_valid_ids  i32 [2]                  {padded rows used, tokens}
///   tokens         i32
/// Launch: one workgroup of plan.threads threads.

/// Adds the sorting kernel to `module`.
mlir::gpu::GPUFuncOp buildSortKernel(mlir::ImplicitLocOpBuilder &b, mlir::gpu::GPUModuleOp module,
                                     llvm::StringRef symbol, const SortPlan &plan);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_SORT_SORTKERNEL_H
