//===- SortKernel.cpp - The MoE sorting kernel ----------------------------===//

#include "templates/sort/SortKernel.h"

using namespace mlir;
using arith::CmpIPredicate;

namespace moegen {

gpu::GPUFuncOp buildSortKernel(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module, StringRef symbol,
                               const SortPlan &plan) {
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  KernelSignature sig = sortKernelSignature(symbol, plan);
  MemRefType ldsCounts = ldsBufferType(ctx, i32, plan.experts);
  gpu::GPUFuncOp func =
      createKernel(b, module, sig, {i32, f32, i32, f32, i32, i32, i32}, {ldsCounts, ldsCounts});
  Block &entry = func.getBody().front();
  Value topkIds = entry.getArgument(0), topkWeights = entry.getArgument(1);
  Value sortedIds = entry.getArgument(2), sortedWeights = entry.getArgument(3);
  Value sortedExperts = entry.getArgument(4), numValid = entry.getArgument(5);
  Value tokensI32 = entry.getArgument(6);
  Value counts = func.getWorkgroupAttributions()[0];
  Value offsets = func.getWorkgroupAttributions()[1];

  Arith a{b};
  Value c0 = a.idx(0), c1 = a.idx(1);
  Value zeroI32 = a.i32(0), oneI32 = a.i32(1);
  Value experts = a.idx(plan.experts), threads = a.idx(plan.threads);
  Value topk = a.idx(plan.topk), blockM = a.idx(plan.blockM);
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value tokens = a.toIndex(tokensI32);
  Value entries = a.mul(tokens, topk);

  // Phase 1: each thread counts the entries routed to its experts.
  auto countLoop = scf::ForOp::create(b, tid, experts, threads);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(countLoop.getBody());
    Value e = countLoop.getInductionVar();
    Value eI32 = a.toI32(e);
    auto scan = scf::ForOp::create(b, c0, entries, c1, ValueRange{zeroI32});
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(scan.getBody());
      Value id = memref::LoadOp::create(b, topkIds, scan.getInductionVar());
      Value hit = a.cmp(CmpIPredicate::eq, id, eI32);
      Value next = a.add(scan.getRegionIterArgs()[0], a.select(hit, oneI32, zeroI32));
      scf::YieldOp::create(b, next);
    }
    memref::StoreOp::create(b, scan.getResult(0), counts, e);
  }
  gpu::BarrierOp::create(b);

  // Phase 2: thread 0 lays out the segments: padded counts -> offsets, the
  // expert id of every block, and num_valid_ids.
  Value isFirst = a.cmp(CmpIPredicate::eq, tid, c0);
  auto first = scf::IfOp::create(b, isFirst, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(first.thenBlock());
    auto layout = scf::ForOp::create(b, c0, experts, c1, ValueRange{c0});
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(layout.getBody());
      Value e = layout.getInductionVar();
      Value total = layout.getRegionIterArgs()[0];
      Value count = a.toIndex(memref::LoadOp::create(b, counts, e));
      Value blocks = a.divu(a.add(count, a.idx(plan.blockM - 1)), blockM);
      memref::StoreOp::create(b, a.toI32(total), offsets, e);
      Value firstBlock = a.divu(total, blockM);
      auto fill = scf::ForOp::create(b, c0, blocks, c1);
      {
        OpBuilder::InsertionGuard g3(b);
        b.setInsertionPointToStart(fill.getBody());
        memref::StoreOp::create(b, a.toI32(e), sortedExperts,
                                a.add(firstBlock, fill.getInductionVar()));
      }
      scf::YieldOp::create(b, a.add(total, a.mul(blocks, blockM)));
    }
    memref::StoreOp::create(b, a.toI32(layout.getResult(0)), numValid, c0);
    memref::StoreOp::create(b, tokensI32, numValid, c1);
  }
  gpu::BarrierOp::create(b);

  // Phase 3: each thread writes its experts' segments in entry order, then
  // the padding up to the next multiple of block_m.
  Value sentinel = a.bitOr(a.i32(int64_t(plan.topk) << 24), tokensI32);
  Value zeroF32 = a.f32(0.0f);
  auto writeLoop = scf::ForOp::create(b, tid, experts, threads);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(writeLoop.getBody());
    Value e = writeLoop.getInductionVar();
    Value eI32 = a.toI32(e);
    Value start = a.toIndex(memref::LoadOp::create(b, offsets, e));
    Value count = a.toIndex(memref::LoadOp::create(b, counts, e));
    auto scan = scf::ForOp::create(b, c0, entries, c1, ValueRange{start});
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(scan.getBody());
      Value i = scan.getInductionVar();
      Value pos = scan.getRegionIterArgs()[0];
      Value id = memref::LoadOp::create(b, topkIds, i);
      Value hit = a.cmp(CmpIPredicate::eq, id, eI32);
      auto ifHit = scf::IfOp::create(b, TypeRange{b.getIndexType()}, hit, /*withElse=*/true);
      {
        OpBuilder::InsertionGuard g3(b);
        b.setInsertionPointToStart(ifHit.thenBlock());
        Value token = a.toI32(a.divu(i, topk));
        Value slot = a.toI32(a.remu(i, topk));
        Value packed = a.bitOr(a.shl(slot, a.i32(24)), token);
        memref::StoreOp::create(b, packed, sortedIds, pos);
        memref::StoreOp::create(b, memref::LoadOp::create(b, topkWeights, i), sortedWeights, pos);
        scf::YieldOp::create(b, a.add(pos, c1));
        b.setInsertionPointToStart(ifHit.elseBlock());
        scf::YieldOp::create(b, pos);
      }
      scf::YieldOp::create(b, ifHit.getResult(0));
    }
    Value padded = a.mul(a.divu(a.add(count, a.idx(plan.blockM - 1)), blockM), blockM);
    auto pad = scf::ForOp::create(b, scan.getResult(0), a.add(start, padded), c1);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(pad.getBody());
      memref::StoreOp::create(b, sentinel, sortedIds, pad.getInductionVar());
      memref::StoreOp::create(b, zeroF32, sortedWeights, pad.getInductionVar());
    }
  }
  gpu::ReturnOp::create(b);
  return func;
}

} // namespace moegen
