//===- SortKernelCommon.cpp - Pieces the sorting kernels share ------------===//

#include "templates/sort/SortKernelCommon.h"

#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"

using namespace mlir;
using arith::CmpIPredicate;

namespace moegen::sort {

EntryRange chunkEntries(Arith &a, const SortPlan &plan, Value chunk, Value tokens) {
  Value first = a.mul(chunk, a.idx(plan.chunkTokens));
  Value last = arith::MinUIOp::create(a.b, a.add(first, a.idx(plan.chunkTokens)), tokens);
  // A chunk past the tokens (only chunk 0 of zero tokens) is empty.
  first = arith::MinUIOp::create(a.b, first, last);
  Value topk = a.idx(plan.topk);
  return {a.mul(first, topk), a.mul(last, topk)};
}

void forStrided(ImplicitLocOpBuilder &b, Value start, Value end, Value step,
                llvm::function_ref<void(Value)> body) {
  auto loop = scf::ForOp::create(b, start, end, step);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  body(loop.getInductionVar());
}

Value isRouted(Arith &a, Value id, int64_t experts) {
  return a.cmp(CmpIPredicate::ult, id, a.i32(experts));
}

void countEntries(ImplicitLocOpBuilder &b, Arith &a, const SortPlan &plan, Value topkIds,
                  Value hist, Value row, Value first, Value end, Value safe, int64_t stride,
                  int64_t count) {
  std::vector<Value> ids, inRange;
  for (int64_t j = 0; j < count; ++j) {
    Value i = a.add(first, a.idx(j * stride));
    inRange.push_back(a.cmp(CmpIPredicate::ult, i, end));
    ids.push_back(memref::LoadOp::create(b, topkIds, a.select(inRange.back(), i, safe)));
  }
  for (int64_t j = 0; j < count; ++j) {
    Value counted = arith::AndIOp::create(b, inRange[j], isRouted(a, ids[j], plan.experts));
    Value at = a.add(row, a.select(counted, a.toIndex(ids[j]), a.idx(plan.experts)));
    memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::addi, a.i32(1), hist, ValueRange{at});
  }
}

Value waveInclusiveSum(ImplicitLocOpBuilder &b, Arith &a, Value value, const TargetInfo &target) {
  Value sum = value;
  if (target.isNvptx()) {
    // log2(32) shuffles up; lanes below the distance add nothing.
    Value width = a.i32(target.waveSize);
    for (int64_t d = 1; d < target.waveSize; d *= 2) {
      auto up = gpu::ShuffleOp::create(b, sum, a.i32(d), width, gpu::ShuffleMode::UP);
      sum = a.add(sum, a.select(up.getValid(), up.getShuffleResult(), a.i32(0)));
    }
    return sum;
  }
  // gfx950 DPP (docs/gfx950-facts.md §7.4; VALU latency, no LDS): row_shr 1, 2, 4, 8 sum each row
  // of 16 lanes; row_bcast15 adds row 0's total to row 1 and row 2's to row 3 (row mask 0b1010),
  // row_bcast31 lane 31's to rows 2 and 3 (0b1100). Lanes whose source is outside the row, and
  // masked rows, take `old` (0).
  Type i32 = b.getI32Type();
  Value zero = a.i32(0);
  auto addDpp = [&](unsigned ctrl, unsigned rowMask) {
    Value moved = ROCDL::DPPUpdateOp::create(b, i32, zero, sum, ctrl, rowMask, /*bankMask=*/0xf,
                                             /*boundCtrl=*/false);
    sum = a.add(sum, moved);
  };
  for (unsigned d = 1; d < 16; d *= 2)
    addDpp(0x110 + d, 0xf); // row_shr:d
  addDpp(0x142, 0xa);       // row_bcast:15
  addDpp(0x143, 0xc);       // row_bcast:31
  return sum;
}

std::pair<Value, Value> workgroupInclusiveSum(ImplicitLocOpBuilder &b, Arith &a, Value buf,
                                              Value tid, Value value, int64_t threads,
                                              const TargetInfo &target) {
  const int64_t waveSize = target.waveSize;
  assert(threads % waveSize == 0 && "whole waves");
  Value sum = waveInclusiveSum(b, a, value, target);
  const int64_t waves = threads / waveSize;
  if (waves == 1) {
    Value last = a.i32(waveSize - 1);
    Value total = target.isNvptx()
                      ? gpu::ShuffleOp::create(b, sum, last, a.i32(waveSize), gpu::ShuffleMode::IDX)
                            .getShuffleResult()
                      : ROCDL::ReadlaneOp::create(b, b.getI32Type(), sum, last).getResult();
    return {sum, total};
  }
  // Across waves: each wave's last lane posts the wave's total, every thread
  // adds those of the waves before its own (the loads issue together).
  Value wave = a.divu(tid, a.idx(waveSize));
  Value lastLane = a.cmp(CmpIPredicate::eq, a.remu(tid, a.idx(waveSize)), a.idx(waveSize - 1));
  auto post = scf::IfOp::create(b, lastLane, /*withElse=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(post.thenBlock());
    memref::StoreOp::create(b, sum, buf, wave);
  }
  gpu::BarrierOp::create(b);
  Value before = a.i32(0), total = a.i32(0);
  for (int64_t w = 0; w < waves; ++w) {
    Value waveTotal = memref::LoadOp::create(b, buf, a.idx(w));
    before =
        a.add(before, a.select(a.cmp(CmpIPredicate::ult, a.idx(w), wave), waveTotal, a.i32(0)));
    total = a.add(total, waveTotal);
  }
  gpu::BarrierOp::create(b); // every thread has read the totals before reuse
  return {a.add(sum, before), total};
}

} // namespace moegen::sort
