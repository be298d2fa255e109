//===- SortScanKernel.cpp - sort_scan: chunk bases and expert totals ------===//

#include "templates/sort/SortKernel.h"
#include "templates/sort/SortKernelCommon.h"

using namespace mlir;
using arith::CmpIPredicate;

namespace moegen {

gpu::GPUFuncOp buildSortScanKernel(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                                   StringRef symbol, const SortPlan &plan) {
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type();
  KernelSignature sig = sortScanKernelSignature(symbol, plan);
  gpu::GPUFuncOp func =
      createKernel(b, module, sig, {i32, i32, i32}, {ldsBufferType(ctx, i32, plan.scanThreads)});
  Block &entry = func.getBody().front();
  Value counts = entry.getArgument(0), totals = entry.getArgument(1);
  Value buf = func.getWorkgroupAttributions()[0];

  Arith a{b};
  Value c0 = a.idx(0), step = a.idx(plan.scanThreads);
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value e = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value tokens = a.toIndex(entry.getArgument(2));
  // chunks(tokens) = max(1, ceil(tokens / chunkTokens)), as SortPlan::chunks.
  Value chunks = arith::MaxUIOp::create(
      b, a.divu(a.add(tokens, a.idx(plan.chunkTokens - 1)), a.idx(plan.chunkTokens)), a.idx(1));
  Value experts = a.idx(plan.experts);

  // The chunks in groups of scanThreads, the running sum carried over.
  auto groups = scf::ForOp::create(b, c0, chunks, step, ValueRange{a.i32(0)});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(groups.getBody());
    Value carry = groups.getRegionIterArgs()[0];
    Value c = a.add(groups.getInductionVar(), tid);
    Value inRange = a.cmp(CmpIPredicate::ult, c, chunks);
    Value at = a.add(a.mul(c, experts), e);
    auto load = scf::IfOp::create(b, TypeRange{b.getI32Type()}, inRange, /*withElse=*/true);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(load.thenBlock());
      scf::YieldOp::create(b, ValueRange{memref::LoadOp::create(b, counts, at)});
      b.setInsertionPointToStart(load.elseBlock());
      scf::YieldOp::create(b, ValueRange{a.i32(0)});
    }
    Value count = load.getResult(0);
    auto [inclusive, total] = sort::workgroupInclusiveSum(b, a, buf, tid, count, plan.scanThreads);
    auto store = scf::IfOp::create(b, inRange, /*withElse=*/false);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(store.thenBlock());
      memref::StoreOp::create(b, a.add(carry, a.sub(inclusive, count)), counts, at);
    }
    scf::YieldOp::create(b, ValueRange{a.add(carry, total)});
  }
  auto first = scf::IfOp::create(b, a.cmp(CmpIPredicate::eq, tid, c0), /*withElse=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(first.thenBlock());
    memref::StoreOp::create(b, groups.getResult(0), totals, e);
  }
  gpu::ReturnOp::create(b);
  return func;
}

} // namespace moegen
