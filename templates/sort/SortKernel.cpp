//===- SortKernel.cpp - sort: segment layout and scatter ------------------===//

#include "templates/sort/SortKernel.h"
#include "templates/sort/SortKernelCommon.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"

using namespace mlir;
using arith::CmpIPredicate;

namespace moegen {
namespace {

/// Builds `then` under `cond`.
void ifThen(ImplicitLocOpBuilder &b, Value cond, llvm::function_ref<void()> then) {
  auto op = scf::IfOp::create(b, cond, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(op.thenBlock());
  then();
}

/// The kernel's arguments and LDS buffers.
struct ScatterArgs {
  Value topkIds, topkWeights, counts, totals, sortedIds, sortedWeights, sortedExperts, numValid;
  Value tokensI32;
  // LDS: segment starts, per-wave histograms (then next rows), per-wave
  // lowest pending lane of each expert, scan buffer.
  Value seg, hist, owner, buf;
};

/// Segment starts into `seg`; num_valid_ids from workgroup 0; the expert ids
/// of the blocks and the padding rows of thread tid's experts from
/// workgroup tid mod chunks.
void emitLayout(ImplicitLocOpBuilder &b, Arith &a, const SortPlan &plan, const ScatterArgs &s,
                Value tid, Value chunk, Value chunks) {
  const int64_t k = plan.expertsPerThread();
  Value bmI32 = a.i32(plan.blockM), experts = a.idx(plan.experts);
  Value firstExpert = a.mul(tid, a.idx(k));
  std::vector<Value> totals, padded;
  Value local = a.i32(0);
  for (int64_t j = 0; j < k; ++j) {
    Value e = a.add(firstExpert, a.idx(j));
    Value inside = a.cmp(CmpIPredicate::ult, e, experts);
    Value clamped = arith::MinUIOp::create(b, e, a.idx(plan.experts - 1));
    Value total = a.select(inside, memref::LoadOp::create(b, s.totals, clamped), a.i32(0));
    Value blocks = a.divu(a.add(total, a.i32(plan.blockM - 1)), bmI32);
    totals.push_back(total);
    padded.push_back(a.mul(blocks, bmI32));
    local = a.add(local, padded.back());
  }
  auto [inclusive, used] = sort::workgroupInclusiveSum(b, a, s.buf, tid, local, plan.threads);
  ifThen(b,
         arith::AndIOp::create(b, a.cmp(CmpIPredicate::eq, chunk, a.idx(0)),
                               a.cmp(CmpIPredicate::eq, tid, a.idx(0))),
         [&] {
           memref::StoreOp::create(b, used, s.numValid, a.idx(0));
           memref::StoreOp::create(b, s.tokensI32, s.numValid, a.idx(1));
         });
  Value owner = a.cmp(CmpIPredicate::eq, a.remu(tid, chunks), chunk);
  Value sentinel = a.bitOr(a.i32(int64_t(plan.topk) << 24), s.tokensI32);
  Value start = a.sub(inclusive, local);
  for (int64_t j = 0; j < k; ++j) {
    Value e = a.add(firstExpert, a.idx(j));
    Value inside = a.cmp(CmpIPredicate::ult, e, experts);
    Value begin = a.toIndex(start), end = a.toIndex(a.add(start, padded[j]));
    ifThen(b, inside, [&] { memref::StoreOp::create(b, start, s.seg, e); });
    ifThen(b, arith::AndIOp::create(b, inside, owner), [&] {
      Value bm = a.idx(plan.blockM);
      sort::forStrided(b, a.divu(begin, bm), a.divu(end, bm), a.idx(1), [&](Value blk) {
        memref::StoreOp::create(b, a.toI32(e), s.sortedExperts, blk);
      });
      Value firstPad = a.add(begin, a.toIndex(totals[j]));
      sort::forStrided(b, firstPad, end, a.idx(1), [&](Value row) {
        memref::StoreOp::create(b, sentinel, s.sortedIds, row);
        memref::StoreOp::create(b, a.f32(0.0f), s.sortedWeights, row);
      });
    });
    start = a.add(start, padded[j]);
  }
}

/// The rows of the wave's `valid` entries (one per lane, in lane order) in
/// their experts' segments: each step, the lowest pending lane of every
/// expert (an LDS atomic min of lane ids per expert) takes its expert's next
/// row; a lane is thus placed in the step of its rank among the lanes of its
/// expert, which keeps (token, slot) order. Steps: the largest number of
/// lanes that share an expert. The loop body has no branch: every lane
/// touches LDS (lanes with nothing to do use the row's spare slot), so the
/// wave's lanes stay together at each LDS access.
Value emitPeel(ImplicitLocOpBuilder &b, Arith &a, const ScatterArgs &s, const SortPlan &plan,
               Value histRow, Value lane, Value id, Value valid) {
  Type i1 = b.getI1Type(), i32 = b.getI32Type(), i64 = b.getI64Type();
  Value spare = a.idx(plan.experts), laneI32 = a.toI32(lane), none = a.i32(64);
  // A do-while (the step in the condition region): the loop's exit is its
  // back edge. A first step without pending lanes only touches spare slots.
  auto loop = scf::WhileOp::create(b, TypeRange{i1, i32}, ValueRange{valid, a.i32(0)});
  OpBuilder::InsertionGuard guard(b);
  Block *before = b.createBlock(&loop.getBefore(), {}, {i1, i32}, {b.getLoc(), b.getLoc()});
  Value pending = before->getArgument(0);
  Value at = a.add(histRow, a.select(pending, a.toIndex(id), spare));
  memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::minu, laneI32, s.owner, ValueRange{at});
  Value owner = memref::LoadOp::create(b, s.owner, at);
  Value wins = arith::AndIOp::create(b, pending, a.cmp(CmpIPredicate::eq, owner, laneI32));
  Value mine = a.add(histRow, a.select(wins, a.toIndex(id), spare));
  Value row = memref::LoadOp::create(b, s.hist, mine);
  memref::StoreOp::create(b, a.add(row, a.i32(1)), s.hist, mine);
  memref::StoreOp::create(b, none, s.owner, mine); // the expert's next step is open
  Value left = arith::XOrIOp::create(b, pending, wins);
  Value any = a.cmp(CmpIPredicate::ne, ROCDL::BallotOp::create(b, i64, left),
                    arith::ConstantIntOp::create(b, 0, 64));
  scf::ConditionOp::create(b, any, ValueRange{left, a.select(wins, row, before->getArgument(1))});
  Block *after = b.createBlock(&loop.getAfter(), {}, {i1, i32}, {b.getLoc(), b.getLoc()});
  scf::YieldOp::create(b, after->getArguments());
  return loop.getResult(1);
}

} // namespace

gpu::GPUFuncOp buildSortKernel(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module, StringRef symbol,
                               const SortPlan &plan) {
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  const int64_t waves = plan.waves();
  KernelSignature sig = sortKernelSignature(symbol, plan);
  gpu::GPUFuncOp func = createKernel(
      b, module, sig, {i32, f32, i32, i32, i32, f32, i32, i32, i32},
      {ldsBufferType(ctx, i32, plan.experts), ldsBufferType(ctx, i32, plan.histRow() * waves),
       ldsBufferType(ctx, i32, plan.histRow() * waves), ldsBufferType(ctx, i32, plan.threads)});
  Block &entry = func.getBody().front();
  ScatterArgs s;
  s.topkIds = entry.getArgument(0);
  s.topkWeights = entry.getArgument(1);
  s.counts = entry.getArgument(2);
  s.totals = entry.getArgument(3);
  s.sortedIds = entry.getArgument(4);
  s.sortedWeights = entry.getArgument(5);
  s.sortedExperts = entry.getArgument(6);
  s.numValid = entry.getArgument(7);
  s.tokensI32 = entry.getArgument(8);
  s.seg = func.getWorkgroupAttributions()[0];
  s.hist = func.getWorkgroupAttributions()[1];
  s.owner = func.getWorkgroupAttributions()[2];
  s.buf = func.getWorkgroupAttributions()[3];

  Arith a{b};
  Value c1 = a.idx(1), c64 = a.idx(64);
  Value experts = a.idx(plan.experts), threads = a.idx(plan.threads);
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value chunk = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value tokens = a.toIndex(s.tokensI32);
  Value chunks = arith::MaxUIOp::create(
      b, a.divu(a.add(tokens, a.idx(plan.chunkTokens - 1)), a.idx(plan.chunkTokens)), c1);
  sort::EntryRange range = sort::chunkEntries(a, plan, chunk, tokens);

  emitLayout(b, a, plan, s, tid, chunk, chunks);
  sort::forStrided(b, tid, a.idx(plan.histRow() * waves), threads, [&](Value i) {
    memref::StoreOp::create(b, a.i32(0), s.hist, i);
    memref::StoreOp::create(b, a.i32(64), s.owner, i); // no lane
  });
  gpu::BarrierOp::create(b);

  // Wave w takes the w-th contiguous part of the chunk's entries.
  Value wave = a.divu(tid, c64), lane = a.remu(tid, c64);
  Value n = a.sub(range.end, range.begin);
  Value part = a.divu(a.add(n, a.idx(waves - 1)), a.idx(waves));
  Value partBegin = a.add(range.begin, arith::MinUIOp::create(b, a.mul(wave, part), n));
  Value partEnd = a.add(range.begin, arith::MinUIOp::create(b, a.mul(a.add(wave, c1), part), n));
  Value histRow = a.mul(wave, a.idx(plan.histRow()));
  ifThen(b, a.cmp(CmpIPredicate::ult, partBegin, partEnd), [&] { // wave-uniform
    sort::countEntries(b, a, plan, s.topkIds, s.hist, histRow, a.add(partBegin, lane), partEnd,
                       partBegin, 64, plan.partPerLane());
  });
  gpu::BarrierOp::create(b);

  // Per-wave bases: segment start + the chunk's base + the earlier waves'.
  Value countsRow = a.mul(chunk, experts);
  // Experts tid + j * threads; the chunk bases load together.
  const int64_t perThread = (plan.experts + plan.threads - 1) / plan.threads;
  std::vector<Value> chunkBases;
  for (int64_t j = 0; j < perThread; ++j) {
    Value e =
        arith::MinUIOp::create(b, a.add(tid, a.idx(j * plan.threads)), a.idx(plan.experts - 1));
    chunkBases.push_back(memref::LoadOp::create(b, s.counts, a.add(countsRow, e)));
  }
  for (int64_t j = 0; j < perThread; ++j) {
    Value e = a.add(tid, a.idx(j * plan.threads));
    ifThen(b, a.cmp(CmpIPredicate::ult, e, experts), [&] {
      Value base = a.add(memref::LoadOp::create(b, s.seg, e), chunkBases[j]);
      for (int64_t w = 0; w < waves; ++w) {
        Value at = a.add(a.idx(w * plan.histRow()), e);
        Value count = memref::LoadOp::create(b, s.hist, at);
        memref::StoreOp::create(b, base, s.hist, at);
        base = a.add(base, count);
      }
    });
  }
  gpu::BarrierOp::create(b);

  // The wave's part, 64 entries at a time, in entry order.
  Value rounds = a.divu(a.add(a.sub(partEnd, partBegin), a.idx(63)), c64);
  Value topk = a.idx(plan.topk);
  sort::forStrided(b, a.idx(0), rounds, c1, [&](Value r) {
    Value i = a.add(a.add(partBegin, a.mul(r, c64)), lane);
    Value inRange = a.cmp(CmpIPredicate::ult, i, partEnd);
    Value id = memref::LoadOp::create(b, s.topkIds, a.select(inRange, i, partBegin));
    Value valid = arith::AndIOp::create(b, inRange, sort::isRouted(a, id, plan.experts));
    Value weight = memref::LoadOp::create(b, s.topkWeights, a.select(inRange, i, partBegin));
    Value token = a.toI32(a.divu(i, topk)), slot = a.toI32(a.remu(i, topk));
    Value packed = a.bitOr(a.shl(slot, a.i32(24)), token);
    Value row = a.toIndex(emitPeel(b, a, s, plan, histRow, lane, id, valid));
    ifThen(b, valid, [&] {
      memref::StoreOp::create(b, packed, s.sortedIds, row);
      memref::StoreOp::create(b, weight, s.sortedWeights, row);
    });
  });
  gpu::ReturnOp::create(b);
  return func;
}

} // namespace moegen
