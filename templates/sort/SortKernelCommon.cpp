//===- SortKernelCommon.cpp - Pieces the sorting kernels share ------------===//

#include "templates/sort/SortKernelCommon.h"

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

std::pair<Value, Value> workgroupInclusiveSum(ImplicitLocOpBuilder &b, Arith &a, Value buf,
                                              Value tid, Value value, int64_t threads) {
  // Hillis-Steele: log2(threads) steps, each reading before any thread
  // writes (a barrier between the two).
  memref::StoreOp::create(b, value, buf, tid);
  gpu::BarrierOp::create(b);
  Value sum = value;
  for (int64_t d = 1; d < threads; d *= 2) {
    Value has = a.cmp(CmpIPredicate::uge, tid, a.idx(d));
    auto read = scf::IfOp::create(b, TypeRange{b.getI32Type()}, has, /*withElse=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(read.thenBlock());
      scf::YieldOp::create(b, ValueRange{memref::LoadOp::create(b, buf, a.sub(tid, a.idx(d)))});
      b.setInsertionPointToStart(read.elseBlock());
      scf::YieldOp::create(b, ValueRange{a.i32(0)});
    }
    gpu::BarrierOp::create(b);
    sum = a.add(sum, read.getResult(0));
    memref::StoreOp::create(b, sum, buf, tid);
    gpu::BarrierOp::create(b);
  }
  Value total = memref::LoadOp::create(b, buf, a.idx(threads - 1));
  gpu::BarrierOp::create(b); // every thread has read the total before reuse
  return {sum, total};
}

} // namespace moegen::sort
