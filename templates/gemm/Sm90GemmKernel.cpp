//===- Sm90GemmKernel.cpp - The stage-1 and stage-2 GEMMs for sm_90a ------===//

#include "templates/gemm/Sm90GemmKernel.h"

#include "templates/epilogue/ActivationLowering.h"
#include "templates/epilogue/MxQuantize.h"
#include "templates/gemm/GemmRows.h"
#include "templates/gemm/StageReady.h"
#include "templates/sm90/E2m1Table.h"
#include "templates/sm90/MxSoftwareDecode.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <functional>
#include <numeric>
#include <optional>

using namespace mlir;
using arith::CmpIPredicate;

namespace moegen {

namespace {

constexpr int64_t kChunk = Sm90GemmLayout::kChunk;
constexpr int64_t kStride = Sm90GemmLayout::kRowStride;

/// Where one thread's share of a K block comes from and goes to, fixed for
/// an M tile: a unit is 8 consecutive elements of one staged row, or the
/// whole 32-element row block where its bytes are contiguous in global memory
/// (fp4 weight chunks): one wide load and one scale per block. A is bf16
/// (carriesDecodedMx).
struct StageUnit {
  Value global;   // A: element offset at K = 0; B: byte offset at K = 0
  Value scaleRow; // B only
  Value valid;    // A only: a routed row (padding rows stage zeros)
  Value shared;   // i32 index of the unit within the K-group's staging
  Value inRange;  // null when every thread has this unit
  // Register weights: the unit's staged row and its first 8-element group
  // within the step.
  Value row, group;
};

struct Sm90GemmBuilder : GemmKernelArgs {
  ImplicitLocOpBuilder &b;
  Arith a;
  const MoeSpec &spec;
  const GemmPlan &p;
  const StageSchedule &s;
  const Sm90GemmLayout &l;
  const TargetInfo &target;
  bool stage1;
  int64_t K, N, I, topk, halves, groupThreads;

  Value tokens; // the tokens argument as an index
  Value lane, quadRow, quadCol, waveN, waveK, gtid, bidN, bidK, bidM, expert, shared;
  Value gridM; // the persistent grid's workgroups along M: the step to a workgroup's next tile
  Value gridN, firstN; // loopN: the step to a workgroup's next N tile, and its first
  Value usedTiles;     // the M tiles with sorted rows in use (num_valid_ids)
  /// The current M tile's row tiles up to its last routed row (null: all);
  /// registerMainLoopLive's, for the epilogue.
  Value liveRowTiles;
  /// carryWeights: the weights loaded ahead for this tile by the previous one
  /// (the first `prefetch` steps' loads, then the expert they are of).
  ValueRange carriedIn;

  Sm90GemmBuilder(ImplicitLocOpBuilder &b, const MoeSpec &spec, const GemmPlan &p,
                  const TargetInfo &target)
      : b(b), a{b}, spec(spec), p(p), s(p.schedule), l(p.sm90), target(target),
        stage1(p.stage == StageId::Stage1) {
    K = p.k;
    N = p.n;
    I = spec.problem.interDim;
    topk = spec.problem.topk;
    halves = stage1 ? 2 : 1;
    groupThreads = l.warpsN * 32;
  }

  Type f32() { return b.getF32Type(); }
  Type i32() { return b.getI32Type(); }
  Value andI(Value x, int64_t m) { return arith::AndIOp::create(b, x, a.idx(m)); }
  Value shr(Value x, int64_t n) { return arith::ShRUIOp::create(b, x, a.idx(n)); }
  Value load(Value mem, Value idx) { return memref::LoadOp::create(b, mem, ValueRange{idx}); }
  void store(Value v, Value mem, Value idx) { memref::StoreOp::create(b, v, mem, ValueRange{idx}); }
  /// A vector load or store with the alignment the access has (the default
  /// would be the element's, splitting it into scalar accesses on NVPTX).
  Value vload(VectorType t, Value mem, Value idx, int64_t align) {
    return vector::LoadOp::create(b, t, mem, ValueRange{idx}, /*nontemporal=*/false,
                                  llvm::MaybeAlign(align));
  }
  void vstore(Value v, Value mem, Value idx, int64_t align) {
    vector::StoreOp::create(b, v, mem, ValueRange{idx}, /*nontemporal=*/false,
                            llvm::MaybeAlign(align));
  }
  void ifThen(Value cond, llvm::function_ref<void()> body) { moegen::ifThen(b, cond, body); }

  GemmRowInfo rowInfo(Value rowInTile) {
    return emitGemmRowInfo(a, sortedIds, a.add(a.mul(bidM, a.idx(s.tileM)), rowInTile), tokens,
                           topk);
  }

  int64_t weightRows() const { return stage1 ? 2 * I : N; }
  int64_t weightRowBytes() const { return halfBytesPerElement(p.bFormat) * K / 2; }
  /// Elements of one unit of A (bf16) or of the weights.
  static int64_t unitElems(DType t, bool isA) { return !isA && t == DType::MXFP4 ? kChunk : 8; }
  static int64_t unitBytes(DType t, bool isA) {
    return halfBytesPerElement(t) * unitElems(t, isA) / 2;
  }

  // --- Staging ------------------------------------------------------------

  /// The units this thread stages per K block: `rows` rows of `perRow`
  /// units, spread over the K-group's threads.
  template <typename Fn> SmallVector<StageUnit> planUnits(int64_t rows, int64_t perRow, Fn fill) {
    SmallVector<StageUnit> units;
    int64_t count = rows * perRow;
    for (int64_t j = 0; j * groupThreads < count; ++j) {
      Value c = a.add(gtid, a.idx(j * groupThreads));
      Value in;
      if ((j + 1) * groupThreads > count) {
        in = a.cmp(CmpIPredicate::ult, c, a.idx(count));
        c = a.select(in, c, a.idx(0));
      }
      StageUnit u = fill(a.divu(c, a.idx(perRow)), a.remu(c, a.idx(perRow)));
      u.inRange = in;
      units.push_back(u);
    }
    return units;
  }

  /// The element offset of a staged row's A row: the token's (stage 1) or
  /// the routed slot's (stage 2); row 0's for padding rows (a valid address,
  /// never copied from).
  Value aRowStart(const GemmRowInfo &ri) {
    Value row = stage1 ? ri.token : a.add(a.mul(ri.token, a.idx(topk)), ri.slot);
    return a.mul(a.select(ri.valid, row, a.idx(0)), a.idx(K));
  }

  /// The A units of one main-loop step of `stepK` elements. Up to 4 lanes
  /// share a row (64 contiguous bytes of bf16 A per 4 units), each taking
  /// every 4th unit of it, so that a thread stages few rows: their row
  /// lookups and addresses are what stays live through the main loop.
  SmallVector<StageUnit> planAUnits(int64_t stepK) {
    int64_t elems = unitElems(p.aFormat, true);
    int64_t perRow = stepK / elems;
    int64_t lanesPerRow = std::min<int64_t>(perRow, 4);
    int64_t rowsPerPass = groupThreads / lanesPerRow;
    Value laneRow = a.divu(gtid, a.idx(lanesPerRow));
    Value laneUnit = a.remu(gtid, a.idx(lanesPerRow));
    SmallVector<StageUnit> units;
    for (int64_t pass = 0; pass * rowsPerPass < l.aRows; ++pass) {
      Value r = a.add(laneRow, a.idx(pass * rowsPerPass));
      Value in;
      if ((pass + 1) * rowsPerPass > l.aRows) {
        in = a.cmp(CmpIPredicate::ult, r, a.idx(l.aRows));
        r = a.select(in, r, a.idx(0));
      }
      GemmRowInfo ri = rowInfo(r);
      Value rowStart = aRowStart(ri);
      for (int64_t up = 0; up < perRow / lanesPerRow; ++up) {
        Value u = a.add(laneUnit, a.idx(up * lanesPerRow));
        StageUnit su;
        su.global = a.add(rowStart, a.mul(u, a.idx(elems)));
        su.valid = ri.valid;
        su.shared = a.add(a.mul(r, a.idx(kStride / 4)), a.mul(u, a.idx(4)));
        su.row = r;
        su.group = a.mul(u, a.idx(elems / 8));
        su.inRange = in;
        units.push_back(su);
      }
    }
    return units;
  }

  SmallVector<StageUnit> planBUnits() {
    Value tileCol0 = a.mul(bidN, a.idx(s.tileN));
    Value expertBase = a.mul(expert, a.idx(weightRows() * weightRowBytes()));
    return planUnits(l.bRows, kChunk / unitElems(p.bFormat, false), [&](Value rr, Value u) {
      // Staged row rr: half rr / tile_n, column rr % tile_n of the tile.
      Value half = a.divu(rr, a.idx(s.tileN));
      Value col = a.add(tileCol0, a.remu(rr, a.idx(s.tileN)));
      Value wr = emitWeightRowOf(a, spec, stage1, col, 0);
      if (stage1) {
        Value up = emitWeightRowOf(a, spec, stage1, col, 1);
        wr = a.select(a.cmp(CmpIPredicate::eq, half, a.idx(1)), up, wr);
      }
      // (16,16) preshuffle: 16-row groups of whole rows, 16-byte chunks along
      // K, each chunk of the group's 16 rows contiguous (Preshuffle.h).
      Value unitByte = a.mul(u, a.idx(unitBytes(p.bFormat, false)));
      StageUnit su;
      su.global = a.add(expertBase, a.mul(shr(wr, 4), a.idx(16 * weightRowBytes())));
      su.global = a.add(su.global, a.mul(andI(wr, 15), a.idx(16)));
      su.global = a.add(su.global, a.add(a.mul(shr(unitByte, 4), a.idx(256)), andI(unitByte, 15)));
      su.scaleRow = a.add(a.mul(expert, a.idx(weightRows())), wr);
      su.shared = a.add(a.mul(a.add(a.idx(l.aRows), rr), a.idx(kStride / 4)), a.mul(u, a.idx(4)));
      return su;
    });
  }

  /// 8 e4m3 elements (two i32 words) times `scale`, as bf16. Each code's
  /// sign and magnitude bits are moved into an f32 whose value is the
  /// element times 2^-120: e4m3's exponent field lines up with f32's low
  /// exponent bits, and its subnormals (exponent 0) with f32's. Two exact
  /// power-of-two products then give the element and the element times the
  /// scale, rounded to bf16. (e2m1 codes take the packed route of
  /// dequantWord.)
  Value dequantFp8(ArrayRef<Value> words, Value scale) {
    SmallVector<Value> vals;
    auto shift = [&](Value w, int64_t by) -> Value {
      if (by >= 0)
        return by == 0 ? w : arith::ShLIOp::create(b, w, a.i32(by)).getResult();
      return arith::ShRUIOp::create(b, w, a.i32(-by));
    };
    auto bitsAnd = [&](Value x, uint32_t m) {
      return arith::AndIOp::create(b, x, a.i32(static_cast<int32_t>(m)));
    };
    Value unscale = arith::ConstantFloatOp::create(b, b.getF32Type(), llvm::APFloat(0x1p120f));
    for (int64_t e = 0; e < 8; ++e) {
      Value word = words[e / 4];
      // Code k = e % 4: magnitude bits 8k..8k+6 to 20..26, sign 8k+7 to 31.
      int64_t k = e % 4;
      Value mag = bitsAnd(shift(word, 20 - 8 * k), 0x07F00000u);
      Value sign = bitsAnd(shift(word, 24 - 8 * k), 0x80000000u);
      Value nan = a.cmp(CmpIPredicate::eq, mag, a.i32(0x07F00000));
      Value bits = a.select(nan, a.i32(0x7FC00000), arith::OrIOp::create(b, mag, sign));
      Value v = arith::BitcastOp::create(b, f32(), bits);
      v = arith::MulFOp::create(b, v, unscale);
      v = arith::MulFOp::create(b, v, scale);
      vals.push_back(arith::TruncFOp::create(b, b.getBF16Type(), v));
    }
    return vector::FromElementsOp::create(b, VectorType::get({8}, b.getBF16Type()), vals);
  }

  /// The global loads of one unit for K block `kb`, held in registers until
  /// the unit is staged: its bytes (bf16 A: its elements) and, for MX
  /// weights, its scale byte. Units past the group's count load unit 0's
  /// (valid) address; only their store is skipped.
  SmallVector<Value, 2> loadUnit(DType format, Value mem, Value scaleMem, const StageUnit &u,
                                 Value kb, bool isA) {
    if (format == DType::BF16) {
      if (isA)
        return {vload(VectorType::get({8}, b.getBF16Type()), mem,
                      a.add(u.global, a.mul(kb, a.idx(kChunk))), 16)};
      Value off = a.add(u.global, a.mul(kb, a.idx(4 * 256))); // 4 chunks of 8 per block
      return {vload(VectorType::get({16}, b.getI8Type()), mem, off, 16)};
    }
    assert(!isA && "A is bf16 on sm_90a (carriesDecodedMx)");
    Value off = a.add(u.global, a.mul(kb, a.idx(format == DType::MXFP4 ? 256 : 512)));
    int64_t bytes = unitBytes(format, isA);
    Value data =
        vload(VectorType::get({bytes}, b.getI8Type()), mem, off, std::min<int64_t>(bytes, 16));
    return {data, load(scaleMem, emitE8m0ShuffleOffset(a, u.scaleRow, kb, K / 32))};
  }

  /// One loaded unit as 8-element pieces of 4 i32 words (bf16 pairs), for
  /// the staging stores.
  SmallVector<Value, 4> convertUnit(DType format, bool isA, ArrayRef<Value> raw,
                                    const StageUnit &u) {
    VectorType v4i32 = VectorType::get({4}, i32());
    SmallVector<Value, 4> pieces;
    if (format == DType::BF16) {
      pieces.push_back(vector::BitCastOp::create(b, v4i32, raw[0]));
    } else {
      int64_t bytes = unitBytes(format, isA);
      Value w = vector::BitCastOp::create(b, VectorType::get({bytes / 4}, i32()), raw[0]);
      SmallVector<Value> words;
      for (int64_t i = 0; i < bytes / 4; ++i)
        words.push_back(vector::ExtractOp::create(b, w, ArrayRef<int64_t>{i}));
      if (format == DType::MXFP4) {
        // Each word's 4 code pairs, with the fragments' table decoding.
        E2m1Table table = e2m1Table(e8m0ToBf16x2(raw[1]));
        for (Value word : words)
          pieces.push_back(vector::FromElementsOp::create(b, v4i32, dequantWord(word, table)));
      } else {
        Value scale = sm90::emitE8m0ToF32(b, arith::ExtUIOp::create(b, i32(), raw[1]));
        for (int64_t j = 0; 2 * j < bytes / 4; ++j)
          pieces.push_back(vector::BitCastOp::create(
              b, v4i32, dequantFp8(ArrayRef<Value>(words).slice(2 * j, 2), scale)));
      }
    }
    if (u.valid)
      for (Value &v : pieces)
        v = a.select(u.valid, v,
                     arith::ConstantOp::create(b, DenseElementsAttr::get(v4i32, int32_t(0))));
    return pieces;
  }

  /// Appends the loads of every unit of A and B for K block `kb`.
  SmallVector<Value> loadBlock(ArrayRef<StageUnit> aUnits, ArrayRef<StageUnit> bUnits, Value kb) {
    SmallVector<Value> raw;
    for (const StageUnit &u : aUnits)
      llvm::append_range(raw, loadUnit(p.aFormat, aBuf, Value(), u, kb, /*isA=*/true));
    for (const StageUnit &u : bUnits)
      llvm::append_range(raw, loadUnit(p.bFormat, wBuf, wScale, u, kb, /*isA=*/false));
    return raw;
  }

  /// Dequantizes and stores the loads of `loadBlock` at `base`: piece j (8
  /// elements) of unit u at i32 index `slot(u, j)`.
  void stageBlock(ArrayRef<StageUnit> aUnits, ArrayRef<StageUnit> bUnits, ArrayRef<Value> raw,
                  Value base, function_ref<Value(const StageUnit &, int64_t)> slot) {
    size_t next = 0;
    auto stage = [&](const StageUnit &u, DType format, bool isA) {
      size_t n = format == DType::BF16 ? 1 : 2;
      ArrayRef<Value> mine = raw.slice(next, n);
      next += n;
      auto body = [&] {
        SmallVector<Value, 4> pieces = convertUnit(format, isA, mine, u);
        for (auto [j, v] : llvm::enumerate(pieces))
          vstore(v, shared, a.add(base, slot(u, j)), 16);
      };
      if (u.inRange)
        ifThen(u.inRange, body);
      else
        body();
    };
    for (const StageUnit &u : aUnits)
      stage(u, p.aFormat, /*isA=*/true);
    for (const StageUnit &u : bUnits)
      stage(u, p.bFormat, /*isA=*/false);
  }

  // --- MMA ----------------------------------------------------------------

  int accIndex(int64_t mt, int64_t nt, int64_t half, int64_t r) const {
    return static_cast<int>(((half * l.mTiles + mt) * l.nTiles + nt) * 4 + r);
  }

  Value lds32(Value idx) { return load(shared, idx); }

  /// acc (4 f32) += A (16x16 bf16, 4 words) x B (16x8 bf16, 2 words).
  void mma(ArrayRef<Value> aFrag, ArrayRef<Value> bFrag, MutableArrayRef<Value> acc) {
    MLIRContext *ctx = b.getContext();
    Type res = LLVM::LLVMStructType::getLiteral(ctx, {f32(), f32(), f32(), f32()});
    auto op = NVVM::MmaOp::create(
        b, res, aFrag, bFrag, SmallVector<Value>(acc.begin(), acc.end()),
        ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
    for (int64_t r = 0; r < 4; ++r)
      acc[r] = LLVM::ExtractValueOp::create(b, op.getResult(), ArrayRef<int64_t>{r});
  }

  /// The MMAs of one staged K block (two k16 steps). Fragment layouts
  /// (PTX ISA, mma.m16n8k16 bf16): g = lane / 4, q = lane % 4; A word i holds
  /// row g + 8 (i % 2), columns 2q + 8 (i / 2) + {0, 1}; B word j holds column
  /// g, rows 2q + 8 j + {0, 1}; C register r is row g + 8 (r / 2), column
  /// 2q + r % 2.
  void mmaBlock(Value groupBase, MutableArrayRef<Value> acc) {
    for (int64_t ks = 0; ks < kChunk / 16; ++ks) {
      Value colWord = a.add(a.idx(ks * 8), quadCol);
      SmallVector<SmallVector<Value, 4>> aFrags;
      for (int64_t mt = 0; mt < l.mTiles; ++mt) {
        Value row = a.add(groupBase, a.mul(a.add(a.idx(mt * 16), quadRow), a.idx(kStride / 4)));
        Value base = a.add(row, colWord);
        int64_t down = 8 * kStride / 4;
        aFrags.push_back({lds32(base), lds32(a.add(base, a.idx(down))),
                          lds32(a.add(base, a.idx(4))), lds32(a.add(base, a.idx(down + 4)))});
      }
      for (int64_t half = 0; half < halves; ++half)
        for (int64_t nt = 0; nt < l.nTiles; ++nt) {
          int64_t col = l.aRows + half * s.tileN + nt * 8;
          Value row = a.add(a.add(a.idx(col), a.mul(waveN, a.idx(l.nPerWarp))), quadRow);
          Value base = a.add(a.add(groupBase, a.mul(row, a.idx(kStride / 4))), colWord);
          SmallVector<Value, 2> bFrag = {lds32(base), lds32(a.add(base, a.idx(4)))};
          for (int64_t mt = 0; mt < l.mTiles; ++mt)
            mma(aFrags[mt], bFrag, MutableArrayRef<Value>(acc).slice(accIndex(mt, nt, half, 0), 4));
        }
    }
  }

  /// Whether this stage multiplies its rows by their routing weights.
  bool appliesRoutingWeight() const { return stage1 == spec.problem.doweightStage1; }

  /// The stage's N tiles: the end of a loopN workgroup's N loop.
  Value nTilesN() { return a.idx(N / s.tileN); }

  /// The first output column (weight row of a half) of this warp's columns.
  Value warpColBase() {
    return a.add(a.mul(bidN, a.idx(s.tileN)), a.mul(waveN, a.idx(l.nPerWarp)));
  }

  /// The first K element of this workgroup's split and warp group.
  Value groupKStart() {
    return a.add(a.mul(bidK, a.idx(p.kSlice)), a.mul(waveK, a.idx(p.kPerWave)));
  }

  /// The main loop: `trips` trips carrying the accumulators (zero at first)
  /// and `carried` (values loaded ahead); `body(i, acc, carried)` appends to
  /// the updated accumulators what the next trip carries. Not unrolled: a
  /// trip already gives the scheduler enough independent loads, and
  /// unrolling would multiply the live registers. With k_wave > 1 a barrier
  /// follows, as the reduction reuses the staging. Returns the accumulators;
  /// `after` gets what the last trip carried on.
  SmallVector<Value>
  emitKLoop(int64_t trips, ArrayRef<Value> carried,
            function_ref<void(Value, SmallVectorImpl<Value> &, ArrayRef<Value>)> body,
            SmallVectorImpl<Value> *after = nullptr, ArrayRef<Value> accIn = {}) {
    SmallVector<Value> init(l.accRegs, a.f32(0.0f));
    if (!accIn.empty())
      init.assign(accIn.begin(), accIn.end());
    llvm::append_range(init, carried);
    auto loop = scf::ForOp::create(b, a.idx(0), a.idx(trips), a.idx(1), init);
    disableUnroll(loop);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      auto args = loop.getRegionIterArgs();
      SmallVector<Value> acc(args.begin(), args.begin() + l.accRegs);
      SmallVector<Value> rest(args.begin() + l.accRegs, args.end());
      body(loop.getInductionVar(), acc, rest);
      scf::YieldOp::create(b, acc);
    }
    if (s.kWave > 1)
      gpu::BarrierOp::create(b);
    if (after)
      after->assign(loop.getResults().begin() + l.accRegs, loop.getResults().end());
    return SmallVector<Value>(loop.getResults().begin(), loop.getResults().begin() + l.accRegs);
  }

  /// The K loop: block i is dequantized into staging buffer i % buffers
  /// from registers loaded during block i - 1, then block i + 1's global
  /// loads are issued before the barrier and block i's MMAs, so that they
  /// are in flight while the warps compute.
  SmallVector<Value> mainLoop() {
    SmallVector<StageUnit> aUnits = planAUnits(kChunk);
    SmallVector<StageUnit> bUnits = planBUnits();
    int64_t blocks = p.kPerWave / kChunk;
    int64_t bufferWords = l.stagingBytes / 4;
    Value groupBase = a.mul(waveK, a.idx(l.buffers * bufferWords));
    Value kBlock0 = a.divu(groupKStart(), a.idx(kChunk));
    return emitKLoop(
        blocks, loadBlock(aUnits, bUnits, kBlock0),
        [&](Value i, SmallVectorImpl<Value> &acc, ArrayRef<Value> raw) {
          Value base = groupBase;
          if (l.buffers == 2)
            base = a.add(base, a.mul(andI(i, 1), a.idx(bufferWords)));
          else
            gpu::BarrierOp::create(b); // the previous block's MMAs are done
          stageBlock(aUnits, bUnits, raw, base,
                     [&](const StageUnit &u, int64_t j) { return a.add(u.shared, a.idx(4 * j)); });
          // The last block reloads itself (a valid address, never staged).
          Value nextBlock = arith::MinUIOp::create(b, a.add(i, a.idx(1)), a.idx(blocks - 1));
          SmallVector<Value> next = loadBlock(aUnits, bUnits, a.add(kBlock0, nextBlock));
          // With two buffers this barrier also orders block i - 1's MMAs
          // before block i + 1's stores into the same buffer.
          gpu::BarrierOp::create(b);
          mmaBlock(base, acc);
          llvm::append_range(acc, next);
        });
  }

  // --- Register weights (MXFP4) ------------------------------------------
  //
  // Lane (g, q) of a warp reads, for each of its weight rows (row g of an
  // 8-column MMA tile), quarter q of every superK-wide step of K: superK / 4
  // consecutive elements, i.e. superK / 32 i32 words of packed e2m1 codes,
  // all in MX block (q superK / 4) / 32 (one scale). mma.sync takes the
  // reduction in any order common to A and B: k16 step s of a step uses the
  // lane's word w = s / 2, and fragment word j the codes 2p and 2p + 1 of it,
  // p = 2 (s % 2) + j. Those are the A elements (group w of the lane's
  // quarter) that fragment word j of a plain row-major 16-byte group holds,
  // so A is staged in K order and one 16-byte shared load gives a lane its A
  // words of two k16 steps. With swapped operands (swapAB) the same words
  // fill the other operand's fragments: the weight words A's, the staged
  // rows' words B's.

  /// The i32 index of staged A row `row`, 8-element group `group` of a
  /// step. At 128 wide the groups 8..15 of a row swap their pairs of 16-byte
  /// columns (bit 1 of the 16-byte index), so that the four lanes of a quad,
  /// reading groups q * 4 + w, hit four distinct bank quarters.
  Value aGroupSlot(Value row, Value group) {
    if (l.wgmma) {
      // 8-row core matrices of 16-byte rows (128 contiguous bytes), K-adjacent
      // ones next to each other: ((row / 8) groups + group) * 128 + (row % 8) * 16.
      Value core = a.add(a.mul(shr(row, 3), a.idx(l.superK / 8)), group);
      return a.add(a.mul(core, a.idx(32)), a.mul(andI(row, 7), a.idx(4)));
    }
    Value phys = group;
    if (l.superK == 128)
      phys = arith::XOrIOp::create(b, group, a.mul(andI(shr(group, 3), 1), a.idx(2)));
    return a.add(a.mul(row, a.idx(l.aRowBytes / 4)), a.mul(phys, a.idx(4)));
  }

  /// bf16 A rows of step `step` copied to the staging at `base` with cp.async
  /// (no registers; padding rows are zero-filled: 0 source bytes).
  void copyAStep(ArrayRef<StageUnit> units, Value step, Value base, bool commit = true) {
    Value firstElem = a.mul(step, a.idx(l.superK));
    for (const StageUnit &u : units) {
      auto body = [&] {
        Value src = elementPtr(aBuf, b.getBF16Type(), a.add(u.global, firstElem));
        Value dst = elementPtr(shared, i32(), a.add(base, aGroupSlot(u.row, u.group)), 3);
        Value bytes = a.select(u.valid, a.i32(16), a.i32(0));
        NVVM::CpAsyncOp::create(b, dst, src, 16, NVVM::LoadCacheModifierKind::CG, bytes);
      };
      if (u.inRange)
        ifThen(u.inRange, body);
      else
        body();
    }
    if (commit)
      NVVM::CpAsyncCommitGroupOp::create(b);
  }

  struct LaneWeightRow {
    Value byteOffset; // the lane's first byte at K = 0
    Value scaleRow;
    Value scaleRowOffset; // its scales' row part (emitE8m0RowOffset; i32 if narrowScaleOffsets)
    /// Where the lane's rows' codes lie at the same distances from its first
    /// row's in every lane and workgroup (fixedCodeDistances): this row's, in
    /// bytes. A step then loads them from one address, the rows at constant
    /// offsets from it. (The scale bytes keep an offset a row: one address
    /// for them too left ptxas spilling in stage 2's 32-row tiles at their
    /// 128 registers, docs/sm90a.md.)
    std::optional<int64_t> codeDistance;
  };

  /// The distances in code bytes of the lane's weight rows (accIndex order)
  /// from its first, where they are the same for every lane and workgroup. A
  /// lane's rows are columns c + 8 nt + q of its halves, c a multiple of the
  /// columns' alignment and q < 8; the preshuffle repeats every 16 rows, so
  /// every c below 64 and every q decide it.
  std::optional<SmallVector<int64_t>> fixedCodeDistances() const {
    const int64_t align = std::gcd(std::gcd(s.tileN, l.nPerWarp), int64_t(64));
    auto code = [&](int64_t wr) { return wr / 16 * 16 * weightRowBytes() + wr % 16 * 16; };
    SmallVector<int64_t> distances;
    for (int64_t c = 0; c < 64; c += align)
      for (int64_t q = 0; q < 8; ++q) {
        const int64_t first = code(weightRowOf(spec, stage1, c + q, 0));
        size_t i = 0;
        for (int64_t half = 0; half < halves; ++half)
          for (int64_t nt = 0; nt < l.nTiles; ++nt, ++i) {
            const int64_t d =
                code(weightRowOf(spec, stage1, c + q + 8 * nt, static_cast<int>(half))) - first;
            if (i == distances.size())
              distances.push_back(d);
            else if (distances[i] != d)
              return std::nullopt;
          }
      }
    return distances;
  }

  /// The lane's weight rows: (half, n-tile) in accIndex order.
  SmallVector<LaneWeightRow> planLaneWeightRows() {
    Value colBase = warpColBase();
    Value expertBase = a.mul(expert, a.idx(weightRows() * weightRowBytes()));
    // Quarter q of a step: K offset q superK / 4, in block q superK / 128
    // at byte (q superK / 4 % 32) / 2 of the block's 16-byte chunk.
    Value kOff = a.mul(quadCol, a.idx(l.superK / 4));
    Value inChunk = a.add(a.mul(a.divu(kOff, a.idx(kChunk)), a.idx(256)),
                          a.divu(a.remu(kOff, a.idx(kChunk)), a.idx(2)));
    SmallVector<LaneWeightRow> rows;
    for (int64_t half = 0; half < halves; ++half)
      for (int64_t nt = 0; nt < l.nTiles; ++nt) {
        Value col = a.add(colBase, a.add(a.idx(nt * 8), quadRow));
        Value wr = emitWeightRowOf(a, spec, stage1, col, half);
        // The (16,16) preshuffle, as planBUnits reads it.
        Value off = a.add(expertBase, a.mul(shr(wr, 4), a.idx(16 * weightRowBytes())));
        off = a.add(off, a.add(a.mul(andI(wr, 15), a.idx(16)), inChunk));
        Value scaleRow = a.add(a.mul(expert, a.idx(weightRows())), wr);
        Value rowPart = emitE8m0RowOffset(a, scaleRow, K / 32);
        rows.push_back({off, scaleRow, narrowScaleOffsets() ? a.toI32(rowPart) : rowPart});
      }
    if (auto distances = fixedCodeDistances())
      for (auto [row, d] : llvm::zip_equal(rows, *distances))
        row.codeDistance = d;
    return rows;
  }
  /// Row `i`'s first code byte at a step `stepByte` bytes along its rows.
  Value rowCodeOffset(ArrayRef<LaneWeightRow> rows, size_t i, Value stepByte) {
    if (!rows[i].codeDistance)
      return a.add(rows[i].byteOffset, stepByte);
    return a.add(a.add(rows[0].byteOffset, stepByte), a.idx(*rows[i].codeDistance));
  }

  /// Whether the weight scales' byte offsets fit 32 bits: the row parts held
  /// across the K loop then take one register each, not two.
  bool narrowScaleOffsets() const {
    int64_t rows = (spec.problem.experts * weightRows() + 31) / 32 * 32;
    return rows * e8m0PaddedCols(K / 32) <= int64_t(UINT32_MAX);
  }
  /// A scale's offset: a row part (narrowed or not) plus a column part.
  Value scaleOffset(Value rowPart, Value columnPart) {
    if (rowPart.getType().isIndex())
      return a.add(rowPart, columnPart);
    return a.toIndex(a.add(rowPart, a.toI32(columnPart)));
  }

  /// The lane's codes and scale byte of every weight row at step `step` (in
  /// superK units from K = 0): 2 values per row. `rowDelta`: other weight
  /// rows (another expert's or N tile's), that many rows further.
  SmallVector<Value> loadLaneWeights(ArrayRef<LaneWeightRow> rows, Value step,
                                     Value rowDelta = nullptr) {
    int64_t bytes = l.superK / 8;
    Value blocks = a.mul(step, a.idx(l.superK / kChunk));
    Value stepByte = a.mul(blocks, a.idx(256));
    Value laneBlock = a.add(blocks, a.divu(a.mul(quadCol, a.idx(l.superK / 4)), a.idx(kChunk)));
    // The scales' offsets: the rows' parts (computed once) plus the step's
    // column part, common to all rows; other rows' parts differ by
    // rowDelta x paddedCols where rowDelta is a multiple of 32 (experts' and
    // N tiles' first rows are).
    Value scaleStep = emitE8m0ColumnOffset(a, laneBlock);
    bool wholeRowGroups = weightRows() % 32 == 0 && s.tileN % 32 == 0;
    if (rowDelta) {
      stepByte = a.add(stepByte, a.mul(rowDelta, a.idx(weightRowBytes())));
      if (wholeRowGroups)
        scaleStep = a.add(scaleStep, a.mul(rowDelta, a.idx(e8m0PaddedCols(K / 32))));
    }
    SmallVector<Value> raw;
    for (size_t i = 0; i < rows.size(); ++i) {
      raw.push_back(vload(VectorType::get({bytes}, b.getI8Type()), wBuf,
                          rowCodeOffset(rows, i, stepByte), bytes));
      Value offset =
          rowDelta && !wholeRowGroups
              ? a.add(emitE8m0RowOffset(a, a.add(rows[i].scaleRow, rowDelta), K / 32), scaleStep)
              : scaleOffset(rows[i].scaleRowOffset, scaleStep);
      raw.push_back(load(wScale, offset));
    }
    return raw;
  }

  /// carryWeights: which weight rows a tile's loads are of, its first
  /// weight row (expert and N tile); `experts` x weightRows() for none.
  Value workTag(Value e, Value n) {
    return a.add(a.mul(e, a.idx(weightRows())), a.mul(n, a.idx(s.tileN)));
  }

  /// carryWeights: the tag of the workgroup's next tile and the weight rows
  /// from this tile's to its (0 when there is none: the loads stay valid
  /// addresses, never used). The next tile is the next M tile's (M tile +
  /// grid.y) at the same N tile; with loopN, the next N tile (N tile +
  /// grid.x) of this M tile while there is one, then the next M tile's first.
  std::pair<Value, Value> nextWork() {
    Value next = a.add(bidM, gridM);
    Value block = arith::MinUIOp::create(b, next, a.sub(usedTiles, a.idx(1)));
    if (p.mTilesPerSortBlock > 1)
      block = a.divu(block, a.idx(p.mTilesPerSortBlock));
    Value nextExpert = a.toIndex(load(sortedExperts, block));
    Value known =
        arith::AndIOp::create(b, a.cmp(CmpIPredicate::ult, next, usedTiles),
                              a.cmp(CmpIPredicate::ult, nextExpert, a.idx(spec.problem.experts)));
    Value nextN = bidN;
    if (l.loopN) {
      Value sameM = a.cmp(CmpIPredicate::ult, a.add(bidN, gridN), nTilesN());
      known = arith::OrIOp::create(b, known, sameM);
      nextExpert = a.select(sameM, expert, nextExpert);
      nextN = a.select(sameM, a.add(bidN, gridN), firstN);
    }
    Value tag = workTag(nextExpert, nextN);
    // (Index arithmetic wraps: earlier rows give a negative delta.)
    return {a.select(known, tag, noWork()),
            a.select(known, a.sub(tag, workTag(expert, bidN)), a.idx(0))};
  }
  Value noWork() { return a.idx(spec.problem.experts * weightRows()); }

  /// What the persistent loop starts with (carryWeights): zero loads of no
  /// tile.
  SmallVector<Value> initialCarriedWeights() {
    SmallVector<Value> init;
    int64_t rows = l.nTiles * halves;
    for (int64_t d = 0; d < l.prefetch; ++d)
      for (int64_t r = 0; r < rows; ++r) {
        VectorType codes = VectorType::get({l.superK / 8}, b.getI8Type());
        init.push_back(arith::ConstantOp::create(b, DenseElementsAttr::get(codes, int8_t(0))));
        init.push_back(arith::ConstantIntOp::create(b, 0, 8));
      }
    init.push_back(noWork());
    return init;
  }

  /// The e8m0 byte as two bf16 (a bf16x2 in an i32): 2^(e - 127), e = 0 the
  /// bf16 subnormal 2^-127, e = 255 NaN.
  Value e8m0ToBf16x2(Value byte) {
    // e << 7 in both halves, and for e = 0 and 255 (e + 1 & 0xFE = 0) also
    // bit 6 (0x0040, 0x7FC0): multiplies and one test, so that the integer
    // pipe the decoding keeps busy runs two operations, not four.
    Value e = arith::ExtUIOp::create(b, i32(), byte);
    Value plain = a.mul(e, a.i32(0x00800080));
    Value special = a.add(plain, a.i32(0x00400040));
    Value isSpecial = a.cmp(CmpIPredicate::eq,
                            arith::AndIOp::create(b, a.add(e, a.i32(1)), a.i32(0xFE)), a.i32(0));
    return a.select(isSpecial, special, plain);
  }

  /// weight_decode = arithmetic's one product: 2^126 x the e8m0 scale as
  /// bf16x2, 2^(e - 1) (exponent field e + 126), for e at most
  /// kE2m1OneProductMaxScale; zero above (those blocks then contribute
  /// nothing, and the K loop's second run, StepRows::LargeScalesOnly, adds
  /// them).
  Value oneProductMultiplier(Value e) {
    Value m = a.add(a.mul(e, a.i32(0x00800080)),
                    a.i32(static_cast<int32_t>(sm90::kBf16x2OneProductBias)));
    return a.select(largeScale(e), a.i32(0), m);
  }
  Value largeScale(Value e) {
    return a.cmp(CmpIPredicate::ugt, e, a.i32(sm90::kE2m1OneProductMaxScale));
  }
  Value scaleOf(ArrayRef<Value> raw, size_t row) {
    return arith::ExtUIOp::create(b, i32(), raw[2 * row + 1]);
  }

  /// The largest scale byte of a lane's arithmetic rows in a step, with
  /// `sofar`'s: the main loop carries it, and a tile whose warps saw one
  /// above kE2m1OneProductMaxScale runs its K loop again for those blocks
  /// (registerMainLoop).
  Value largestArithmeticScale(ArrayRef<Value> raw, Value sofar) {
    for (size_t r = 0; 2 * r < raw.size(); ++r)
      if (l.decodesArithmetically(static_cast<int64_t>(r)))
        sofar = arith::MaxUIOp::create(b, sofar, scaleOf(raw, r));
    return sofar;
  }

  Value asBf16x2(Value i32Word) {
    Value v = vector::BroadcastOp::create(b, VectorType::get({1}, i32()), i32Word);
    return vector::BitCastOp::create(b, VectorType::get({2}, b.getBF16Type()), v);
  }

  Value permute(Value lo, Value hi, Value selector) {
    return NVVM::PermuteOp::create(b, i32(), lo, hi, selector, NVVM::PermuteMode::DEFAULT);
  }
  Value permute(Value lo, Value hi, uint32_t selector) {
    return permute(lo, hi, a.i32(static_cast<int32_t>(selector)));
  }

  /// A lane's decoding table for one MX block: the bf16 of each e2m1
  /// magnitude (0, 0.5, 1, 1.5, 2, 3, 4, 6) times the block's scale, as
  /// prmt's 8-byte pools of their high bytes and of their low bytes. Each
  /// entry is one packed `mul.rn.bf16x2` of the exact magnitude by the scale:
  /// the one rounding any decoding of code x scale makes (subnormal and NaN
  /// scales included).
  struct E2m1Table {
    Value hi0, hi1, lo0, lo1;
  };
  E2m1Table e2m1Table(Value scale2) {
    SmallVector<Value, 4> w;
    for (uint32_t m : sm90::kE2m1MagnitudePairs) {
      Value v =
          arith::MulFOp::create(b, asBf16x2(a.i32(static_cast<int32_t>(m))), asBf16x2(scale2));
      w.push_back(vector::ExtractOp::create(
          b, vector::BitCastOp::create(b, VectorType::get({1}, i32()), v), ArrayRef<int64_t>{0}));
    }
    return {
        permute(w[0], w[1], sm90::kHighBytesOfPairs), permute(w[2], w[3], sm90::kHighBytesOfPairs),
        permute(w[0], w[1], sm90::kLowBytesOfPairs), permute(w[2], w[3], sm90::kLowBytesOfPairs)};
  }

  /// The 8 e2m1 codes of `word` (code i in bits 4i..4i+3) times the table's
  /// scale, as 4 bf16x2 fragment words (word p: codes 2p, 2p + 1). Per 4
  /// codes: their magnitudes select the high and the low bytes from the
  /// table (two byte permutes), a permute of the word and of the word
  /// shifted left by 4 brings each code's sign bit to bit 7 of its byte, and
  /// two permutes interleave low and high bytes: 15 operations for 8 codes
  /// (the magnitude bits masked once for the word).
  std::array<Value, 4> dequantWord(Value word, const E2m1Table &t) {
    Value shifted = arith::ShLIOp::create(b, word, a.i32(4));
    Value magnitudes =
        arith::AndIOp::create(b, word, a.i32(static_cast<int32_t>(sm90::kMagnitudeSelect)));
    std::array<Value, 4> out;
    for (int64_t h = 0; h < 2; ++h) {
      Value select =
          h == 0 ? magnitudes : arith::ShRUIOp::create(b, magnitudes, a.i32(16)).getResult();
      Value hi = permute(t.hi0, t.hi1, select);
      Value lo = permute(t.lo0, t.lo1, select);
      Value signs =
          permute(shifted, word, h == 0 ? sm90::kInterleaveBytes01 : sm90::kInterleaveBytes23);
      hi = arith::OrIOp::create(
          b, hi, arith::AndIOp::create(b, signs, a.i32(static_cast<int32_t>(sm90::kByteSignBits))));
      out[2 * h] = permute(lo, hi, sm90::kInterleaveBytes01);
      out[2 * h + 1] = permute(lo, hi, sm90::kInterleaveBytes23);
    }
    return out;
  }

  /// The 8 e2m1 codes of `word` times `scale2` (the block's scale as bf16x2),
  /// as 4 bf16x2 fragment words, mostly off the integer pipe: one byte
  /// permute per fragment word puts code 2p's magnitude at bits 4-6 and its
  /// sign at bit 7 (byte p of the word shifted left by 4), the sign again in
  /// every bit of byte 1 (sign-replicate mode), code 2p + 1 likewise in
  /// bytes 2 and 3 (byte p of the word); shifted left by 2 and masked, each
  /// half is the bf16 whose value is the code's times 2^-126 (the subnormal
  /// 0.5 included), and two exact bf16 products give the code times the
  /// scale with the one rounding the table's entries make.
  /// With `scaled126` (oneProductMultiplier: 2^126 x the scale in one
  /// bf16) one product instead of two.
  std::array<Value, 4> dequantWordArith(Value word, Value scale2, bool scaled126) {
    Value shifted = arith::ShLIOp::create(b, word, a.i32(4));
    std::array<Value, 4> out;
    for (uint32_t p = 0; p < 4; ++p) {
      Value bits =
          arith::ShLIOp::create(b, permute(shifted, word, sm90::arithmeticSelect(p)), a.i32(2));
      bits = arith::AndIOp::create(b, bits, a.i32(static_cast<int32_t>(sm90::kE2m1PlacedBits)));
      Value v = asBf16x2(bits);
      if (!scaled126)
        v = arith::MulFOp::create(b, v, asBf16x2(a.i32(static_cast<int32_t>(sm90::kBf16x2Two126))));
      v = arith::MulFOp::create(b, v, asBf16x2(scale2));
      out[p] = vector::ExtractOp::create(
          b, vector::BitCastOp::create(b, VectorType::get({1}, i32()), v), ArrayRef<int64_t>{0});
    }
    return out;
  }

  /// The number of row tiles of the M tile the MMAs go over: 16-row tiles,
  /// or 8-row tiles with swapped operands.
  int64_t rowTiles() const { return l.swapAB ? 2 * l.mTiles : l.mTiles; }
  int64_t rowsPerTile() const { return l.swapAB ? 8 : 16; }

  /// swapAB: accumulator r of 16-column block i (8-column tiles 2i, 2i + 1),
  /// 8-row tile tt and `half`: column 16 i + g + 8 (r / 2), row 8 tt + 2q + r % 2.
  int swappedIndex(int64_t i, int64_t tt, int64_t half, int64_t r) const {
    return static_cast<int>(((half * rowTiles() + tt) * (l.nTiles / 2) + i) * 4 + r);
  }

  /// How a step's weight rows are decoded: weight_decode = mixed's arithmetic
  /// rows with two products (every scale); weight_decode = arithmetic's rows
  /// (every row of the step) with one (scales above 2 give zero fragments),
  /// or only their large-scale blocks with two products and every other
  /// fragment zero (the rare second K loop of registerMainLoop).
  enum class StepRows { TwoProducts, OneProduct, LargeScalesOnly };

  /// A step's weights (loadLaneWeights) ready to decode: per weight row its
  /// code words and either its byte table or its arithmetic route's scale.
  struct StepCodes {
    SmallVector<Value> codes;
    SmallVector<std::optional<E2m1Table>> tables; // none: the arithmetic route
    SmallVector<Value> scales;
  };
  StepCodes prepareStep(ArrayRef<Value> raw, StepRows mode) {
    StepCodes c;
    for (size_t r = 0; 2 * r < raw.size(); ++r) {
      c.codes.push_back(
          vector::BitCastOp::create(b, VectorType::get({l.superK / 32}, i32()), raw[2 * r]));
      if (!l.decodesArithmetically(static_cast<int64_t>(r))) {
        c.scales.push_back(e8m0ToBf16x2(raw[2 * r + 1]));
        c.tables.push_back(e2m1Table(c.scales.back()));
        continue;
      }
      c.tables.push_back(std::nullopt);
      Value e = scaleOf(raw, r);
      if (mode == StepRows::OneProduct)
        c.scales.push_back(oneProductMultiplier(e));
      else if (mode == StepRows::LargeScalesOnly)
        c.scales.push_back(a.select(largeScale(e), e8m0ToBf16x2(raw[2 * r + 1]), a.i32(0)));
      else
        c.scales.push_back(e8m0ToBf16x2(raw[2 * r + 1]));
    }
    return c;
  }
  /// Code word `w` of every weight row of a step: its 4 fragment words (word
  /// p: codes 2p, 2p + 1), rows in accIndex order.
  SmallVector<std::array<Value, 4>> decodeStepWord(const StepCodes &c, int64_t w, StepRows mode) {
    SmallVector<std::array<Value, 4>> decoded;
    for (auto [codes, table, scale] : llvm::zip(c.codes, c.tables, c.scales)) {
      Value word = vector::ExtractOp::create(b, codes, ArrayRef<int64_t>{w});
      decoded.push_back(table ? dequantWord(word, *table)
                              : dequantWordArith(word, scale,
                                                 /*scaled126=*/mode == StepRows::OneProduct));
    }
    return decoded;
  }

  /// The MMAs of one step for the first `tiles` row tiles of the M tile: A
  /// rows from the staging at `base`, weights from `raw` (loadLaneWeights).
  void mmaStep(Value base, ArrayRef<Value> raw, MutableArrayRef<Value> acc, int64_t tiles,
               StepRows mode) {
    int64_t words = l.superK / 32;
    VectorType v4i32 = VectorType::get({4}, i32());
    StepCodes codes = prepareStep(raw, mode);
    Value laneGroup0 = a.mul(quadCol, a.idx(words));
    // The lane's group w of staged A row `row`.
    auto loadRow = [&](int64_t row, int64_t w) {
      return vload(v4i32, shared,
                   a.add(base, aGroupSlot(a.add(a.idx(row), quadRow), a.add(laneGroup0, a.idx(w)))),
                   16);
    };
    auto word = [&](Value v, int64_t i) {
      return vector::ExtractOp::create(b, v, ArrayRef<int64_t>{i}).getResult();
    };
    for (int64_t w = 0; w < words; ++w) {
      SmallVector<std::array<Value, 4>> decoded = decodeStepWord(codes, w, mode);
      auto rowWords = [&](int64_t half, int64_t nt) { return decoded[half * l.nTiles + nt]; };
      if (l.swapAB) {
        // A: rows g and g + 8 of a 16-column block are the lane's rows of its
        // two 8-column tiles; B: row 8 tt + g's words 2 sub, 2 sub + 1.
        for (int64_t tt = 0; tt < tiles; ++tt) {
          Value rowsB = loadRow(tt * 8, w);
          for (int64_t sub = 0; sub < 2; ++sub)
            for (int64_t half = 0; half < halves; ++half)
              for (int64_t i = 0; i < l.nTiles / 2; ++i) {
                std::array<Value, 4> lo = rowWords(half, 2 * i), hi = rowWords(half, 2 * i + 1);
                mma({lo[2 * sub], hi[2 * sub], lo[2 * sub + 1], hi[2 * sub + 1]},
                    {word(rowsB, 2 * sub), word(rowsB, 2 * sub + 1)},
                    acc.slice(swappedIndex(i, tt, half, 0), 4));
              }
        }
        continue;
      }
      // A: rows g, g + 8 of a 16-row tile, words 2 sub, 2 sub + 1 of each;
      // B: the lane's row of an 8-column tile.
      auto aFragOf = [&](const std::array<Value, 2> &rows, int64_t sub) {
        return SmallVector<Value, 4>{word(rows[0], 2 * sub), word(rows[1], 2 * sub),
                                     word(rows[0], 2 * sub + 1), word(rows[1], 2 * sub + 1)};
      };
      auto bFragOf = [&](int64_t half, int64_t nt, int64_t sub) {
        std::array<Value, 4> v = rowWords(half, nt);
        return SmallVector<Value, 2>{v[2 * sub], v[2 * sub + 1]};
      };
      SmallVector<std::array<Value, 2>> rowsA;
      for (int64_t mt = 0; mt < tiles; ++mt)
        rowsA.push_back({loadRow(mt * 16, w), loadRow(mt * 16 + 8, w)});
      for (int64_t sub = 0; sub < 2; ++sub) {
        SmallVector<SmallVector<Value, 4>> aFrags;
        for (int64_t mt = 0; mt < tiles; ++mt)
          aFrags.push_back(aFragOf(rowsA[mt], sub));
        for (int64_t half = 0; half < halves; ++half)
          for (int64_t nt = 0; nt < l.nTiles; ++nt)
            for (int64_t mt = 0; mt < tiles; ++mt)
              mma(aFrags[mt], bFragOf(half, nt, sub), acc.slice(accIndex(mt, nt, half, 0), 4));
      }
    }
  }

  // --- Warpgroup MMAs (wgmma) --------------------------------------------
  //
  // wgmma m64nNk16 with A from registers: warp i of a warpgroup supplies
  // rows 16 i .. 16 i + 15 of A (its 16 weight columns, rows g and g + 8 of
  // the mma.sync A fragment) and holds those rows of D, N = tile_m (the
  // staged A rows are B, K-major in shared memory). A k16 step
  // reads two 8-element runs of K (fragment columns 0-7 and 8-15), so lane q
  // of a quad needs codes 2q, 2q + 1 of every 8-code word of its rows: byte
  // q of each word of a 16-byte block.

  /// The 16-byte copies of one step's codes (StageUnit: global byte offset
  /// at K = 0, i32 index in a stage): per 16-row group of weight rows (one
  /// warp's 16 columns of a half) and MX block, the (16,16) preshuffle's 256
  /// contiguous bytes, after the stage's A rows.
  SmallVector<StageUnit> planCodeCopies() {
    int64_t blocks = l.superK / kChunk;
    Value expertBase = a.mul(expert, a.idx(weightRows() * weightRowBytes()));
    return planUnits(halves * l.warpsN * blocks, 16, [&](Value groupBlock, Value chunk) {
      Value group = a.divu(groupBlock, a.idx(blocks));
      Value block = a.remu(groupBlock, a.idx(blocks));
      Value col =
          a.add(a.mul(bidN, a.idx(s.tileN)), a.mul(a.remu(group, a.idx(l.warpsN)), a.idx(16)));
      Value wr = emitWeightRowOf(a, spec, stage1, col, 0);
      if (stage1)
        wr = a.select(a.cmp(CmpIPredicate::uge, group, a.idx(l.warpsN)),
                      emitWeightRowOf(a, spec, stage1, col, 1), wr);
      StageUnit u;
      u.global = a.add(expertBase, a.mul(shr(wr, 4), a.idx(16 * weightRowBytes())));
      u.global = a.add(u.global, a.add(a.mul(block, a.idx(256)), a.mul(chunk, a.idx(16))));
      u.shared = a.add(a.idx(s.tileM * l.aRowBytes / 4),
                       a.add(a.mul(groupBlock, a.idx(64)), a.mul(chunk, a.idx(4))));
      return u;
    });
  }

  /// Step `step`'s A rows and weight codes copied into the stage at i32
  /// index `base`, one cp.async group (committed even when empty).
  void copyStage(ArrayRef<StageUnit> aUnits, ArrayRef<StageUnit> codes, Value step, Value base,
                 Value when) {
    ifThen(when, [&] {
      copyAStep(aUnits, step, base, /*commit=*/false);
      Value stepByte = a.mul(step, a.idx(l.superK / kChunk * 256));
      for (const StageUnit &c : codes) {
        auto body = [&] {
          Value src = elementPtr(wBuf, b.getI8Type(), a.add(c.global, stepByte));
          Value dst = elementPtr(shared, i32(), a.add(base, c.shared), 3);
          NVVM::CpAsyncOp::create(b, dst, src, 16, NVVM::LoadCacheModifierKind::CG, Value());
        };
        if (c.inRange)
          ifThen(c.inRange, body);
        else
          body();
      }
    });
    NVVM::CpAsyncCommitGroupOp::create(b);
  }

  /// The lane's scale bytes of step `step`: per weight row (accIndex order)
  /// and block.
  SmallVector<Value> loadStepScales(ArrayRef<LaneWeightRow> rows, Value step) {
    int64_t blocks = l.superK / kChunk;
    SmallVector<Value> columnParts;
    for (int64_t c = 0; c < blocks; ++c)
      columnParts.push_back(emitE8m0ColumnOffset(a, a.add(a.mul(step, a.idx(blocks)), a.idx(c))));
    SmallVector<Value> scales;
    for (const LaneWeightRow &r : rows)
      for (Value column : columnParts)
        scales.push_back(load(wScale, scaleOffset(r.scaleRowOffset, column)));
    return scales;
  }

  /// The lane's decoded fragment words of MX block `c` of the step staged
  /// at i32 index `base`, 4 per weight row (accIndex order; `scales` has one
  /// per row): word 2t + j of a row is k16 step t's pair at fragment column
  /// 2q + 8j (the block's K 16t + 8j + 2q, + 1). Each row's 16-byte block is
  /// read whole (the quad's lanes read the same bytes), and byte q of each
  /// of its words kept; then decoded as weight_decode = mixed decodes it
  /// (even rows through the block's byte table, odd rows by two products).
  SmallVector<Value> decodeBlock(Value base, int64_t c, ArrayRef<Value> scales) {
    int64_t blocks = l.superK / kChunk;
    // prmt selector: byte q of the first word, byte q of the second.
    Value select = a.toI32(a.add(a.mul(quadCol, a.idx(17)), a.idx(0x40)));
    Value codeBase = a.add(base, a.idx(s.tileM * l.aRowBytes / 4));
    SmallVector<Value> decoded;
    for (int64_t half = 0; half < halves; ++half)
      for (int64_t nt = 0; nt < l.nTiles; ++nt) {
        Value group = a.add(a.idx(half * l.warpsN), waveN);
        Value at = a.add(a.mul(a.add(a.mul(group, a.idx(blocks)), a.idx(c)), a.idx(64)),
                         a.mul(a.add(quadRow, a.idx(8 * nt)), a.idx(4)));
        Value words = vload(VectorType::get({4}, i32()), shared, a.add(codeBase, at), 16);
        auto word = [&](int64_t i) {
          return vector::ExtractOp::create(b, words, ArrayRef<int64_t>{i}).getResult();
        };
        Value mine =
            permute(permute(word(0), word(1), select), permute(word(2), word(3), select), 0x5410u);
        int64_t row = half * l.nTiles + nt;
        Value scale2 = e8m0ToBf16x2(scales[row]);
        // Odd rows on the FMA pipe (weight_decode = mixed, as mma.sync
        // decodes them): 2-4% less time than every row through a table.
        std::array<Value, 4> w = l.decodesArithmetically(row)
                                     ? dequantWordArith(mine, scale2, /*scaled126=*/false)
                                     : dequantWord(mine, e2m1Table(scale2));
        decoded.append(w.begin(), w.end());
      }
    return decoded;
  }

  /// Makes this thread's shared-memory writes through the generic proxy
  /// (stores, cp.async) visible to the async proxy the tensor cores read
  /// wgmma's operands through.
  void fenceAsyncProxy() {
    NVVM::FenceProxyOp::create(
        b, NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
        NVVM::SharedSpaceAttr::get(b.getContext(), NVVM::SharedSpace::shared_cta));
  }

  /// The wgmma main loop: `buffers` stages of A rows and weight codes in
  /// flight (cp.async groups), the scales of as many steps in registers.
  /// Step i waits for its group, makes it visible to the async proxy, and
  /// after the barrier refills the stage step i - 1 used with step i +
  /// stages - 1; then runs the wgmmas of its MX blocks, a group each. With
  /// decodeAhead, each block's wgmmas run while the next block is decoded
  /// (the first block of step i + 1, whose group was waited for one step
  /// earlier); otherwise a block is decoded, then its wgmmas run.
  SmallVector<Value> wgmmaMainLoop() {
    SmallVector<StageUnit> aUnits = planAUnits(l.superK);
    SmallVector<StageUnit> codes = planCodeCopies();
    SmallVector<LaneWeightRow> rows = planLaneWeightRows();
    int64_t steps = p.kPerWave / l.superK, stages = l.buffers, blocks = l.superK / kChunk;
    Value step0 = a.divu(groupKStart(), a.idx(l.superK));
    auto stepOf = [&](Value i) {
      return a.add(step0, arith::MinUIOp::create(b, i, a.idx(steps - 1)).getResult());
    };
    auto stageOf = [&](Value i) {
      return a.mul(a.remu(i, a.idx(stages)), a.idx(l.stagingBytes / 4));
    };
    // Wait until `pending` younger groups are left, make the copies visible
    // to the async proxy (cp.async writes through the generic one), barrier.
    auto awaitStages = [&](int64_t pending) {
      NVVM::CpAsyncWaitGroupOp::create(b, pending);
      fenceAsyncProxy();
      gpu::BarrierOp::create(b);
    };
    // A step's scales (loadStepScales: per row, then block): block c's.
    auto blockScales = [&](ArrayRef<Value> step, int64_t c) {
      SmallVector<Value> out;
      for (size_t r = 0; r < rows.size(); ++r)
        out.push_back(step[r * blocks + c]);
      return out;
    };
    // The previous M tile's last reads of the stages are over.
    gpu::BarrierOp::create(b);
    // Carried: (decodeAhead) the next block's words, then the scales of
    // steps i .. i + stages - 2.
    SmallVector<Value> carried;
    for (int64_t d = 0; d + 1 < stages; ++d) {
      copyStage(aUnits, codes, stepOf(a.idx(d)), a.idx(d * l.stagingBytes / 4),
                a.cmp(CmpIPredicate::ult, a.idx(d), a.idx(steps)));
      llvm::append_range(carried, loadStepScales(rows, stepOf(a.idx(d))));
    }
    size_t perStep = rows.size() * blocks, wordCount = 4 * rows.size();
    if (l.decodeAhead) {
      awaitStages(stages - 2);
      SmallVector<Value> words = decodeBlock(a.idx(0), 0, blockScales(carried, 0));
      carried.insert(carried.begin(), words.begin(), words.end());
    }
    SmallVector<Value> acc =
        emitKLoop(steps, carried, [&](Value i, SmallVectorImpl<Value> &acc, ArrayRef<Value> in) {
          ArrayRef<Value> scales = l.decodeAhead ? in.drop_front(wordCount) : in;
          Value base = stageOf(i);
          awaitStages(l.decodeAhead ? stages - 3 : stages - 2);
          Value refill = a.add(i, a.idx(stages - 1));
          copyStage(aUnits, codes, stepOf(refill), stageOf(refill),
                    a.cmp(CmpIPredicate::ult, refill, a.idx(steps)));
          SmallVector<Value> next = loadStepScales(rows, stepOf(refill));
          if (!l.decodeAhead) {
            for (int64_t c = 0; c < blocks; ++c) {
              SmallVector<Value> words = decodeBlock(base, c, blockScales(scales, c));
              issueWgmmas(base, c, words, acc);
              waitWgmmas(words, {});
            }
          } else {
            SmallVector<Value> words(in.take_front(wordCount));
            for (int64_t c = 0; c < blocks; ++c) {
              issueWgmmas(base, c, words, acc);
              // (The last step decodes its own stage again, whose words are
              // not used: the next stage may never have been filled.)
              Value following = arith::MinUIOp::create(b, a.add(i, a.idx(1)), a.idx(steps - 1));
              SmallVector<Value> nextWords =
                  c + 1 < blocks ? decodeBlock(base, c + 1, blockScales(scales, c + 1))
                                 : decodeBlock(stageOf(following), 0,
                                               blockScales(scales.drop_front(perStep), 0));
              words = waitWgmmas(words, nextWords);
            }
            llvm::append_range(acc, words);
          }
          llvm::append_range(acc, scales.drop_front(perStep));
          llvm::append_range(acc, next);
        });
    NVVM::CpAsyncWaitGroupOp::create(b, 0);
    return acc;
  }

  /// The matrix descriptor of the staged rows at i32 index `base`: no
  /// swizzle, K-adjacent core matrices 128 bytes apart (leading byte
  /// offset), 8-row groups superK * 16 bytes apart (stride byte offset).
  Value stagingDescriptor(Value base) {
    Value addr = LLVM::PtrToIntOp::create(b, b.getI64Type(), elementPtr(shared, i32(), base, 3));
    Value start = arith::AndIOp::create(b, arith::ShRUIOp::create(b, addr, a.i64(4)).getResult(),
                                        a.i64(0x3FFF));
    int64_t leading = 128 >> 4, stride = (l.superK / 8 * 128) >> 4;
    return arith::OrIOp::create(b, start, a.i64((leading << 16) | (stride << 32)));
  }

  /// PTX inline asm with side effects (kept in place and in order).
  LLVM::InlineAsmOp inlineAsm(Type result, ValueRange operands, StringRef text,
                              StringRef constraints) {
    return LLVM::InlineAsmOp::create(b, result, operands, text, constraints,
                                     /*has_side_effects=*/true, /*is_align_stack=*/false,
                                     LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
                                     ArrayAttr());
  }

  /// acc (the m64nNk16 D fragment: N / 2 f32, N = 2 acc.size()) += A (4
  /// words of this warp's rows) x B (shared memory at `desc`).
  void wgmma(ArrayRef<Value> aFrag, Value desc, MutableArrayRef<Value> acc) {
    int64_t n = static_cast<int64_t>(acc.size());
    auto arg = [](int64_t i) { return "$" + std::to_string(i); };
    std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, " + arg(2 * n + 5) +
                       ", 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(2 * n) +
                       "k16.f32.bf16.bf16 {";
    std::string constraints;
    for (int64_t i = 0; i < n; ++i) {
      text += (i ? ", " : "") + arg(i);
      constraints += "=f,";
    }
    text += "}, {" + arg(2 * n) + ", " + arg(2 * n + 1) + ", " + arg(2 * n + 2) + ", " +
            arg(2 * n + 3) + "}, " + arg(2 * n + 4) + ", p, 1, 1, 0;\n}";
    for (int64_t i = 0; i < n; ++i)
      constraints += std::to_string(i) + ",";
    constraints += "r,r,r,r,l,r";
    SmallVector<Value> operands(acc.begin(), acc.end());
    llvm::append_range(operands, aFrag);
    operands.push_back(desc);
    operands.push_back(a.i32(1));
    SmallVector<Type> types(n, f32());
    Type res = LLVM::LLVMStructType::getLiteral(b.getContext(), types);
    LLVM::InlineAsmOp op = inlineAsm(res, operands, text, constraints);
    for (int64_t i = 0; i < n; ++i)
      acc[i] = LLVM::ExtractValueOp::create(b, op.getRes(), ArrayRef<int64_t>{i});
  }

  /// The wgmmas of MX block `c` of the step staged at `base` over every row
  /// tile (N = tile_m), one group; `words` are decodeBlock's.
  void issueWgmmas(Value base, int64_t c, ArrayRef<Value> words, MutableArrayRef<Value> acc) {
    Value desc0 = stagingDescriptor(base);
    NVVM::WgmmaFenceAlignedOp::create(b);
    for (int64_t t = 0; t < 2; ++t) {
      // Core matrices 4c + 2t and 4c + 2t + 1 of each 8-row group: 128 bytes each.
      Value desc = arith::AddIOp::create(b, desc0, a.i64((4 * c + 2 * t) * 128 >> 4));
      for (int64_t half = 0; half < halves; ++half) {
        const Value *lo = &words[4 * half * l.nTiles], *hi = lo + 4;
        wgmma({lo[2 * t], hi[2 * t], lo[2 * t + 1], hi[2 * t + 1]}, desc,
              acc.slice(swappedIndex(0, 0, half, 0), 4 * rowTiles()));
      }
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(b);
  }

  /// Waits for a block's wgmmas (before the next step's copies overwrite
  /// the stage they read). The A fragments `words` stay live until
  /// then: an asm after the wait reads them, or ptxas may give their
  /// registers to later values while the tensor cores still read them. The
  /// same asm returns `nextWords` (decoded during the wgmmas) XORed with a
  /// zero ptxas cannot fold, so that the next block's fragments are defined
  /// after this wait; moved or left as they are, ptxas serializes the
  /// wgmmas (C7513).
  SmallVector<Value> waitWgmmas(ArrayRef<Value> words, ArrayRef<Value> nextWords) {
    NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
    size_t n = nextWords.size();
    std::string text, constraints;
    for (size_t i = 0; i < n; ++i) {
      text += "xor.b32 $" + std::to_string(i) + ", $" + std::to_string(n + i) + ", $" +
              std::to_string(2 * n) + ";\n";
      constraints += "=r,";
    }
    SmallVector<Value> operands(nextWords.begin(), nextWords.end());
    if (n)
      operands.push_back(a.toI32(shr(tokens, 31)));
    operands.append(words.begin(), words.end());
    for (size_t i = 0; i < operands.size(); ++i)
      constraints += i ? ",r" : "r";
    SmallVector<Type> types(n, i32());
    Type res = n ? LLVM::LLVMStructType::getLiteral(b.getContext(), types) : Type();
    LLVM::InlineAsmOp op = inlineAsm(res, operands, text, constraints);
    SmallVector<Value> out;
    for (size_t i = 0; i < n; ++i)
      out.push_back(LLVM::ExtractValueOp::create(b, op.getRes(), ArrayRef<int64_t>{int64_t(i)}));
    return out;
  }

  /// loopN on wgmma: one step's wgmmas, the lane's weights `raw`
  /// (loadLaneWeights) decoded as mmaStep decodes them into the A fragments,
  /// B the M tile's rows staged at `base` (copyRowsForWgmma). k16 step 2w +
  /// sub takes fragment words 2 sub, 2 sub + 1 of code word w. Every word is
  /// decoded before the group is issued: a decoding between a group's
  /// wgmmas would make ptxas serialize them (C7513).
  void wgmmaRegisterStep(Value base, ArrayRef<Value> raw, MutableArrayRef<Value> acc) {
    int64_t words = l.superK / 32;
    StepCodes codes = prepareStep(raw, StepRows::TwoProducts);
    SmallVector<SmallVector<std::array<Value, 4>>> decoded;
    for (int64_t w = 0; w < words; ++w)
      decoded.push_back(decodeStepWord(codes, w, StepRows::TwoProducts));
    Value desc0 = stagingDescriptor(base);
    NVVM::WgmmaFenceAlignedOp::create(b);
    for (int64_t w = 0; w < words; ++w)
      for (int64_t sub = 0; sub < 2; ++sub) {
        // Core matrices 2 (2w + sub) and the next: 128 bytes each.
        Value desc = arith::AddIOp::create(b, desc0, a.i64((2 * (2 * w + sub)) * 128 >> 4));
        const std::array<Value, 4> &lo = decoded[w][0], &hi = decoded[w][1];
        wgmma({lo[2 * sub], hi[2 * sub], lo[2 * sub + 1], hi[2 * sub + 1]}, desc,
              acc.slice(swappedIndex(0, 0, 0, 0), 4 * rowTiles()));
      }
    NVVM::WgmmaGroupSyncAlignedOp::create(b);
    SmallVector<Value> live; // read by the tensor cores until the wait
    for (const auto &rows : decoded)
      for (const std::array<Value, 4> &row : rows)
        live.append(row.begin(), row.end());
    waitWgmmas(live, {});
  }

  /// swapAB: the accumulators in the plain layout (accIndex), through warp
  /// shuffles. Plain register 2 hr + c of (mt, nt) at lane (g, q) is row
  /// 16 mt + 8 hr + g, column 8 nt + 2q + c: swapped register 2 (nt % 2) +
  /// g % 2 of (nt / 2, 2 mt + hr) at lane (2q + c, g / 2). `onlyMt`: only
  /// that 16-row tile's registers (the others stay null).
  SmallVector<Value> unswapAccumulators(ArrayRef<Value> swapped, int64_t onlyMt = -1) {
    SmallVector<Value> plain(l.accRegs);
    Value odd = a.cmp(CmpIPredicate::eq, andI(quadRow, 1), a.idx(1));
    Value width = a.i32(32);
    for (int64_t c = 0; c < 2; ++c) {
      Value src = a.toI32(
          a.add(a.mul(a.add(a.mul(quadCol, a.idx(2)), a.idx(c)), a.idx(4)), shr(quadRow, 1)));
      for (int64_t half = 0; half < halves; ++half)
        for (int64_t mt = 0; mt < l.mTiles; ++mt)
          for (int64_t hr = 0; hr < 2 && (onlyMt < 0 || mt == onlyMt); ++hr)
            for (int64_t nt = 0; nt < l.nTiles; ++nt) {
              int first = swappedIndex(nt / 2, 2 * mt + hr, half, 2 * (nt % 2));
              auto take = [&](int slot) {
                return gpu::ShuffleOp::create(b, swapped[slot], src, width, gpu::ShuffleMode::IDX)
                    .getShuffleResult();
              };
              plain[accIndex(mt, nt, half, 2 * hr + c)] =
                  a.select(odd, take(first + 1), take(first));
            }
    }
    return plain;
  }

  /// The register main loop for the M tile's live row tiles (up to its
  /// last routed row, emitLiveRowTiles; at small M most sort blocks hold fewer
  /// rows than tile_m): the other tiles issue neither MMAs nor A reads, and
  /// their accumulators stay what zero A rows leave them. A loop version for
  /// 1, 2, 4, ... up to all tiles, chosen per M tile (uniform over the
  /// workgroup), each without branches inside. Returns what
  /// registerMainLoop does.
  SmallVector<Value> registerMainLoopLive() {
    SmallVector<Type> types(l.accRegs, f32());
    if (l.carryWeights)
      llvm::append_range(types, TypeRange(carriedIn));
    return byLiveRowTiles(types, [&](int64_t tiles) { return registerMainLoop(tiles); });
  }

  /// `body(tiles)` in versions for 1, 2, 4, ... and all row tiles, the one
  /// for the current M tile's live row tiles taken (liveRowTiles).
  SmallVector<Value> byLiveRowTiles(TypeRange types,
                                    function_ref<SmallVector<Value>(int64_t)> body) {
    int64_t tiles = rowTiles();
    if (tiles == 1) // one row tile: nothing to skip
      return body(1);
    Value live = emitLiveRowTiles();
    liveRowTiles = live;
    SmallVector<int64_t> versions;
    for (int64_t t = 1; t < tiles; t *= 2)
      versions.push_back(t);
    versions.push_back(tiles);
    std::function<SmallVector<Value>(size_t)> emit = [&](size_t v) -> SmallVector<Value> {
      if (v + 1 == versions.size())
        return body(versions[v]);
      auto op = scf::IfOp::create(b, types, a.cmp(CmpIPredicate::ule, live, a.idx(versions[v])),
                                  /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(op.thenBlock());
      scf::YieldOp::create(b, body(versions[v]));
      b.setInsertionPointToStart(op.elseBlock());
      scf::YieldOp::create(b, emit(v + 1));
      return SmallVector<Value>(op.getResults());
    };
    return emit(0);
  }

  /// loopN: the M tile's A rows staged for all of K (step i in buffer i, one
  /// cp.async group), then its N tiles bidN, bidN + grid.x, ... each with
  /// its K loop and epilogue. Returns what the next M tile gets (carriedIn's
  /// layout).
  SmallVector<Value> loopNTile() {
    int64_t steps = p.kPerWave / l.superK;
    Value step0 = a.divu(groupKStart(), a.idx(l.superK));
    if (l.wgmma) {
      copyRowsForWgmma(step0);
    } else {
      SmallVector<StageUnit> aUnits = planAUnits(l.superK);
      for (int64_t i = 0; i < steps; ++i)
        copyAStep(aUnits, a.add(step0, a.idx(i)), a.idx(i * l.stagingBytes / 4),
                  /*commit=*/false);
    }
    NVVM::CpAsyncCommitGroupOp::create(b);
    NVVM::CpAsyncWaitGroupOp::create(b, 0);
    if (l.wgmma) // the tensor cores read the rows through the async proxy
      fenceAsyncProxy();
    gpu::BarrierOp::create(b);
    SmallVector<Value> init(carriedIn.begin(), carriedIn.end());
    auto versions = [&](function_ref<SmallVector<Value>(int64_t)> body) {
      // (wgmma: one version, N = tile_m, as wgmmaMainLoop.)
      return l.wgmma ? body(rowTiles()) : byLiveRowTiles(TypeRange(carriedIn), body);
    };
    return versions([&](int64_t tiles) -> SmallVector<Value> {
      auto loop = scf::ForOp::create(b, firstN, nTilesN(), gridN, init);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      bidN = loop.getInductionVar();
      carriedIn = loop.getRegionIterArgs();
      SmallVector<Value> acc = registerMainLoop(tiles);
      SmallVector<Value> next(acc.begin() + l.accRegs, acc.end());
      acc.resize(l.accRegs);
      epilogueOfLiveRows(acc);
      scf::YieldOp::create(b, next);
      bidN = firstN;
      return SmallVector<Value>(loop.getResults());
    });
  }

  /// loopN on wgmma: the M tile's A rows for all of K, step i at i32 index
  /// i x stagingBytes / 4, in the core-matrix layout wgmma reads B in
  /// (stagingDescriptor), with K in the order of the lanes' code words: k16
  /// step t of a step holds in fragment column 2q + 8j + e the element q
  /// superK / 4 + 4t + 2j + e of the step, which a lane of quad column q
  /// decodes into that column (registerMainLoop's words). So each 4-byte
  /// pair of a core matrix's 16-byte row comes from its own place: 8-element
  /// group G = 2t + j's pair q is the step's elements q superK / 4 + 2G, + 1.
  /// Lane (g, q) of warp w copies pair q of rows 8 (w + warps x i) + g (the
  /// warp's 32 copies fall in 32 distinct banks); padding rows are zeros.
  void copyRowsForWgmma(Value step0) {
    int64_t steps = p.kPerWave / l.superK, groups = l.superK / 8, rowGroups = s.tileM / 8;
    Value firstElem = a.mul(step0, a.idx(l.superK));
    for (int64_t i = 0; i * l.warpsN < rowGroups; ++i) {
      Value group = a.add(waveN, a.idx(i * l.warpsN));
      Value in;
      if ((i + 1) * l.warpsN > rowGroups) {
        in = a.cmp(CmpIPredicate::ult, group, a.idx(rowGroups));
        group = a.select(in, group, a.idx(0));
      }
      auto body = [&] {
        GemmRowInfo ri = rowInfo(a.add(a.mul(group, a.idx(8)), quadRow));
        Value src0 = a.add(a.add(aRowStart(ri), firstElem), a.mul(quadCol, a.idx(l.superK / 4)));
        Value dst0 =
            a.add(a.mul(group, a.idx(groups * 32)), a.add(a.mul(quadRow, a.idx(4)), quadCol));
        Value bytes = a.select(ri.valid, a.i32(4), a.i32(0));
        for (int64_t st = 0; st < steps; ++st)
          for (int64_t g = 0; g < groups; ++g) {
            Value src =
                elementPtr(aBuf, b.getBF16Type(), a.add(src0, a.idx(st * l.superK + 2 * g)));
            Value dst =
                elementPtr(shared, i32(), a.add(dst0, a.idx(st * l.stagingBytes / 4 + g * 32)), 3);
            NVVM::CpAsyncOp::create(b, dst, src, 4, NVVM::LoadCacheModifierKind::CA, bytes);
          }
      };
      if (in)
        ifThen(in, body);
      else
        body();
    }
  }

  /// The current M tile's row tiles (rowsPerTile rows) up to its last
  /// routed row (one ballot per 32 rows over the sorted ids).
  Value emitLiveRowTiles() {
    Value liveRows = a.i32(0);
    for (int64_t c = 0; c * 32 < s.tileM; ++c) {
      Value row = a.add(a.idx(c * 32), lane);
      Value inTile = a.cmp(CmpIPredicate::ult, row, a.idx(s.tileM));
      Value routed = arith::AndIOp::create(
          b, inTile, rowInfo(arith::MinUIOp::create(b, row, a.idx(s.tileM - 1))).valid);
      Value ballot =
          NVVM::VoteSyncOp::create(b, i32(), a.i32(-1), routed, NVVM::VoteSyncKind::ballot);
      Value lead = LLVM::CountLeadingZerosOp::create(b, i32(), ballot, b.getBoolAttr(false));
      // Rows up to the chunk's last routed one (none: 32 leading zeros).
      Value rows = a.select(a.cmp(CmpIPredicate::eq, ballot, a.i32(0)), a.i32(0),
                            a.sub(a.i32(c * 32 + 32), lead));
      liveRows = arith::MaxUIOp::create(b, liveRows, rows);
    }
    return a.divu(a.add(a.toIndex(liveRows), a.idx(rowsPerTile() - 1)), a.idx(rowsPerTile()));
  }

  /// The K loop with register weights. Step i's weights were loaded
  /// `prefetch` steps earlier; its MMAs read A from buffer i % buffers, whose
  /// bf16 rows are copied with cp.async (step i + 1's issued right after the
  /// barrier that ends step i - 1's reads of that buffer; with loopN every
  /// step is already staged, and the loop has no barrier). Only the first
  /// `tiles` row tiles get MMAs; the others' accumulators stay zero
  /// (loop-invariant, so they take no registers in the loop). Returns the
  /// accumulators, then with carryWeights what the next tile gets
  /// (carriedIn's layout): the last trips load the workgroup's next tile's
  /// first steps (nextWork) instead of this tile's last one again.
  SmallVector<Value> registerMainLoop(int64_t tiles) {
    // The next tile's rows, read first: the first trips' loads may be its.
    Value nextTag, nextDelta;
    if (l.carryWeights)
      std::tie(nextTag, nextDelta) = nextWork();
    bool staging = !l.loopN;
    SmallVector<StageUnit> aUnits;
    if (staging)
      aUnits = planAUnits(l.superK);
    SmallVector<LaneWeightRow> rows = planLaneWeightRows();
    int64_t steps = p.kPerWave / l.superK;
    int64_t bufferWords = l.stagingBytes / 4;
    Value groupBase = a.mul(waveK, a.idx(l.buffers * bufferWords));
    Value step0 = a.divu(groupKStart(), a.idx(l.superK));
    auto stepOf = [&](Value i) {
      return a.add(step0, arith::MinUIOp::create(b, i, a.idx(steps - 1)).getResult());
    };
    auto bufferOf = [&](Value i) {
      if (l.loopN) // every step staged (loopNTile)
        return a.add(groupBase, a.mul(i, a.idx(bufferWords)));
      return l.buffers == 2 ? a.add(groupBase, a.mul(andI(i, 1), a.idx(bufferWords))) : groupBase;
    };
    if (staging && l.buffers == 2)
      copyAStep(aUnits, step0, groupBase);
    // Carried: the weights of steps i .. i + prefetch - 1.
    SmallVector<Value> ahead;
    auto loadFirstSteps = [&] {
      SmallVector<Value> first;
      for (int64_t d = 0; d < l.prefetch; ++d)
        llvm::append_range(first, loadLaneWeights(rows, stepOf(a.idx(d))));
      return first;
    };
    if (l.carryWeights) {
      // This tile's first steps, if the previous tile loaded them.
      ValueRange loaded = carriedIn.drop_back();
      auto op = scf::IfOp::create(b, TypeRange(loaded),
                                  a.cmp(CmpIPredicate::eq, carriedIn.back(), workTag(expert, bidN)),
                                  /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(op.thenBlock());
        scf::YieldOp::create(b, loaded);
        b.setInsertionPointToStart(op.elseBlock());
        scf::YieldOp::create(b, loadFirstSteps());
      }
      llvm::append_range(ahead, op.getResults());
    } else {
      llvm::append_range(ahead, loadFirstSteps());
    }
    // Step i + prefetch's weights: past the last step (carryWeights), the
    // next tile's first ones; else the last step again (a valid address).
    auto loadAhead = [&](Value i) {
      Value j = a.add(i, a.idx(l.prefetch));
      if (!l.carryWeights)
        return loadLaneWeights(rows, stepOf(j));
      Value beyond = a.cmp(CmpIPredicate::uge, j, a.idx(steps));
      Value step = a.add(step0, a.select(beyond, a.sub(j, a.idx(steps)), j));
      return loadLaneWeights(rows, step, a.select(beyond, nextDelta, a.idx(0)));
    };
    size_t perStep = 2 * rows.size();
    // weight_decode = arithmetic: every row decodes with one product
    // (StepRows::OneProduct) and the loop carries the largest scale byte it
    // saw; where a warp saw a scale above 2, the tile's K loop runs again,
    // adding only those blocks' products (StepRows::LargeScalesOnly, weights
    // loaded again). The common loop thus has no branch, and the other has no
    // carried weights to keep.
    const bool oneProduct = l.allRowsArithmetic;
    auto kLoop = [&](StepRows mode, SmallVector<Value> carried, ArrayRef<Value> accIn,
                     SmallVectorImpl<Value> *after) {
      bool scan = mode == StepRows::OneProduct;
      if (scan)
        carried.push_back(a.i32(0));
      return emitKLoop(
          steps, carried,
          [&](Value i, SmallVectorImpl<Value> &acc, ArrayRef<Value> weights) {
            Value base = bufferOf(i);
            if (staging && l.buffers == 1) {
              gpu::BarrierOp::create(b); // step i - 1's reads are done
              copyAStep(aUnits, stepOf(i), base);
            }
            if (staging) {
              NVVM::CpAsyncWaitGroupOp::create(b, 0);
              gpu::BarrierOp::create(b);
            }
            if (staging && l.buffers == 2) {
              Value next = a.add(i, a.idx(1));
              ifThen(a.cmp(CmpIPredicate::ult, next, a.idx(steps)),
                     [&] { copyAStep(aUnits, stepOf(next), bufferOf(next)); });
            }
            SmallVector<Value> nextW =
                mode == StepRows::LargeScalesOnly
                    ? loadLaneWeights(rows, stepOf(a.add(i, a.idx(l.prefetch))))
                    : loadAhead(i);
            ArrayRef<Value> step = weights.take_front(perStep);
            if (l.wgmma)
              wgmmaRegisterStep(base, step, acc);
            else
              mmaStep(base, step, acc, tiles, mode);
            llvm::append_range(acc, weights.slice(perStep, weights.size() - perStep - scan));
            llvm::append_range(acc, nextW);
            if (scan)
              acc.push_back(largestArithmeticScale(step, weights.back()));
          },
          after, accIn);
    };
    SmallVector<Value> after;
    SmallVector<Value> acc =
        kLoop(oneProduct ? StepRows::OneProduct : StepRows::TwoProducts, ahead, {}, &after);
    if (oneProduct) {
      Value large =
          a.cmp(CmpIPredicate::ugt, after.pop_back_val(), a.i32(sm90::kE2m1OneProductMaxScale));
      // Staged A: the loop again has barriers, so the whole workgroup
      // decides (a barrier with an OR, after every warp's last reads);
      // loopN: one warp, no barrier, so the warps stay apart.
      Value again =
          staging ? a.cmp(CmpIPredicate::ne,
                          NVVM::BarrierOp::create(b, TypeRange{i32()}, Value(), Value(),
                                                  NVVM::BarrierReductionAttr::get(
                                                      b.getContext(), NVVM::BarrierReduction::OR),
                                                  arith::ExtUIOp::create(b, i32(), large))
                              .getRes(),
                          a.i32(0))
                  : NVVM::VoteSyncOp::create(b, b.getI1Type(), a.i32(-1), large,
                                             NVVM::VoteSyncKind::any)
                        .getResult();
      auto op = scf::IfOp::create(b, TypeRange(ValueRange(acc)), again, /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(op.thenBlock());
      if (staging && l.buffers == 2)
        copyAStep(aUnits, step0, groupBase);
      SmallVector<Value> fixedAcc =
          kLoop(StepRows::LargeScalesOnly, loadFirstSteps(), acc, nullptr);
      fixedAcc.resize(l.accRegs);
      scf::YieldOp::create(b, fixedAcc);
      b.setInsertionPointToStart(op.elseBlock());
      scf::YieldOp::create(b, acc);
      acc.assign(op.getResults().begin(), op.getResults().end());
    }
    acc.resize(l.accRegs);
    // carryWeights: the next tile's first steps, loaded by the last trips.
    if (l.carryWeights) {
      llvm::append_range(acc, after);
      acc.push_back(nextTag);
    }
    return acc;
  }

  /// Sums the K-groups' accumulators through shared memory in group order
  /// (deterministic); the main loop ended with a barrier after its reads.
  SmallVector<Value> reduceKWaves(SmallVector<Value> acc) {
    if (s.kWave == 1)
      return acc;
    Value lane32 = lane;
    auto slot = [&](Value warp, int64_t i) {
      return a.add(a.mul(a.add(a.mul(warp, a.idx(l.accRegs)), a.idx(i)), a.idx(32)), lane32);
    };
    Value warp = a.add(waveN, a.mul(waveK, a.idx(l.warpsN)));
    for (int64_t i = 0; i < l.accRegs; ++i)
      store(arith::BitcastOp::create(b, i32(), acc[i]), shared, slot(warp, i));
    gpu::BarrierOp::create(b);
    SmallVector<Value> sum;
    for (int64_t i = 0; i < l.accRegs; ++i) {
      Value total;
      for (int64_t g = 0; g < s.kWave; ++g) {
        Value v = arith::BitcastOp::create(
            b, f32(), load(shared, slot(a.add(waveN, a.idx(g * l.warpsN)), i)));
        total = total ? arith::AddFOp::create(b, total, v) : v;
      }
      sum.push_back(total);
    }
    return sum;
  }

  // --- Epilogue -----------------------------------------------------------

  Value shuffleXor(Value v, int32_t offset) {
    return gpu::ShuffleOp::create(b, v, offset, 32, gpu::ShuffleMode::XOR).getShuffleResult();
  }

  /// A pointer to element `index` of a memref (for atomics, inline asm and
  /// cp.async).
  /// `addressSpace`: 1 global (the arguments), 3 shared (the staging).
  Value elementPtr(Value mem, Type elemType, Value index, unsigned addressSpace = 1) {
    return elementPointer(b, mem, elemType, index, addressSpace);
  }

  Value bf16Pair(Value x, Value y) {
    Type bf = b.getBF16Type();
    return vector::FromElementsOp::create(
        b, VectorType::get({2}, bf),
        ValueRange{arith::TruncFOp::create(b, bf, x), arith::TruncFOp::create(b, bf, y)});
  }

  /// Stage 1 with k_batch > 1: the pre-activation gate/up sums of this
  /// split, f32 [T*topk, 2I] (FinishKernel.h): added atomically into one
  /// buffer, or stored into split bid.z's own buffer (deterministic mode).
  void storePartials(ArrayRef<Value> acc) {
    Value colBase = warpColBase();
    bool atomic = s.kBatchMode == KBatchMode::Atomic;
    Value splitBase =
        atomic ? a.idx(0) : a.mul(bidK, a.mul(a.mul(tokens, a.idx(topk)), a.idx(2 * I)));
    for (int64_t mt = 0; mt < l.mTiles; ++mt)
      for (int64_t hr = 0; hr < 2; ++hr) {
        GemmRowInfo row = rowInfo(a.add(a.idx(mt * 16 + 8 * hr), quadRow));
        Value rowBase =
            a.add(splitBase, a.mul(a.add(a.mul(row.token, a.idx(topk)), row.slot), a.idx(2 * I)));
        ifThen(row.valid, [&] {
          for (int64_t nt = 0; nt < l.nTiles; ++nt)
            for (int64_t half = 0; half < 2; ++half)
              for (int64_t c = 0; c < 2; ++c) {
                Value col =
                    a.add(a.add(colBase, a.idx(nt * 8 + half * I + c)), a.mul(quadCol, a.idx(2)));
                Value v = acc[accIndex(mt, nt, half, 2 * hr + c)];
                Value index = a.add(rowBase, col);
                if (atomic)
                  LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::fadd,
                                            elementPtr(out, f32(), index), v,
                                            LLVM::AtomicOrdering::monotonic, "device", 4);
                else
                  store(v, out, index);
              }
        });
      }
  }

  /// The epilogue (swapAB: after unswapping) of the M tile's 16-row tiles
  /// that hold routed rows: where each row is written alone (no k_batch
  /// partials, no fused quantization across rows) and the live row tiles are
  /// known, a tile past them (only padding rows) is neither unswapped nor
  /// stored (a workgroup-uniform branch: the ballots that counted them
  /// agree).
  void epilogueOfLiveRows(ArrayRef<Value> acc) {
    if (!l.transposedEpilogue && (!l.swapAB || !liveRowTiles || !l.rowWiseEpilogue))
      return epilogue(l.swapAB ? unswapAccumulators(acc) : acc);
    // Every 8-row block's rows loaded before any is written (BlockRows).
    SmallVector<BlockRows> blocks;
    if (l.transposedEpilogue)
      for (int64_t tt = 0; tt < 2 * l.mTiles; ++tt)
        blocks.push_back(blockRows(tt));
    for (int64_t mt = 0; mt < l.mTiles; ++mt) {
      auto tile = [&, mt] {
        if (l.transposedEpilogue)
          epilogueTransposed(acc, mt, blocks);
        else
          epilogue(unswapAccumulators(acc, mt), mt, mt + 1);
      };
      if (mt == 0 || !liveRowTiles)
        tile();
      else
        ifThen(a.cmp(CmpIPredicate::ugt, liveRowTiles, a.idx(2 * mt)), tile);
    }
  }

  /// movmatrix: the 8x8 matrix of b16 pairs whose row g, columns 2q and
  /// 2q + 1 lane (g, q) holds in `word`, transposed in the same layout.
  Value transposeBlock(Value word) {
    return inlineAsm(i32(), ValueRange{word}, "movmatrix.sync.aligned.m8n8.trans.b16 $0, $1;",
                     "=r,r")
        .getResult(0);
  }

  /// What the transposed epilogue of 8-row block `tt` reads: row g's place
  /// (the lane writes it) and the routing weights of rows 2q and 2q + 1 (the
  /// lane computes them; none where the stage applies no weight). Loaded
  /// for all blocks before the first is written: a block's loads would
  /// otherwise wait for the previous block's stores or reductions, which
  /// the compiler cannot prove they do not alias, one memory latency per
  /// block.
  struct BlockRows {
    GemmRowInfo row;
    std::array<Value, 2> weight;
  };
  BlockRows blockRows(int64_t tt) {
    BlockRows r;
    r.row = rowInfo(a.add(a.idx(8 * tt), quadRow));
    if (appliesRoutingWeight()) {
      Value pos =
          a.add(a.mul(bidM, a.idx(s.tileM)), a.add(a.idx(8 * tt), a.mul(quadCol, a.idx(2))));
      r.weight = {load(sortedWeights, pos), load(sortedWeights, a.add(pos, a.idx(1)))};
    }
    return r;
  }

  /// The row-wise epilogue (swapAB) of 16-row tile `mt` from the swapped
  /// accumulators: each block of 8 rows and 8 columns is computed where the
  /// lane holds it (column g, rows 2q and 2q + 1: their routing weights from
  /// `blocks`), rounded to a bf16 pair and transposed by one
  /// movmatrix, after which the lane holds row g's columns 2q, 2q + 1 as the
  /// plain layout does. Unswapping the f32 accumulators first takes two
  /// shuffles and a select a value.
  void epilogueTransposed(ArrayRef<Value> swapped, int64_t mt, ArrayRef<BlockRows> blocks) {
    Value colBase = warpColBase();
    bool applyWeight = appliesRoutingWeight();
    SmallVector<SmallVector<Value>> blockWords; // pairsBlocks: both blocks' words
    for (int64_t hr = 0; hr < 2; ++hr) {
      int64_t tt = 2 * mt + hr;
      const std::array<Value, 2> &weight = blocks[tt].weight;
      SmallVector<Value> words;
      for (int64_t nt = 0; nt < l.nTiles; ++nt) {
        std::array<Value, 2> v;
        for (int64_t c = 0; c < 2; ++c) {
          int r = static_cast<int>(2 * (nt % 2) + c);
          Value x = swapped[swappedIndex(nt / 2, tt, 0, r)];
          if (stage1)
            x = emitActivation(b, spec.activation, target, x,
                               swapped[swappedIndex(nt / 2, tt, 1, r)]);
          v[c] = applyWeight ? arith::MulFOp::create(b, x, weight[c]).getResult() : x;
        }
        words.push_back(transposeBlock(asI32(bf16Pair(v[0], v[1]))));
      }
      if (pairsBlocks()) {
        blockWords.push_back(words);
        continue;
      }
      GemmRowInfo row = blocks[tt].row;
      Value pair = a.add(a.mul(row.token, a.idx(topk)), row.slot);
      if (!storesWholeTiles()) {
        for (int64_t nt = 0; nt < l.nTiles; ++nt)
          writeRow(words[nt], row, pair, pairColumn(colBase, nt));
        continue;
      }
      // A row's 8 columns to one lane of the quad: one 16-byte store or
      // reduction a lane where it had four 4-byte ones.
      for (int64_t group = 0; group < l.nTiles / 4; ++group)
        writeRow(transposeQuad({words[4 * group], words[4 * group + 1], words[4 * group + 2],
                                words[4 * group + 3]}),
                 row, pair, a.add(colBase, a.add(a.idx(32 * group), a.mul(quadCol, a.idx(8)))));
    }
    if (!pairsBlocks())
      return;
    // 16-column warps: lane q takes the 8 columns of tile q & 1 of block
    // 2 mt + q / 2 (transposeQuad over the two blocks' two tiles), one
    // 16-byte store or reduction a lane where it had four 4-byte ones.
    Value upper = a.cmp(CmpIPredicate::ne, andI(quadCol, 2), a.idx(0));
    const GemmRowInfo &r0 = blocks[2 * mt].row, &r1 = blocks[2 * mt + 1].row;
    GemmRowInfo row{a.select(upper, r1.sortedPos, r0.sortedPos),
                    a.select(upper, r1.token, r0.token), a.select(upper, r1.slot, r0.slot),
                    a.select(upper, r1.valid, r0.valid)};
    Value pair = a.add(a.mul(row.token, a.idx(topk)), row.slot);
    writeRow(
        transposeQuad({blockWords[0][0], blockWords[0][1], blockWords[1][0], blockWords[1][1]}),
        row, pair, a.add(colBase, a.mul(andI(quadCol, 1), a.idx(8))));
  }

  /// Whether stage 2's transposed epilogue writes a row's 8 columns a lane
  /// from two 8-row blocks together: 16-column warps (two 8-column tiles),
  /// rows of the output 16-byte aligned. (Stage 1 keeps 4-byte pairs: paired
  /// it was no faster on an H100, and ptxas spills in two of the tables'
  /// a16w4 80-row kernels; docs/sm90a.md.)
  bool pairsBlocks() const {
    return !stage1 && l.transposedEpilogue && l.nTiles == 2 && N % 8 == 0;
  }

  /// The epilogue of 16-row tiles [mtBegin, mtEnd) (all by default).
  void epilogue(ArrayRef<Value> acc, int64_t mtBegin = 0, int64_t mtEnd = -1) {
    if (stage1 && s.kBatch > 1)
      return storePartials(acc);
    if (mtEnd < 0)
      mtEnd = l.mTiles;
    Value colBase = warpColBase();
    bool applyWeight = appliesRoutingWeight();
    bool quantize = stage1 && s.fusedQuant != FusedQuant::None;
    // A fused quantization first takes every row's block amaxes (quantPairs:
    // combined across the pair), then quantizes and stores.
    struct QuantRow {
      GemmRowInfo row;
      Value pair, rowInTile;
      SmallVector<std::array<Value, 2>> vals;
      SmallVector<Value> amax;
    };
    SmallVector<QuantRow> quantRows;
    for (int64_t mt = mtBegin; mt < mtEnd; ++mt)
      for (int64_t hr = 0; hr < 2; ++hr) {
        Value rowInTile = a.add(a.idx(mt * 16 + 8 * hr), quadRow);
        GemmRowInfo row = rowInfo(rowInTile);
        Value pair = a.add(a.mul(row.token, a.idx(topk)), row.slot);
        Value weight = applyWeight ? load(sortedWeights, row.sortedPos) : Value();
        // vals[nt][c]: column colBase + 8 nt + 2q + c of this row.
        SmallVector<std::array<Value, 2>> vals;
        for (int64_t nt = 0; nt < l.nTiles; ++nt) {
          std::array<Value, 2> v;
          for (int64_t c = 0; c < 2; ++c) {
            int64_t r = 2 * hr + c;
            v[c] = stage1 ? emitActivation(b, spec.activation, target, acc[accIndex(mt, nt, 0, r)],
                                           acc[accIndex(mt, nt, 1, r)])
                          : acc[accIndex(mt, nt, 0, r)];
            if (weight)
              v[c] = arith::MulFOp::create(b, v[c], weight);
          }
          vals.push_back(v);
        }
        if (quantize) {
          QuantRow q{row, pair, rowInTile, vals, {}};
          for (int64_t cb = 0; cb < l.nTiles / tilesPerQuantBlock(); ++cb)
            q.amax.push_back(quadAmax(vals, cb));
          quantRows.push_back(std::move(q));
          continue;
        }
        for (int64_t nt = 0; nt < l.nTiles; ++nt)
          writeRow(asI32(bf16Pair(vals[nt][0], vals[nt][1])), row, pair, pairColumn(colBase, nt));
      }
    if (l.quantPairs) {
      // One block per warp (16 columns of a 32-column block).
      SmallVector<Value> rowsInTile, amax;
      for (QuantRow &q : quantRows) {
        rowsInTile.push_back(q.rowInTile);
        amax.push_back(q.amax[0]);
      }
      combinePairAmax(rowsInTile, amax);
      for (auto [q, m] : llvm::zip(quantRows, amax))
        q.amax[0] = m;
    }
    for (QuantRow &q : quantRows)
      storeQuantized(q.vals, q.row, q.pair, colBase, q.amax);
  }

  /// Whether a row's bf16 outputs leave 8 columns a lane (transposedEpilogue):
  /// a warp's columns are whole groups of four 8-column tiles, and rows of
  /// the output start 16-byte aligned.
  bool storesWholeTiles() const {
    return l.transposedEpilogue && l.nTiles % 4 == 0 && (stage1 ? I : N) % 8 == 0;
  }

  Value asI32(Value bf16x2) {
    return vector::ExtractOp::create(
        b, vector::BitCastOp::create(b, VectorType::get({1}, i32()), bf16x2), ArrayRef<int64_t>{0});
  }

  /// The lane's column pairs of four consecutive 8-column tiles (word t:
  /// columns 2q, 2q + 1 of tile t) transposed across its quad: word s of
  /// the result is columns 2s, 2s + 1 of tile q. Two exchange rounds (with
  /// lane q ^ 2, then q ^ 1) of two shuffles each; the selects place the
  /// words by the lane's q.
  std::array<Value, 4> transposeQuad(const std::array<Value, 4> &w) {
    Value b1 = a.cmp(CmpIPredicate::ne, andI(quadCol, 2), a.idx(0));
    Value b0 = a.cmp(CmpIPredicate::ne, andI(quadCol, 1), a.idx(0));
    // Keep tiles 2 b1 and 2 b1 + 1; lane q ^ 2 keeps the other two.
    Value own0 = a.select(b1, w[2], w[0]), own1 = a.select(b1, w[3], w[1]);
    Value far0 = shuffleXor(a.select(b1, w[0], w[2]), 2);
    Value far1 = shuffleXor(a.select(b1, w[1], w[3]), 2);
    // Keep tile q (lane q's and lane q ^ 2's words); lane q ^ 1 keeps the other.
    Value mine = a.select(b0, own1, own0), fromQ2 = a.select(b0, far1, far0);
    Value fromQ1 = shuffleXor(a.select(b0, own0, own1), 1);
    Value fromQ3 = shuffleXor(a.select(b0, far0, far1), 1);
    // Word s comes from lane s: lane q's own at s = q, lane q ^ k's at s = q ^ k.
    std::array<Value, 4> x = {a.select(b0, fromQ1, mine), a.select(b0, mine, fromQ1),
                              a.select(b0, fromQ3, fromQ2), a.select(b0, fromQ2, fromQ3)};
    return {a.select(b1, x[2], x[0]), a.select(b1, x[3], x[1]), a.select(b1, x[0], x[2]),
            a.select(b1, x[1], x[3])};
  }

  /// A row's outputs from column `col`: `run` (i32 bf16 pairs: one, or four
  /// from storesWholeTiles) stored, or added into the top-k sum by sm_90's native
  /// packed reductions (round to nearest even: what the compare-and-swap
  /// loop LLVM expands atomicrmw fadd <2 x bfloat> into computes, without its
  /// retries under contention). Only valid rows write.
  void writeRow(ArrayRef<Value> run, GemmRowInfo &row, Value pair, Value col) {
    int64_t n = static_cast<int64_t>(run.size());
    if (stage1 || s.reduce == ReduceMode::Reduce) {
      Value v = vector::BitCastOp::create(
          b, VectorType::get({2 * n}, b.getBF16Type()),
          vector::FromElementsOp::create(b, VectorType::get({n}, i32()), ValueRange(run)));
      int64_t width = stage1 ? I : N;
      ifThen(row.valid, [&] { vstore(v, out, a.add(a.mul(pair, a.idx(width)), col), 4 * n); });
      return;
    }
    ifThen(row.valid, [&] {
      Value ptr = elementPtr(out, b.getBF16Type(), a.add(a.mul(row.token, a.idx(N)), col));
      SmallVector<Value> operands = {ptr};
      llvm::append_range(operands, run);
      if (n == 1)
        inlineAsm(Type(), operands, "red.relaxed.gpu.global.add.noftz.bf16x2 [$0], $1;", "l,r");
      else
        inlineAsm(Type(), operands,
                  "red.relaxed.gpu.global.add.noftz.v4.bf16x2 [$0], {$1, $2, $3, $4};",
                  "l,r,r,r,r");
    });
  }
  /// The lane's column pair of 8-column tile `nt` of a row.
  Value pairColumn(Value colBase, int64_t nt) {
    return a.add(a.add(colBase, a.idx(nt * 8)), a.mul(quadCol, a.idx(2)));
  }

  /// Fused MX quantization of one row's values: a 32-column block is 4
  /// n-tiles, 8 values in each of the 4 lanes of the row's quad; the block's
  /// amax over the quad, the e8m0 exponent by the in-epilogue rule, then
  /// fp4 bytes (the lane's column pairs) or fp8 bytes.
  /// A fused quantization's 32-column blocks of this warp: their 8-column
  /// tiles (4, or 2 where a block spans a pair of warps).
  int64_t tilesPerQuantBlock() const { return std::min<int64_t>(4, l.nTiles); }

  /// The amax of block `cb` of a row over the lane quad (the warp's part of
  /// the block: all of it, or its half with quantPairs).
  Value quadAmax(ArrayRef<std::array<Value, 2>> vals, int64_t cb) {
    Value amax;
    int64_t tiles = tilesPerQuantBlock();
    for (int64_t h = 0; h < tiles; ++h)
      for (Value v : vals[tiles * cb + h]) {
        Value m = emitFAbs(b, target, v);
        amax = amax ? arith::MaximumFOp::create(b, amax, m) : m;
      }
    for (int32_t off : {1, 2}) // across the quad
      amax = arith::MaximumFOp::create(b, amax, shuffleXor(amax, off));
    return amax;
  }

  /// quantPairs: each row's block amax combined with the other warp's of the
  /// pair, through one f32 per row and warp after the staging and reduction
  /// (the other warps may still read those) and a barrier of the pair's 64
  /// threads (named barrier 1 + pair; with k_wave > 1 only K-group 0 gets
  /// here, so the workgroup barrier would not do).
  void combinePairAmax(ArrayRef<Value> rowsInTile, MutableArrayRef<Value> amax) {
    int64_t base = (l.sharedBytes - l.quantScratchBytes) / 4;
    auto slot = [&](Value warp, Value row) {
      return a.add(a.idx(base), a.add(a.mul(warp, a.idx(s.tileM)), row));
    };
    for (auto [row, m] : llvm::zip(rowsInTile, amax))
      ifThen(a.cmp(CmpIPredicate::eq, quadCol, a.idx(0)),
             [&] { store(arith::BitcastOp::create(b, i32(), m), shared, slot(waveN, row)); });
    Value id = a.toI32(a.add(a.idx(1), shr(waveN, 1)));
    NVVM::BarrierOp::create(b, TypeRange{}, id, a.i32(64), NVVM::BarrierReductionAttr(), Value());
    Value other = arith::XOrIOp::create(b, waveN, a.idx(1));
    for (auto [row, m] : llvm::zip(rowsInTile, amax))
      m = arith::MaximumFOp::create(
          b, m, arith::BitcastOp::create(b, f32(), load(shared, slot(other, row))));
  }

  void storeQuantized(ArrayRef<std::array<Value, 2>> vals, GemmRowInfo &row, Value pair,
                      Value colBase, ArrayRef<Value> blockAmax) {
    bool fp4 = s.fusedQuant == FusedQuant::FP4;
    int64_t tiles = tilesPerQuantBlock();
    for (int64_t cb = 0; cb < l.nTiles / tiles; ++cb) {
      Value e = emitEpilogueScale(b, arith::BitcastOp::create(b, i32(), blockAmax[cb]), fp4);
      Value firstCol = a.add(colBase, a.idx(cb * 32));
      for (int64_t h = 0; h < tiles; ++h) {
        Value col = a.add(a.add(firstCol, a.idx(h * 8)), a.mul(quadCol, a.idx(2)));
        const std::array<Value, 2> &v = vals[tiles * cb + h];
        ifThen(row.valid, [&] {
          if (p.decodedOut) {
            Value pairValues =
                bf16Pair(emitMxDecodedValue(b, v[0], e, fp4), emitMxDecodedValue(b, v[1], e, fp4));
            vstore(pairValues, out, a.add(a.mul(pair, a.idx(I)), col), 4);
            return;
          }
          if (fp4) {
            Value byte = emitFp4Byte(b, target, v[0], v[1], e);
            store(byte, out, a.add(a.mul(pair, a.idx(I / 2)), a.divu(col, a.idx(2))));
            return;
          }
          Value base = a.add(a.mul(pair, a.idx(I)), col);
          store(emitFp8Byte(b, target, v[0], e), out, base);
          store(emitFp8Byte(b, target, v[1], e), out, a.add(base, a.idx(1)));
        });
      }
      // The quad's first lane (of the pair's first warp) writes the scale at
      // the row's sorted position (padding rows too: their values are zeros,
      // their scale 0).
      if (p.decodedOut)
        continue;
      Value writer = a.cmp(CmpIPredicate::eq, quadCol, a.idx(0));
      if (l.quantPairs)
        writer =
            arith::AndIOp::create(b, writer, a.cmp(CmpIPredicate::eq, andI(waveN, 1), a.idx(0)));
      ifThen(writer, [&] {
        Value byte = arith::TruncIOp::create(b, b.getI8Type(), e);
        store(byte, outScale,
              emitE8m0ShuffleOffset(a, row.sortedPos, a.divu(firstCol, a.idx(32)), I / 32));
      });
    }
  }

  void build(gpu::GPUFuncOp func) {
    assert(p.aFormat == DType::BF16 && "MX activations reach sm_90a GEMMs decoded");
    bindArgs(func, stage1, p.clearsLayerOutput, p.stageReady);
    tokens = a.toIndex(tokensI32);
    // Dynamic: the launch provides the stages (KernelSignature::dynamicSharedBytes).
    shared = l.dynamicShared
                 ? dynamicLdsBuffers(b, ldsBufferType(b.getContext(), i32(), l.sharedBytes / 4))[0]
                 : Value(func.getWorkgroupAttributions()[0]);

    Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
    lane = andI(tid, 31);
    quadRow = shr(lane, 2);
    quadCol = andI(lane, 3);
    Value warp = shr(tid, 5);
    waveN = a.remu(warp, a.idx(l.warpsN));
    waveK = a.divu(warp, a.idx(l.warpsN));
    gtid = a.add(a.mul(waveN, a.idx(32)), lane);
    bidN = firstN = gpu::BlockIdOp::create(b, gpu::Dimension::x);
    gridN = gpu::GridDimOp::create(b, gpu::Dimension::x);
    bidK = gpu::BlockIdOp::create(b, gpu::Dimension::z);

    gridM = gpu::GridDimOp::create(b, gpu::Dimension::y);
    std::array<Value, 3> grid = {gridN, gridM, gpu::GridDimOp::create(b, gpu::Dimension::z)};
    // Stage 2 beside stage 1 (StageReady.h): the output it adds into cleared
    // before it may launch.
    const bool releases = stage1 && p.stageReady, acquires = !stage1 && p.stageReady;
    if (releases) {
      emitClearLayerOutput(a, spec.problem.modelDim, p.threads, grid);
      emitStage2Launch(a);
    }
    usedTiles = emitUsedMTiles(a, p, numValid);
    SmallVector<Value> init;
    if (l.carryWeights)
      init = initialCarriedWeights();
    // Stage 1: the N tiles of each M tile this workgroup writes (loopN:
    // firstN, firstN + grid.x, ... below n / tile_n; else its one), counted
    // down for stage 2 after the tile; stage 2 waits for them before it.
    Value firstThread = a.cmp(CmpIPredicate::eq, tid, a.idx(0));
    Value tilesPerM = a.idx(1);
    if (releases && l.loopN)
      tilesPerM = a.divu(a.add(a.sub(nTilesN(), firstN), a.sub(gridN, a.idx(1))), gridN);
    auto releaseTile = [&](Value block) {
      ifThen(firstThread, [&] { emitStageReadyRelease(a, stageReady, block, tilesPerM); });
    };
    auto acquireTile = [&](Value block) {
      ifThen(firstThread, [&] { emitStageReadyAcquire(a, stageReady, block); });
      gpu::BarrierOp::create(b);
    };
    emitPersistentMTilesCarrying(
        a, p, spec.problem.experts, usedTiles, sortedExperts,
        gpu::BlockIdOp::create(b, gpu::Dimension::y), gridM, waveK, init,
        [&](Value m, Value e, ValueRange carried, SmallVectorImpl<Value> &next) {
          bidM = m;
          expert = e;
          carriedIn = carried;
          liveRowTiles = Value();
          if (l.loopN) { // the epilogues are the N loop's
            next = loopNTile();
            return SmallVector<Value>();
          }
          SmallVector<Value> acc = l.wgmma             ? wgmmaMainLoop()
                                   : l.registerWeights ? registerMainLoopLive()
                                                       : mainLoop();
          next.assign(acc.begin() + l.accRegs, acc.end());
          acc.resize(l.accRegs);
          return reduceKWaves(acc);
        },
        [&](ArrayRef<Value> acc) {
          if (!l.loopN)
            epilogueOfLiveRows(acc);
        },
        acquires ? function_ref<void(Value)>(acquireTile) : nullptr,
        releases ? function_ref<void(Value)>(releaseTile) : nullptr);
    if (!releases)
      emitClearLayerOutput(a, spec.problem.modelDim, p.threads, grid);
    gpu::ReturnOp::create(b);
  }
};

} // namespace

gpu::GPUFuncOp buildSm90GemmKernel(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                                   StringRef symbol, const MoeSpec &spec, const GemmPlan &plan,
                                   const TargetInfo &target) {
  // i32 words: the fragments are 4-byte loads, the staging 16-byte stores.
  SmallVector<MemRefType> shared;
  if (!plan.sm90.dynamicShared)
    shared.push_back(ldsBufferType(b.getContext(), b.getI32Type(), plan.sm90.sharedBytes / 4));
  KernelSignature sig = gemmKernelSignature(symbol, spec, plan);
  gpu::GPUFuncOp func = createKernel(b, module, sig, gemmArgElementTypes(b, plan), shared);
  if (!shared.empty())
    func.setWorkgroupAttributionAttr(0, LLVM::LLVMDialect::getAlignAttrName(),
                                     b.getI64IntegerAttr(16));
  // Registers for the planned workgroups per SM (ptxas would otherwise take
  // up to 255 a thread and leave the SM a few warps).
  if (plan.sm90.registerWeights)
    func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                  b.getI32IntegerAttr(static_cast<int32_t>(plan.sm90.minBlocksPerSM)));
  // Stage 2 beside stage 1 reads its rows as stage_ready releases them, and
  // completes after it (StageReady.h).
  if (plan.stageReady && plan.stage == StageId::Stage2)
    func->setAttr(kGridWaitAtExitAttrName, b.getUnitAttr());
  Sm90GemmBuilder(b, spec, plan, target).build(func);
  return func;
}

} // namespace moegen
