//===- ReduceKernel.h - The stage-2 top-k reduction kernel ------*- C++ -*-===//
#ifndef MOEGEN_TEMPLATES_REDUCE_REDUCEKERNEL_H
#define MOEGEN_TEMPLATES_REDUCE_REDUCEKERNEL_H

#include "templates/KernelBuilder.h"
#include "templates/reduce/ReducePlan.h"

namespace moegen {

/// The reduction kernel's arguments, in order:
///   slot_rows  bf16 [tokens*topk, K]   row token*topk + slot, top-k weight applied
///   topk_ids   i32  [tokens*topk]      router choices; a slot is summed iff its id is
///                                      in [0, experts) (unrouted rows are never read)
///   out        bf16 [tokens, K]        sum over the routed slots in slot order, in
///                                      f32, rounded once (RNE); 0 if none is routed
///   tokens     i32
/// Pointers must be 16-byte aligned.
/// Launch: plan.grid(tokens) = {columnGroups, tokens, 1} workgroups of
/// plan.threads threads.

/// Adds the reduction kernel to `module`.
mlir::gpu::GPUFuncOp buildReduceKernel(mlir::ImplicitLocOpBuilder &b, mlir::gpu::GPUModuleOp module,
                                       llvm::StringRef symbol, const ReducePlan &plan);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_REDUCE_REDUCEKERNEL_H
