//===- SortKernelCommon.h - Pieces the sorting kernels share ----*- C++ -*-===//
#ifndef MOEGEN_TEMPLATES_SORT_SORTKERNELCOMMON_H
#define MOEGEN_TEMPLATES_SORT_SORTKERNELCOMMON_H

#include "templates/KernelBuilder.h"
#include "templates/sort/SortPlan.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace moegen::sort {

/// Entry indices [begin, end) (index values) of token chunk `chunk`.
struct EntryRange {
  mlir::Value begin, end;
};
EntryRange chunkEntries(Arith &a, const SortPlan &plan, mlir::Value chunk, mlir::Value tokens);

/// for (i = start; i < end; i += step) body(i), over index values.
void forStrided(mlir::ImplicitLocOpBuilder &b, mlir::Value start, mlir::Value end, mlir::Value step,
                llvm::function_ref<void(mlir::Value)> body);

/// Whether an i32 router id lies in [0, experts) (one unsigned compare).
mlir::Value isRouted(Arith &a, mlir::Value id, int64_t experts);

/// Adds one to hist[row + id] for the entries first + j * stride (j < count,
/// a compile-time unroll: the loads issue together) below `end`; entries
/// that are not routed add to the spare slot hist[row + experts]; entries at
/// or past `end` load the valid index `safe` instead.
void countEntries(mlir::ImplicitLocOpBuilder &b, Arith &a, const SortPlan &plan,
                  mlir::Value topkIds, mlir::Value hist, mlir::Value row, mlir::Value first,
                  mlir::Value end, mlir::Value safe, int64_t stride, int64_t count);

/// Inclusive sum of one i32 per lane over the lanes of a whole wave, in lane
/// order, without LDS (gfx950: DPP; sm_90a: shuffles up).
mlir::Value waveInclusiveSum(mlir::ImplicitLocOpBuilder &b, Arith &a, mlir::Value value,
                             const TargetInfo &target);

/// Inclusive sum of one i32 per thread over the workgroup's `threads`
/// threads (whole waves), in thread order: waveInclusiveSum in each wave, then one exchange of the
/// waves' totals through the LDS buffer `buf` (threads / waveSize i32; not touched by a single
/// wave). Every thread must call it. Returns {inclusive sum, workgroup total}; `buf` may be reused
/// after it returns.
std::pair<mlir::Value, mlir::Value> workgroupInclusiveSum(mlir::ImplicitLocOpBuilder &b, Arith &a,
                                                          mlir::Value buf, mlir::Value tid,
                                                          mlir::Value value, int64_t threads,
                                                          const TargetInfo &target);

} // namespace moegen::sort

#endif // MOEGEN_TEMPLATES_SORT_SORTKERNELCOMMON_H
