//===- SortCountKernel.cpp - sort_count: entries per expert per chunk -----===//

#include "templates/sort/SortKernel.h"
#include "templates/sort/SortKernelCommon.h"

using namespace mlir;

namespace moegen {

gpu::GPUFuncOp buildSortCountKernel(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                                    StringRef symbol, const SortPlan &plan) {
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type();
  KernelSignature sig = sortCountKernelSignature(symbol, plan);
  gpu::GPUFuncOp func =
      createKernel(b, module, sig, {i32, i32, i32}, {ldsBufferType(ctx, i32, plan.experts + 1)});
  Block &entry = func.getBody().front();
  Value topkIds = entry.getArgument(0), counts = entry.getArgument(1);
  Value hist = func.getWorkgroupAttributions()[0];

  Arith a{b};
  Value experts = a.idx(plan.experts), threads = a.idx(plan.threads);
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value chunk = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  sort::EntryRange range = sort::chunkEntries(a, plan, chunk, a.toIndex(entry.getArgument(2)));

  sort::forStrided(b, tid, a.idx(plan.experts + 1), threads,
                   [&](Value e) { memref::StoreOp::create(b, a.i32(0), hist, e); });
  gpu::BarrierOp::create(b);
  // Only a chunk without tokens (zero tokens) has nothing to load.
  auto any = scf::IfOp::create(b, a.cmp(arith::CmpIPredicate::ult, range.begin, range.end),
                               /*withElse=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(any.thenBlock());
    sort::countEntries(b, a, plan, topkIds, hist, a.idx(0), a.add(range.begin, tid), range.end,
                       range.begin, plan.threads, plan.countPerThread());
  }
  gpu::BarrierOp::create(b);
  Value row = a.mul(chunk, experts);
  sort::forStrided(b, tid, experts, threads, [&](Value e) {
    memref::StoreOp::create(b, memref::LoadOp::create(b, hist, e), counts, a.add(row, e));
  });
  gpu::ReturnOp::create(b);
  return func;
}

} // namespace moegen
