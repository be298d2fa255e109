//===- Sm90GemmKernel.cpp - The stage-1 and stage-2 GEMMs for sm_90a ------===//

#include "templates/gemm/Sm90GemmKernel.h"

#include "templates/epilogue/ActivationLowering.h"
#include "templates/epilogue/MxQuantize.h"
#include "templates/gemm/GemmRows.h"
#include "templates/sm90/MxSoftwareDecode.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using arith::CmpIPredicate;

namespace moegen {

namespace {

bool isMX(DType t) { return t == DType::MXFP4 || t == DType::MXFP8; }

constexpr int64_t kChunk = Sm90GemmLayout::kChunk;
constexpr int64_t kStride = Sm90GemmLayout::kRowStride;

/// Where one thread's share of a K block comes from and goes to, fixed for
/// an M tile: a unit is 8 consecutive elements of one staged row, or the
/// whole 32-element row block where its bytes are contiguous in global memory
/// (MX A rows, fp4 weight chunks): one wide load and one scale per block.
struct StageUnit {
  Value global; // A: element (bf16) or byte offset at K = 0; B: byte offset at K = 0
  Value scaleRow;
  Value valid;   // A only: a routed row (padding rows stage zeros)
  Value shared;  // i32 index of the unit within the K-group's staging
  Value inRange; // null when every thread has this unit
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

  Sm90GemmBuilder(ImplicitLocOpBuilder &b, const MoeSpec &spec, const GemmPlan &p,
                  const TargetInfo &target)
      : b(b), a{b}, spec(spec), p(p), s(p.schedule), l(p.sm90), target(target),
        stage1(p.stage == StageId::Stage1) {
    K = p.k;
    N = p.n;
    I = spec.problem.interDim;
    topk = spec.problem.topk;
    halves = stage1 ? 2 : 1;
    groupThreads = p.nWaves * 32;
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
  void ifThen(Value cond, llvm::function_ref<void()> body) {
    auto op = scf::IfOp::create(b, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(op.thenBlock());
    body();
  }

  GemmRowInfo rowInfo(Value rowInTile) {
    return emitGemmRowInfo(a, sortedIds, a.add(a.mul(bidM, a.idx(s.tileM)), rowInTile), tokens,
                           topk);
  }

  int64_t weightRows() const { return stage1 ? 2 * I : N; }
  int64_t weightRowBytes() const { return halfBytesPerElement(p.bFormat) * K / 2; }
  int64_t aRowBytes() const { return halfBytesPerElement(p.aFormat) * K / 2; }
  /// Elements of one unit of A or of the weights.
  static int64_t unitElems(DType t, bool isA) {
    return (isA && isMX(t)) || (!isA && t == DType::MXFP4) ? kChunk : 8;
  }
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

  SmallVector<StageUnit> planAUnits() {
    return planUnits(l.aRows, kChunk / unitElems(p.aFormat, true), [&](Value r, Value u) {
      GemmRowInfo ri = rowInfo(r);
      Value row = stage1 ? ri.token : a.add(a.mul(ri.token, a.idx(topk)), ri.slot);
      row = a.select(ri.valid, row, a.idx(0));
      StageUnit su;
      // bf16 A is addressed in elements, MX A in bytes.
      su.global = p.aFormat == DType::BF16 ? a.add(a.mul(row, a.idx(K)), a.mul(u, a.idx(8)))
                                           : a.add(a.mul(row, a.idx(aRowBytes())),
                                                   a.mul(u, a.idx(unitBytes(p.aFormat, true))));
      su.scaleRow = stage1 ? a.select(ri.valid, ri.token, a.idx(0)) : ri.sortedPos;
      su.valid = ri.valid;
      su.shared = a.add(a.mul(r, a.idx(kStride / 4)), a.mul(u, a.idx(4)));
      return su;
    });
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

  /// 8 MX elements (fp4: one i32 word, fp8: two) times `scale`, as bf16.
  /// Each code's sign and magnitude bits are moved into an f32 whose value is
  /// the element times 2^-126 (e2m1) or 2^-120 (e4m3): the formats' exponent
  /// fields line up with f32's low exponent bits, and their subnormals
  /// (exponent 0) with f32's. Two exact power-of-two products then give the
  /// element and the element times the scale, rounded to bf16 as before.
  Value dequant(ArrayRef<Value> words, Value scale, bool fp4) {
    SmallVector<Value> vals;
    auto shift = [&](Value w, int64_t by) -> Value {
      if (by >= 0)
        return by == 0 ? w : arith::ShLIOp::create(b, w, a.i32(by)).getResult();
      return arith::ShRUIOp::create(b, w, a.i32(-by));
    };
    auto bitsAnd = [&](Value x, uint32_t m) {
      return arith::AndIOp::create(b, x, a.i32(static_cast<int32_t>(m)));
    };
    Value unscale =
        arith::ConstantFloatOp::create(b, b.getF32Type(), llvm::APFloat(fp4 ? 0x1p126f : 0x1p120f));
    for (int64_t e = 0; e < 8; ++e) {
      Value word = words[fp4 ? 0 : e / 4];
      Value bits;
      if (fp4) {
        // Code e: magnitude bits 4e..4e+2 to 22..24, sign bit 4e+3 to 31.
        Value mag = bitsAnd(shift(word, 22 - 4 * e), 0x01C00000u);
        Value sign = bitsAnd(shift(word, 28 - 4 * e), 0x80000000u);
        bits = arith::OrIOp::create(b, mag, sign);
      } else {
        // Code k = e % 4: magnitude bits 8k..8k+6 to 20..26, sign 8k+7 to 31.
        int64_t k = e % 4;
        Value mag = bitsAnd(shift(word, 20 - 8 * k), 0x07F00000u);
        Value sign = bitsAnd(shift(word, 24 - 8 * k), 0x80000000u);
        Value nan = a.cmp(CmpIPredicate::eq, mag, a.i32(0x07F00000));
        bits = a.select(nan, a.i32(0x7FC00000), arith::OrIOp::create(b, mag, sign));
      }
      Value v = arith::BitcastOp::create(b, f32(), bits);
      v = arith::MulFOp::create(b, v, unscale);
      v = arith::MulFOp::create(b, v, scale);
      vals.push_back(arith::TruncFOp::create(b, b.getBF16Type(), v));
    }
    return vector::FromElementsOp::create(b, VectorType::get({8}, b.getBF16Type()), vals);
  }

  /// The global loads of one unit for K block `kb`, held in registers until
  /// the unit is staged: its bytes (bf16 A: its elements) and, for MX
  /// formats, its scale byte. Units past the group's count load unit 0's
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
    bool fp4 = format == DType::MXFP4;
    Value off = isA ? a.add(u.global, a.mul(kb, a.idx(fp4 ? 16 : 32)))
                    : a.add(u.global, a.mul(kb, a.idx(fp4 ? 256 : 512)));
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
      Value scale = sm90::emitE8m0ToF32(b, arith::ExtUIOp::create(b, i32(), raw[1]));
      bool fp4 = format == DType::MXFP4;
      int64_t perPiece = fp4 ? 1 : 2;
      for (int64_t j = 0; j * perPiece < bytes / 4; ++j)
        pieces.push_back(vector::BitCastOp::create(
            b, v4i32, dequant(ArrayRef<Value>(words).slice(j * perPiece, perPiece), scale, fp4)));
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
      llvm::append_range(raw, loadUnit(p.aFormat, aBuf, aScale, u, kb, /*isA=*/true));
    for (const StageUnit &u : bUnits)
      llvm::append_range(raw, loadUnit(p.bFormat, wBuf, wScale, u, kb, /*isA=*/false));
    return raw;
  }

  /// Dequantizes and stores the loads of `loadBlock` at `base`.
  void stageBlock(ArrayRef<StageUnit> aUnits, ArrayRef<StageUnit> bUnits, ArrayRef<Value> raw,
                  Value base) {
    size_t next = 0;
    auto stage = [&](const StageUnit &u, DType format, bool isA) {
      size_t n = format == DType::BF16 ? 1 : 2;
      ArrayRef<Value> mine = raw.slice(next, n);
      next += n;
      auto body = [&] {
        SmallVector<Value, 4> pieces = convertUnit(format, isA, mine, u);
        for (auto [j, v] : llvm::enumerate(pieces))
          vstore(v, shared, a.add(base, a.add(u.shared, a.idx(4 * j))), 16);
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

  /// The K loop: block i is dequantized into staging buffer i % buffers
  /// from registers loaded during block i - 1, then block i + 1's global
  /// loads are issued before the barrier and block i's MMAs, so that they
  /// are in flight while the warps compute.
  SmallVector<Value> mainLoop() {
    SmallVector<StageUnit> aUnits = planAUnits();
    SmallVector<StageUnit> bUnits = planBUnits();
    int64_t blocks = p.kPerWave / kChunk;
    int64_t bufferWords = l.stagingBytes / 4;
    Value groupBase = a.mul(waveK, a.idx(l.buffers * bufferWords));
    Value kBlock0 =
        a.divu(a.add(a.mul(bidK, a.idx(p.kSlice)), a.mul(waveK, a.idx(p.kPerWave))), a.idx(kChunk));
    Value zero = a.f32(0.0f);
    SmallVector<Value> init(l.accRegs, zero);
    llvm::append_range(init, loadBlock(aUnits, bUnits, kBlock0));
    auto loop = scf::ForOp::create(b, a.idx(0), a.idx(blocks), a.idx(1), init);
    // Not unrolled: a K block's staging already gives the scheduler enough
    // independent loads, and unrolling would multiply the live registers.
    disableUnroll(loop);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value i = loop.getInductionVar();
      auto args = loop.getRegionIterArgs();
      SmallVector<Value> acc(args.begin(), args.begin() + l.accRegs);
      SmallVector<Value> raw(args.begin() + l.accRegs, args.end());
      Value base = groupBase;
      if (l.buffers == 2)
        base = a.add(base, a.mul(andI(i, 1), a.idx(bufferWords)));
      else
        gpu::BarrierOp::create(b); // the previous block's MMAs are done with the staging
      stageBlock(aUnits, bUnits, raw, base);
      // The last block reloads itself (a valid address, never staged).
      Value nextBlock = arith::MinUIOp::create(b, a.add(i, a.idx(1)), a.idx(blocks - 1));
      SmallVector<Value> next = loadBlock(aUnits, bUnits, a.add(kBlock0, nextBlock));
      // With two buffers this barrier also orders block i - 1's MMAs before
      // block i + 1's stores into the same buffer.
      gpu::BarrierOp::create(b);
      mmaBlock(base, acc);
      llvm::append_range(acc, next);
      scf::YieldOp::create(b, acc);
    }
    if (s.kWave > 1)
      gpu::BarrierOp::create(b); // the reduction reuses the staging
    return SmallVector<Value>(loop.getResults().begin(), loop.getResults().begin() + l.accRegs);
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
    Value warp = a.add(waveN, a.mul(waveK, a.idx(p.nWaves)));
    for (int64_t i = 0; i < l.accRegs; ++i)
      store(arith::BitcastOp::create(b, i32(), acc[i]), shared, slot(warp, i));
    gpu::BarrierOp::create(b);
    SmallVector<Value> sum;
    for (int64_t i = 0; i < l.accRegs; ++i) {
      Value total;
      for (int64_t g = 0; g < s.kWave; ++g) {
        Value v = arith::BitcastOp::create(
            b, f32(), load(shared, slot(a.add(waveN, a.idx(g * p.nWaves)), i)));
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

  /// A global pointer to element `index` of a memref (for LLVM atomics).
  Value elementPtr(Value mem, Type elemType, Value index) {
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, mem);
    Value addr = arith::IndexCastOp::create(b, b.getI64Type(), base);
    auto ptrType = LLVM::LLVMPointerType::get(b.getContext(), 1);
    Value ptr = LLVM::IntToPtrOp::create(b, ptrType, addr);
    Value idx = arith::IndexCastOp::create(b, b.getI64Type(), index);
    return LLVM::GEPOp::create(b, ptrType, elemType, ptr, ValueRange{idx});
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
    Value colBase = a.add(a.mul(bidN, a.idx(s.tileN)), a.mul(waveN, a.idx(l.nPerWarp)));
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

  void epilogue(ArrayRef<Value> acc) {
    if (stage1 && s.kBatch > 1)
      return storePartials(acc);
    Value colBase = a.add(a.mul(bidN, a.idx(s.tileN)), a.mul(waveN, a.idx(l.nPerWarp)));
    bool applyWeight = stage1 == spec.problem.doweightStage1;
    for (int64_t mt = 0; mt < l.mTiles; ++mt)
      for (int64_t hr = 0; hr < 2; ++hr) {
        GemmRowInfo row = rowInfo(a.add(a.idx(mt * 16 + 8 * hr), quadRow));
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
        if (stage1 && s.fusedQuant != FusedQuant::None) {
          storeQuantized(vals, row, pair, colBase);
          continue;
        }
        for (int64_t nt = 0; nt < l.nTiles; ++nt) {
          Value col = a.add(a.add(colBase, a.idx(nt * 8)), a.mul(quadCol, a.idx(2)));
          Value packed = bf16Pair(vals[nt][0], vals[nt][1]);
          if (stage1 || s.reduce == ReduceMode::Reduce) {
            int64_t width = stage1 ? I : N;
            ifThen(row.valid,
                   [&] { vstore(packed, out, a.add(a.mul(pair, a.idx(width)), col), 4); });
            continue;
          }
          // The top-k sum: both columns of the lane in one packed bf16x2 atomic.
          ifThen(row.valid, [&] {
            Value ptr = elementPtr(out, b.getBF16Type(), a.add(a.mul(row.token, a.idx(N)), col));
            LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::fadd, ptr, packed,
                                      LLVM::AtomicOrdering::monotonic, "device", 4);
          });
        }
      }
  }

  /// Fused MX quantization of one row's values: a 32-column block is 4
  /// n-tiles, 8 values in each of the 4 lanes of the row's quad; the block's
  /// amax over the quad, the e8m0 exponent by the in-epilogue rule, then
  /// fp4 bytes (the lane's column pairs) or fp8 bytes.
  void storeQuantized(ArrayRef<std::array<Value, 2>> vals, GemmRowInfo &row, Value pair,
                      Value colBase) {
    bool fp4 = s.fusedQuant == FusedQuant::FP4;
    for (int64_t cb = 0; cb < l.nTiles / 4; ++cb) {
      Value amax;
      for (int64_t h = 0; h < 4; ++h)
        for (Value v : vals[4 * cb + h]) {
          Value m = emitFAbs(b, target, v);
          amax = amax ? arith::MaximumFOp::create(b, amax, m) : m;
        }
      for (int32_t off : {1, 2}) // across the quad
        amax = arith::MaximumFOp::create(b, amax, shuffleXor(amax, off));
      Value e = emitEpilogueScale(b, arith::BitcastOp::create(b, i32(), amax), fp4);
      Value firstCol = a.add(colBase, a.idx(cb * 32));
      for (int64_t h = 0; h < 4; ++h) {
        Value col = a.add(a.add(firstCol, a.idx(h * 8)), a.mul(quadCol, a.idx(2)));
        const std::array<Value, 2> &v = vals[4 * cb + h];
        ifThen(row.valid, [&] {
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
      // The quad's first lane writes the scale at the row's sorted position
      // (padding rows too: their values are zeros, their scale 0).
      ifThen(a.cmp(CmpIPredicate::eq, quadCol, a.idx(0)), [&] {
        Value byte = arith::TruncIOp::create(b, b.getI8Type(), e);
        store(byte, outScale,
              emitE8m0ShuffleOffset(a, row.sortedPos, a.divu(firstCol, a.idx(32)), I / 32));
      });
    }
  }

  void build(gpu::GPUFuncOp func) {
    bindArgs(func, stage1);
    tokens = a.toIndex(tokensI32);
    shared = func.getWorkgroupAttributions()[0];

    Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
    lane = andI(tid, 31);
    quadRow = shr(lane, 2);
    quadCol = andI(lane, 3);
    Value warp = shr(tid, 5);
    waveN = a.remu(warp, a.idx(p.nWaves));
    waveK = a.divu(warp, a.idx(p.nWaves));
    gtid = a.add(a.mul(waveN, a.idx(32)), lane);
    bidN = gpu::BlockIdOp::create(b, gpu::Dimension::x);
    bidK = gpu::BlockIdOp::create(b, gpu::Dimension::z);

    emitPersistentMTiles(a, p, spec.problem.experts, numValid, sortedExperts,
                         gpu::GridDimOp::create(b, gpu::Dimension::y), [&](Value m, Value e) {
                           bidM = m;
                           expert = e;
                           SmallVector<Value> acc = reduceKWaves(mainLoop());
                           if (s.kWave > 1)
                             ifThen(a.cmp(CmpIPredicate::eq, waveK, a.idx(0)),
                                    [&] { epilogue(acc); });
                           else
                             epilogue(acc);
                         });
    gpu::ReturnOp::create(b);
  }
};

} // namespace

gpu::GPUFuncOp buildSm90GemmKernel(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                                   StringRef symbol, const MoeSpec &spec, const GemmPlan &plan,
                                   const TargetInfo &target) {
  // i32 words: the fragments are 4-byte loads, the staging 16-byte stores.
  SmallVector<MemRefType> shared = {
      ldsBufferType(b.getContext(), b.getI32Type(), plan.sm90.sharedBytes / 4)};
  KernelSignature sig = gemmKernelSignature(symbol, spec, plan);
  gpu::GPUFuncOp func = createKernel(b, module, sig, gemmArgElementTypes(b, plan), shared);
  func.setWorkgroupAttributionAttr(0, LLVM::LLVMDialect::getAlignAttrName(),
                                   b.getI64IntegerAttr(16));
  Sm90GemmBuilder(b, spec, plan, target).build(func);
  return func;
}

} // namespace moegen
