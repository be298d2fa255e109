//===- SortKernel.cpp - sort: segment layout and scatter ------------------===//

#include "templates/sort/SortKernel.h"
#include "templates/sort/SortKernelCommon.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using arith::CmpIPredicate;

namespace moegen {
namespace {

/// The i32 values of `then` under `cond`, else those of `otherwise`.
std::vector<Value> ifElse(ImplicitLocOpBuilder &b, Value cond, size_t n,
                          llvm::function_ref<std::vector<Value>()> then,
                          llvm::function_ref<std::vector<Value>()> otherwise) {
  auto op = scf::IfOp::create(b, SmallVector<Type>(n, b.getI32Type()), cond, /*withElse=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(op.thenBlock());
  scf::YieldOp::create(b, then());
  b.setInsertionPointToStart(op.elseBlock());
  scf::YieldOp::create(b, otherwise());
  return std::vector<Value>(op.getResults().begin(), op.getResults().end());
}

/// The kernel's arguments and LDS buffers.
struct ScatterArgs {
  Value topkIds, topkWeights, counts, totals, sortedIds, sortedWeights, sortedExperts, numValid;
  Value stageReady; // null without SortPlan::stageReadyCount
  int64_t stageReadyCount = 0;
  Value tokensI32;
  // LDS: segment starts, per-wave histograms (then next rows), per-wave
  // lowest pending lane of each expert, the waves' totals of the scan.
  Value seg, hist, owner, buf;
};

/// Sorted block `blk`'s expert, and its stage_ready counter set to what
/// stage 1 and the inter-stage quantization will count down
/// (SortPlan::stageReadyCount).
void storeBlockExpert(ImplicitLocOpBuilder &b, Arith &a, const ScatterArgs &s, Value expert,
                      Value blk) {
  memref::StoreOp::create(b, expert, s.sortedExperts, blk);
  if (s.stageReady)
    memref::StoreOp::create(b, a.i32(s.stageReadyCount), s.stageReady, blk);
}

/// sm_90a: the padding rows [begin, end) of each lane of the warp (i32;
/// empty where begin >= end), lane by lane as a ballot finds them, each range
/// written by the whole warp, a row per lane and store.
void emitWarpPadding(ImplicitLocOpBuilder &b, Arith &a, const SortPlan &plan, const ScatterArgs &s,
                     Value lane, Value begin, Value end, Value sentinel) {
  Type i32 = b.getI32Type();
  Value fullMask = a.i32(-1), width = a.i32(plan.waveSize);
  Value has = a.cmp(CmpIPredicate::ult, begin, end);
  Value lanes = NVVM::VoteSyncOp::create(b, i32, fullMask, has, NVVM::VoteSyncKind::ballot);
  auto loop = scf::WhileOp::create(b, TypeRange{i32}, ValueRange{lanes});
  OpBuilder::InsertionGuard guard(b);
  Block *before = b.createBlock(&loop.getBefore(), {}, {i32}, {b.getLoc()});
  Value left = before->getArgument(0);
  scf::ConditionOp::create(b, a.cmp(CmpIPredicate::ne, left, a.i32(0)), ValueRange{left});
  Block *after = b.createBlock(&loop.getAfter(), {}, {i32}, {b.getLoc()});
  left = after->getArgument(0);
  Value src = LLVM::CountTrailingZerosOp::create(b, i32, left, b.getBoolAttr(false));
  auto broadcast = [&](Value v) {
    return gpu::ShuffleOp::create(b, v, src, width, gpu::ShuffleMode::IDX).getShuffleResult();
  };
  Value from = a.add(broadcast(begin), a.toI32(lane)), to = broadcast(end);
  auto store = [&](Value row) {
    ifThen(b, a.cmp(CmpIPredicate::ult, row, to), [&] {
      memref::StoreOp::create(b, sentinel, s.sortedIds, a.toIndex(row));
      memref::StoreOp::create(b, a.f32(0.0f), s.sortedWeights, a.toIndex(row));
    });
  };
  // An expert's padding is under block_m rows: one store a lane up to a
  // wave's rows, else a loop.
  if (plan.blockM <= plan.waveSize) {
    store(from);
  } else {
    auto rows = scf::ForOp::create(b, from, to, width);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(rows.getBody());
    store(rows.getInductionVar());
  }
  scf::YieldOp::create(
      b, ValueRange{arith::AndIOp::create(b, left, a.sub(left, a.i32(1))).getResult()});
}

/// Experts tid * expertsPerThread + j (j < expertsPerThread), clamped to
/// the last: the ones a thread lays out.
std::vector<Value> layoutExperts(ImplicitLocOpBuilder &b, Arith &a, const SortPlan &plan,
                                 Value tid) {
  const int64_t k = plan.expertsPerThread();
  std::vector<Value> clamped;
  for (int64_t j = 0; j < k; ++j)
    clamped.push_back(
        arith::MinUIOp::create(b, a.add(a.mul(tid, a.idx(k)), a.idx(j)), a.idx(plan.experts - 1)));
  return clamped;
}

/// Segment starts into `seg`; num_valid_ids from workgroup 0; the expert ids
/// of the blocks and the padding rows of thread tid's experts from
/// workgroup tid mod chunks. `clamped` are the thread's experts
/// (layoutExperts); their totals are `chunkTotals` (loaded from
/// expert_totals at the kernel's start), or alone (SortPlan::singleChunk) the
/// waves' histograms (the sum of their rows).
void emitLayout(ImplicitLocOpBuilder &b, Arith &a, const SortPlan &plan, const TargetInfo &target,
                const ScatterArgs &s, Value tid, Value chunk, Value chunks, Value single,
                ArrayRef<Value> clamped, ArrayRef<Value> chunkTotals) {
  const int64_t k = plan.expertsPerThread();
  Value bmI32 = a.i32(plan.blockM), experts = a.idx(plan.experts);
  Value firstExpert = a.mul(tid, a.idx(k));
  std::vector<Value> loaded = ifElse(
      b, single, k,
      [&] {
        std::vector<Value> sums;
        for (Value e : clamped) {
          Value sum = a.i32(0);
          for (int64_t w = 0; w < plan.waves(); ++w)
            sum =
                a.add(sum, memref::LoadOp::create(b, s.hist, a.add(a.idx(w * plan.histRow()), e)));
          sums.push_back(sum);
        }
        return sums;
      },
      [&] { return std::vector<Value>(chunkTotals.begin(), chunkTotals.end()); });
  std::vector<Value> totals, padded;
  Value local = a.i32(0);
  for (int64_t j = 0; j < k; ++j) {
    Value inside = a.cmp(CmpIPredicate::ult, a.add(firstExpert, a.idx(j)), experts);
    Value total = a.select(inside, loaded[j], a.i32(0));
    Value blocks = a.divu(a.add(total, a.i32(plan.blockM - 1)), bmI32);
    totals.push_back(total);
    padded.push_back(a.mul(blocks, bmI32));
    local = a.add(local, padded.back());
  }
  auto [inclusive, used] =
      sort::workgroupInclusiveSum(b, a, s.buf, tid, local, plan.threads, target);
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
  Value bm = a.idx(plan.blockM);
  // Per expert: [begin, end) its padded rows, from firstPad its padding.
  std::vector<Value> es, begins, ends, firstPads;
  for (int64_t j = 0; j < k; ++j) {
    Value e = a.add(firstExpert, a.idx(j));
    Value inside = a.cmp(CmpIPredicate::ult, e, experts);
    ifThen(b, inside, [&] { memref::StoreOp::create(b, start, s.seg, e); });
    es.push_back(a.toI32(e));
    begins.push_back(a.toIndex(start));
    ends.push_back(a.toIndex(a.add(start, padded[j])));
    firstPads.push_back(a.add(begins.back(), a.toIndex(totals[j])));
    start = a.add(start, padded[j]); // experts past the last have no rows
  }
  // The thread's experts' block ids, then their padding rows, in one loop
  // each (as many steps as the longest of them).
  ifThen(b, owner, [&] {
    auto longest = [&](llvm::function_ref<Value(int64_t)> length) {
      Value m = length(0);
      for (int64_t j = 1; j < k; ++j)
        m = arith::MaxUIOp::create(b, m, length(j));
      return m;
    };
    Value blocks =
        longest([&](int64_t j) { return a.sub(a.divu(ends[j], bm), a.divu(begins[j], bm)); });
    sort::forStrided(b, a.idx(0), blocks, a.idx(1), [&](Value q) {
      for (int64_t j = 0; j < k; ++j) {
        Value blk = a.add(a.divu(begins[j], bm), q);
        ifThen(b, a.cmp(CmpIPredicate::ult, blk, a.divu(ends[j], bm)),
               [&] { storeBlockExpert(b, a, s, es[j], blk); });
      }
    });
    if (target.isNvptx())
      return; // padding below, by whole warps
    // Padding ends on a block (a multiple of 4 rows): up to 3 single rows,
    // then 4 rows a store.
    std::vector<Value> heads;
    for (int64_t j = 0; j < k; ++j) {
      Value head = arith::AndIOp::create(b, a.add(firstPads[j], a.idx(3)), a.idx(~int64_t(3)));
      heads.push_back(head);
      for (int64_t u = 0; u < 3; ++u) {
        Value row = a.add(firstPads[j], a.idx(u));
        ifThen(b, a.cmp(CmpIPredicate::ult, row, head), [&] {
          memref::StoreOp::create(b, sentinel, s.sortedIds, row);
          memref::StoreOp::create(b, a.f32(0.0f), s.sortedWeights, row);
        });
      }
    }
    Value sentinels =
        vector::BroadcastOp::create(b, VectorType::get({4}, b.getI32Type()), sentinel);
    Value zeros = vector::BroadcastOp::create(b, VectorType::get({4}, b.getF32Type()), a.f32(0.0f));
    Value quads = longest([&](int64_t j) { return a.divu(a.sub(ends[j], heads[j]), a.idx(4)); });
    sort::forStrided(b, a.idx(0), quads, a.idx(1), [&](Value q) {
      for (int64_t j = 0; j < k; ++j) {
        Value row = a.add(heads[j], a.mul(q, a.idx(4)));
        ifThen(b, a.cmp(CmpIPredicate::ult, row, ends[j]), [&] {
          vector::StoreOp::create(b, sentinels, s.sortedIds, ValueRange{row});
          vector::StoreOp::create(b, zeros, s.sortedWeights, ValueRange{row});
        });
      }
    });
  });
  if (target.isNvptx()) {
    // A thread's padding rows written by the thread itself scatter its
    // warp's stores over 32 segments (one SM writing Kimi's 224 routed
    // experts' padding at 16 tokens took most of the sort's 18 us): here the
    // warp takes its lanes' experts in turn and writes 32 consecutive rows
    // a store.
    Value lane = a.remu(tid, a.idx(plan.waveSize)), zero = a.i32(0);
    for (int64_t j = 0; j < k; ++j)
      emitWarpPadding(b, a, plan, s, lane, a.select(owner, a.toI32(firstPads[j]), zero),
                      a.select(owner, a.toI32(ends[j]), zero), sentinel);
  }
}

/// The rows of the wave's `valid` entries (one per lane, in lane order) in
/// their experts' segments: each step, the lowest pending lane of every
/// expert (an LDS atomic min of lane ids per expert) takes its expert's next
/// row; a lane is thus placed in the step of its rank among the lanes of its
/// expert, which keeps (token, slot) order. Steps: the largest number of
/// lanes that share an expert, until a ballot finds no lane pending.
///
/// gfx950 (wave64, lanes in lockstep): the loop body has no branch, every
/// lane touches LDS (lanes with nothing to do use the row's spare slot), so
/// the wave's lanes stay together at each LDS access.
/// sm_90a (warp32, independent thread scheduling: the lanes of a warp are
/// not in lockstep and only a warp barrier orders their shared-memory
/// accesses): warp barriers separate the claims from the owner reads, the
/// owner reads from the winners' updates, and those from the next step; only
/// pending lanes claim and only winners update, so no two lanes write one
/// address in a step.
Value emitPeel(ImplicitLocOpBuilder &b, Arith &a, const ScatterArgs &s, const SortPlan &plan,
               const TargetInfo &target, Value histRow, Value lane, Value id, Value valid) {
  Type i1 = b.getI1Type(), i32 = b.getI32Type(), i64 = b.getI64Type();
  Value spare = a.idx(plan.experts), laneI32 = a.toI32(lane), none = a.i32(plan.waveSize);
  // A do-while (the step in the condition region): the loop's exit is its
  // back edge. A first step without pending lanes only touches spare slots
  // (sm_90a: only reads one).
  auto loop = scf::WhileOp::create(b, TypeRange{i1, i32}, ValueRange{valid, a.i32(0)});
  OpBuilder::InsertionGuard guard(b);
  Block *before = b.createBlock(&loop.getBefore(), {}, {i1, i32}, {b.getLoc(), b.getLoc()});
  Value pending = before->getArgument(0);
  Value at = a.add(histRow, a.select(pending, a.toIndex(id), spare));
  Value left, row, any;
  if (target.isNvptx()) {
    Value fullMask = a.i32(-1);
    auto warpBarrier = [&] { NVVM::SyncWarpOp::create(b, fullMask); };
    ifThen(b, pending, [&] {
      memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::minu, laneI32, s.owner, ValueRange{at});
    });
    warpBarrier();
    Value owner = memref::LoadOp::create(b, s.owner, at);
    Value wins = arith::AndIOp::create(b, pending, a.cmp(CmpIPredicate::eq, owner, laneI32));
    warpBarrier();
    row = ifElse(
        b, wins, 1,
        [&] {
          Value next = memref::LoadOp::create(b, s.hist, at);
          memref::StoreOp::create(b, a.add(next, a.i32(1)), s.hist, at);
          memref::StoreOp::create(b, none, s.owner, at); // the expert's next step is open
          return std::vector<Value>{next};
        },
        [&] { return std::vector<Value>{before->getArgument(1)}; })[0];
    left = arith::XOrIOp::create(b, pending, wins);
    warpBarrier();
    Value ballot = NVVM::VoteSyncOp::create(b, i32, fullMask, left, NVVM::VoteSyncKind::ballot);
    any = a.cmp(CmpIPredicate::ne, ballot, a.i32(0));
  } else {
    memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::minu, laneI32, s.owner, ValueRange{at});
    Value owner = memref::LoadOp::create(b, s.owner, at);
    Value wins = arith::AndIOp::create(b, pending, a.cmp(CmpIPredicate::eq, owner, laneI32));
    Value mine = a.add(histRow, a.select(wins, a.toIndex(id), spare));
    Value next = memref::LoadOp::create(b, s.hist, mine);
    memref::StoreOp::create(b, a.add(next, a.i32(1)), s.hist, mine);
    memref::StoreOp::create(b, none, s.owner, mine); // the expert's next step is open
    left = arith::XOrIOp::create(b, pending, wins);
    any = a.cmp(CmpIPredicate::ne, ROCDL::BallotOp::create(b, i64, left),
                arith::ConstantIntOp::create(b, 0, 64));
    row = a.select(wins, next, before->getArgument(1));
  }
  scf::ConditionOp::create(b, any, ValueRange{left, row});
  Block *after = b.createBlock(&loop.getAfter(), {}, {i1, i32}, {b.getLoc(), b.getLoc()});
  scf::YieldOp::create(b, after->getArguments());
  return loop.getResult(1);
}

/// A wave's lane-mask operations in the target's form: gfx950's 64-lane
/// masks (ballot, readlane, mbcnt) or sm_90a's 32-lane ones (vote.sync.ballot,
/// shfl.sync.idx, popc of the lanes below).
struct WaveMaskOps {
  ImplicitLocOpBuilder &b;
  Arith &a;
  bool nvptx;
  int64_t waveSize;

  Type maskType() const { return b.getIntegerType(waveSize); }
  Value mask(int64_t bits) const { return arith::ConstantIntOp::create(b, bits, waveSize); }
  Value ballot(Value pred) const {
    if (nvptx)
      return NVVM::VoteSyncOp::create(b, b.getI32Type(), a.i32(-1), pred,
                                      NVVM::VoteSyncKind::ballot);
    return ROCDL::BallotOp::create(b, maskType(), pred);
  }
  /// The i32 `v` of lane `lane` (i32, the same in every lane).
  Value readLane(Value v, Value lane) const {
    if (nvptx)
      return gpu::ShuffleOp::create(b, v, lane, a.i32(waveSize), gpu::ShuffleMode::IDX)
          .getShuffleResult();
    return ROCDL::ReadlaneOp::create(b, b.getI32Type(), v, lane);
  }
  /// The lowest set lane of a non-zero mask, as i32.
  Value lowestLane(Value m) const {
    Value low = LLVM::CountTrailingZerosOp::create(b, maskType(), m, b.getBoolAttr(false));
    return nvptx ? low : arith::TruncIOp::create(b, b.getI32Type(), low).getResult();
  }
  /// The set lanes of `m` below this lane (i32 `lane`: its index in the wave).
  Value countBelow(Value m, Value lane) const {
    Type i32 = b.getI32Type();
    if (nvptx) {
      Value below = a.sub(arith::ShLIOp::create(b, a.i32(1), lane), a.i32(1));
      return LLVM::CtPopOp::create(b, i32, arith::AndIOp::create(b, m, below)).getResult();
    }
    Value lo = arith::TruncIOp::create(b, i32, m);
    Value hi = arith::TruncIOp::create(
        b, i32, arith::ShRUIOp::create(b, m, arith::ConstantIntOp::create(b, 32, 64)));
    return ROCDL::MbcntHiOp::create(b, i32, hi,
                                    ROCDL::MbcntLoOp::create(b, i32, lo, a.i32(0), {}, {}), {}, {});
  }
  Value popCount(Value m) const {
    Value n = LLVM::CtPopOp::create(b, maskType(), m).getResult();
    return nvptx ? n : arith::TruncIOp::create(b, b.getI32Type(), n).getResult();
  }
};

/// Up to SortPlan::tinyEntries entries (at most a wave's): wave 0 sorts them
/// in registers, one entry a lane, without LDS or barriers. A loop over
/// the experts present (as many trips as distinct experts): the lowest lane
/// not yet seen names its expert, a ballot finds that expert's lanes, whose
/// count (popcount) and each lane's rank among them (the lanes below it)
/// follow; every lane of a higher expert adds the expert's padded rows to
/// its segment start. The lowest lane of each expert then writes the
/// expert's block ids and padding rows.
void emitTinySort(ImplicitLocOpBuilder &b, Arith &a, const SortPlan &plan, const ScatterArgs &s,
                  Value tid, Value all, const TargetInfo &target) {
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  WaveMaskOps w{b, a, target.isNvptx(), plan.waveSize};
  Type maskType = w.maskType();
  Value lane = tid; // wave 0's threads: the lane is the thread
  ifThen(b, a.cmp(CmpIPredicate::ult, tid, a.idx(plan.waveSize)), [&] {
    Value inRange = a.cmp(CmpIPredicate::ult, lane, all);
    std::vector<Value> loaded = ifElse(
        b, inRange, 2,
        [&] {
          return std::vector<Value>{
              memref::LoadOp::create(b, s.topkIds, lane),
              arith::BitcastOp::create(b, i32, memref::LoadOp::create(b, s.topkWeights, lane))};
        },
        [&] {
          return std::vector<Value>{a.i32(0), a.i32(0)};
        });
    Value valid = arith::AndIOp::create(b, inRange, sort::isRouted(a, loaded[0], plan.experts));
    Value key = a.select(valid, loaded[0], a.i32(plan.experts)); // unrouted: above every expert
    Value laneI32 = a.toI32(lane);
    Value bm = a.i32(plan.blockM);
    auto paddedRows = [&](Value rows) {
      return a.mul(a.divu(a.add(rows, a.i32(plan.blockM - 1)), bm), bm);
    };
    // Carried: lanes not yet seen (a ballot), count, rank, segment start, rows used.
    SmallVector<Type> types = {maskType, i32, i32, i32, i32};
    auto loop = scf::WhileOp::create(
        b, types, ValueRange{w.ballot(valid), a.i32(0), a.i32(0), a.i32(0), a.i32(0)});
    {
      OpBuilder::InsertionGuard guard(b);
      Block *before = b.createBlock(&loop.getBefore(), {}, types,
                                    SmallVector<Location>(types.size(), b.getLoc()));
      scf::ConditionOp::create(b, a.cmp(CmpIPredicate::ne, before->getArgument(0), w.mask(0)),
                               before->getArguments());
      Block *after = b.createBlock(&loop.getAfter(), {}, types,
                                   SmallVector<Location>(types.size(), b.getLoc()));
      Value pending = after->getArgument(0);
      Value expert = w.readLane(key, w.lowestLane(pending));
      Value same = a.cmp(CmpIPredicate::eq, key, expert);
      Value lanes = w.ballot(same);
      Value count = w.popCount(lanes);
      Value padded = paddedRows(count);
      Value below = w.countBelow(lanes, laneI32);
      Value higher = a.cmp(CmpIPredicate::ult, expert, key);
      scf::YieldOp::create(
          b,
          ValueRange{arith::AndIOp::create(b, pending, arith::XOrIOp::create(b, lanes, w.mask(-1))),
                     a.select(same, count, after->getArgument(1)),
                     a.select(same, below, after->getArgument(2)),
                     a.add(after->getArgument(3), a.select(higher, padded, a.i32(0))),
                     a.add(after->getArgument(4), padded)});
    }
    Value count = loop.getResult(1), rank = loop.getResult(2);
    Value start = loop.getResult(3), used = loop.getResult(4);
    Value padded = paddedRows(count);
    Value first = arith::AndIOp::create(b, valid, a.cmp(CmpIPredicate::eq, rank, a.i32(0)));
    ifThen(b, a.cmp(CmpIPredicate::eq, lane, a.idx(0)), [&] {
      memref::StoreOp::create(b, used, s.numValid, a.idx(0));
      memref::StoreOp::create(b, s.tokensI32, s.numValid, a.idx(1));
    });
    // The expert's blocks and padding rows [start + count, start + padded):
    // up to 3 single rows, then 4 a store (the padding ends on a block).
    ifThen(b, first, [&] {
      Value firstBlock = a.toIndex(a.divu(start, bm));
      sort::forStrided(b, a.idx(0), a.toIndex(a.divu(padded, bm)), a.idx(1),
                       [&](Value q) { storeBlockExpert(b, a, s, key, a.add(firstBlock, q)); });
      Value sentinel = a.bitOr(a.i32(int64_t(plan.topk) << 24), s.tokensI32);
      Value pad = a.toIndex(a.add(start, count)), end = a.toIndex(a.add(start, padded));
      Value head = arith::AndIOp::create(b, a.add(pad, a.idx(3)), a.idx(~int64_t(3)));
      for (int64_t u = 0; u < 3; ++u) {
        Value row = a.add(pad, a.idx(u));
        ifThen(b, a.cmp(CmpIPredicate::ult, row, head), [&] {
          memref::StoreOp::create(b, sentinel, s.sortedIds, row);
          memref::StoreOp::create(b, a.f32(0.0f), s.sortedWeights, row);
        });
      }
      Value sentinels = vector::BroadcastOp::create(b, VectorType::get({4}, i32), sentinel);
      Value zeros = vector::BroadcastOp::create(b, VectorType::get({4}, f32), a.f32(0.0f));
      sort::forStrided(b, head, end, a.idx(4), [&](Value row) {
        vector::StoreOp::create(b, sentinels, s.sortedIds, ValueRange{row});
        vector::StoreOp::create(b, zeros, s.sortedWeights, ValueRange{row});
      });
    });
    // The entries' rows last, after every loop: no register of their data is
    // reused while they are in flight, so nothing waits for them.
    ifThen(b, valid, [&] {
      Value topk = a.idx(plan.topk);
      Value packed =
          a.bitOr(a.shl(a.toI32(a.remu(lane, topk)), a.i32(24)), a.toI32(a.divu(lane, topk)));
      Value row = a.toIndex(a.add(start, rank));
      memref::StoreOp::create(b, packed, s.sortedIds, row);
      memref::StoreOp::create(b, arith::BitcastOp::create(b, f32, loaded[1]), s.sortedWeights, row);
    });
  });
}

} // namespace

gpu::GPUFuncOp buildSortKernel(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module, StringRef symbol,
                               const SortPlan &plan, const TargetInfo &target) {
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  const int64_t waves = plan.waves();
  KernelSignature sig = sortKernelSignature(symbol, plan);
  // Segment starts, a histogram and an owner row per wave, the waves' totals:
  // declared statically, or dynamic shared memory (SortPlan::dynamicShared);
  // whole 16-byte units, 16-byte aligned (SortPlan::scatterLdsWords).
  const int64_t rows = SortPlan::scatterLdsWords(plan.histRow() * waves);
  SmallVector<MemRefType> lds = {ldsBufferType(ctx, i32, SortPlan::scatterLdsWords(plan.experts)),
                                 ldsBufferType(ctx, i32, rows), ldsBufferType(ctx, i32, rows),
                                 ldsBufferType(ctx, i32, SortPlan::scatterLdsWords(waves))};
  SmallVector<Type> elems = {i32, f32, i32, i32, i32, f32, i32, i32};
  if (plan.stageReadyCount)
    elems.push_back(i32);
  elems.push_back(i32);
  gpu::GPUFuncOp func =
      createKernel(b, module, sig, elems,
                   plan.dynamicShared ? ArrayRef<MemRefType>() : ArrayRef<MemRefType>(lds));
  if (!plan.dynamicShared)
    for (unsigned i = 0; i < lds.size(); ++i)
      func.setWorkgroupAttributionAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                                       b.getI64IntegerAttr(16));
  SmallVector<Value> buffers = plan.dynamicShared
                                   ? dynamicLdsBuffers(b, lds)
                                   : SmallVector<Value>(func.getWorkgroupAttributions());
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
  if (plan.stageReadyCount) {
    s.stageReady = entry.getArgument(8);
    s.stageReadyCount = plan.stageReadyCount;
  }
  s.tokensI32 = entry.getArgument(plan.stageReadyCount ? 9 : 8);
  s.seg = buffers[0];
  s.hist = buffers[1];
  s.owner = buffers[2];
  s.buf = buffers[3];

  Arith a{b};
  Value c1 = a.idx(1), cWave = a.idx(plan.waveSize);
  Value experts = a.idx(plan.experts);
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value chunk = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value tokens = a.toIndex(s.tokensI32);
  // Few entries: one workgroup sorts them all (SortPlan::singleChunk);
  // sort_count and sort_scan did not run, this workgroup's histograms are the
  // totals and its bases are zero.
  Value all = a.mul(tokens, a.idx(plan.topk));
  Value single = a.cmp(CmpIPredicate::ule, all, a.idx(plan.singleEntries));
  // sm_90a: sorting alone, the one workgroup lets the next kernel launch now
  // (its workgroups wait for this grid at their entry, moe-attach-grid-
  // dependencies, on SMs the sort does not use), so that its launch overlaps
  // the sort. Not with several workgroups: the waiting ones would hold SMs a
  // chunk needs.
  if (target.isNvptx())
    ifThen(b, single,
           [&] { NVVM::GriddepcontrolOp::create(b, NVVM::GridDepActionKind::launch_dependents); });
  // Up to plan.tinyEntries entries: wave 0 alone, in registers.
  scf::IfOp tinySplit;
  if (plan.tinyEntries > 0) {
    tinySplit = scf::IfOp::create(b, a.cmp(CmpIPredicate::ule, all, a.idx(plan.tinyEntries)),
                                  /*withElse=*/true);
    b.setInsertionPointToStart(tinySplit.thenBlock());
    emitTinySort(b, a, plan, s, tid, all, target);
    b.setInsertionPointToStart(tinySplit.elseBlock());
  }
  Value chunks = a.select(
      single, c1, a.divu(a.add(tokens, a.idx(plan.chunkTokens - 1)), a.idx(plan.chunkTokens)));
  sort::EntryRange range = sort::chunkEntries(a, plan, chunk, tokens);
  range.end = a.select(single, all, range.end);

  // Histograms 0, owners "no lane": four i32 a store (the rows are whole
  // 16-byte units).
  VectorType i32x4 = VectorType::get({4}, i32);
  Value zeros4 = vector::BroadcastOp::create(b, i32x4, a.i32(0));
  Value noLane4 = vector::BroadcastOp::create(b, i32x4, a.i32(plan.waveSize));
  sort::forStrided(b, a.mul(tid, a.idx(4)), a.idx(rows), a.idx(4 * plan.threads), [&](Value i) {
    vector::StoreOp::create(b, zeros4, s.hist, ValueRange{i}, /*nontemporal=*/false,
                            llvm::MaybeAlign(16));
    vector::StoreOp::create(b, noLane4, s.owner, ValueRange{i}, /*nontemporal=*/false,
                            llvm::MaybeAlign(16));
  });
  gpu::BarrierOp::create(b);

  // Wave w takes the w-th contiguous part of the chunk's entries.
  Value wave = a.divu(tid, cWave), lane = a.remu(tid, cWave);
  Value n = a.sub(range.end, range.begin);
  Value part = a.divu(a.add(n, a.idx(waves - 1)), a.idx(waves));
  Value partBegin = a.add(range.begin, arith::MinUIOp::create(b, a.mul(wave, part), n));
  Value partEnd = a.add(range.begin, arith::MinUIOp::create(b, a.mul(a.add(wave, c1), part), n));
  Value histRow = a.mul(wave, a.idx(plan.histRow()));
  // The placing walks the wave's part a wave of entries at a time, in entry order;
  // each round loads the next round's ids and weights before placing its
  // own, so that their latency hides behind the placing, and the first
  // round's load here behind the counting and the layout. Past the part a
  // lane loads the part's first entry (there whenever a round runs).
  Value rounds = a.divu(a.add(a.sub(partEnd, partBegin), a.idx(plan.waveSize - 1)), cWave);
  Value topk = a.idx(plan.topk);
  auto entryOf = [&](Value r) { return a.add(a.add(partBegin, a.mul(r, cWave)), lane); };
  auto loadRound = [&](Value r) -> std::vector<Value> {
    Value i = entryOf(r);
    Value at = a.select(a.cmp(CmpIPredicate::ult, i, partEnd), i, partBegin);
    return {memref::LoadOp::create(b, s.topkIds, at),
            arith::BitcastOp::create(b, i32, memref::LoadOp::create(b, s.topkWeights, at))};
  };
  std::vector<Value> first = ifElse(
      b, a.cmp(CmpIPredicate::ult, partBegin, partEnd), 2, [&] { return loadRound(a.idx(0)); },
      [&] {
        return std::vector<Value>{a.i32(0), a.i32(0)};
      });
  // What the layout and the bases read from sort_scan's outputs does not
  // depend on this kernel's counting: the expert totals of the thread's
  // experts and the chunk's bases (experts tid + j * threads) load here,
  // their latency behind the counting (alone: none, zeros). A thread has k
  // of each: its contiguous layout experts and its strided base experts.
  const int64_t k = plan.expertsPerThread();
  Value countsRow = a.mul(chunk, experts);
  std::vector<Value> mine = layoutExperts(b, a, plan, tid);
  std::vector<Value> early = ifElse(
      b, single, 2 * k, [&] { return std::vector<Value>(2 * k, a.i32(0)); },
      [&] {
        std::vector<Value> loads; // issued together
        for (Value e : mine)
          loads.push_back(memref::LoadOp::create(b, s.totals, e));
        for (int64_t j = 0; j < k; ++j) {
          Value e = arith::MinUIOp::create(b, a.add(tid, a.idx(j * plan.threads)),
                                           a.idx(plan.experts - 1));
          loads.push_back(memref::LoadOp::create(b, s.counts, a.add(countsRow, e)));
        }
        return loads;
      });
  ArrayRef<Value> chunkTotals = ArrayRef<Value>(early).take_front(k);
  ArrayRef<Value> chunkBases = ArrayRef<Value>(early).drop_front(k);
  // A chunk's part in one step; a single workgroup's in at most
  // plan.singleEntries / chunkEntries() steps.
  sort::forStrided(b, partBegin, partEnd, a.idx(plan.waveSize * plan.partPerLane()),
                   [&](Value from) {
                     sort::countEntries(b, a, plan, s.topkIds, s.hist, histRow, a.add(from, lane),
                                        partEnd, partBegin, plan.waveSize, plan.partPerLane());
                   });
  gpu::BarrierOp::create(b);
  emitLayout(b, a, plan, target, s, tid, chunk, chunks, single, mine, chunkTotals);
  gpu::BarrierOp::create(b); // segment starts written, histograms read

  // Per-wave bases: segment start + the chunk's base + the earlier waves'.
  for (int64_t j = 0; j < k; ++j) {
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

  auto loop = scf::ForOp::create(b, a.idx(0), rounds, c1, ValueRange{first[0], first[1]});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value r = loop.getInductionVar();
    Value id = loop.getRegionIterArgs()[0];
    Value weight = arith::BitcastOp::create(b, f32, loop.getRegionIterArgs()[1]);
    std::vector<Value> next = loadRound(a.add(r, c1));
    Value i = entryOf(r);
    Value inRange = a.cmp(CmpIPredicate::ult, i, partEnd);
    Value valid = arith::AndIOp::create(b, inRange, sort::isRouted(a, id, plan.experts));
    Value token = a.toI32(a.divu(i, topk)), slot = a.toI32(a.remu(i, topk));
    Value packed = a.bitOr(a.shl(slot, a.i32(24)), token);
    Value row = a.toIndex(emitPeel(b, a, s, plan, target, histRow, lane, id, valid));
    ifThen(b, valid, [&] {
      memref::StoreOp::create(b, packed, s.sortedIds, row);
      memref::StoreOp::create(b, weight, s.sortedWeights, row);
    });
    scf::YieldOp::create(b, ValueRange{next[0], next[1]});
  }
  if (tinySplit)
    b.setInsertionPointAfter(tinySplit);
  gpu::ReturnOp::create(b);
  return func;
}

} // namespace moegen
