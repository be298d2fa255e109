//===- GemmKernel.cpp - The stage-1 and stage-2 MoE GEMM kernels ----------===//

#include "templates/gemm/GemmKernel.h"

#include "templates/epilogue/ActivationLowering.h"
#include "templates/epilogue/MxQuantize.h"
#include "templates/gemm/GemmRows.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/Support/Format.h"

using namespace mlir;
using arith::CmpIPredicate;

namespace moegen {

namespace {

struct GemmBuilder : GemmKernelArgs {
  ImplicitLocOpBuilder &b;
  Arith a;
  const MoeSpec &spec;
  const GemmPlan &p;
  const TargetInfo &target;
  const StageSchedule &s;
  bool stage1;
  int64_t K, N, I, topk;
  // The MFMA is M x M (16 or 32); each lane holds `regs` accumulator values.
  int64_t M, regs, nPerWave, mTiles, nTiles, halves, numAcc;

  Value tokens; // the tokens argument as an index
  // Per-thread coordinates.
  // waveM is null without an M split (mWaves = 1): the wave's rows start at
  // row 0 of the tile.
  Value lane, laneRow, laneGroup, waveN, waveM, waveK, bidN, bidM, bidK, expert;
  // This lane's weight row within an n-tile, and its byte offset.
  Value laneWeightRow, laneWeightBytes;
  Value ldsA; // A tiles, then the k_wave reduction scratch

  GemmBuilder(ImplicitLocOpBuilder &b, const MoeSpec &spec, const GemmPlan &p,
              const TargetInfo &target)
      : b(b), a{b}, spec(spec), p(p), target(target), s(p.schedule),
        stage1(p.stage == StageId::Stage1) {
    K = p.k;
    N = p.n;
    I = spec.problem.interDim;
    topk = spec.problem.topk;
    nPerWave = s.tileN / p.nWaves;
    M = p.mfma.m;
    mTiles = p.mPerWave / M;
    nTiles = nPerWave / M;
    regs = M * M / 64;
    halves = stage1 ? 2 : 1;
    numAcc = mTiles * nTiles * halves;
  }

  Type f32() { return b.getF32Type(); }
  VectorType accType() { return VectorType::get({regs}, f32()); }
  Value load(Value mem, Value idx) { return memref::LoadOp::create(b, mem, ValueRange{idx}); }
  void store(Value v, Value mem, Value idx) { memref::StoreOp::create(b, v, mem, ValueRange{idx}); }
  Value vload(VectorType t, Value mem, Value idx) {
    return vector::LoadOp::create(b, t, mem, ValueRange{idx});
  }
  Value andI(Value x, int64_t m) { return arith::AndIOp::create(b, x, a.idx(m)); }
  Value shr(Value x, int64_t n) { return arith::ShRUIOp::create(b, x, a.idx(n)); }

  Value scaleOffset(Value row, Value col, int64_t cols) {
    return emitE8m0ShuffleOffset(a, row, col, cols);
  }

  Value loadScale(Value mem, Value row, Value col, int64_t cols) {
    Value byte = load(mem, scaleOffset(row, col, cols));
    return arith::BitcastOp::create(b, b.getType<Float8E8M0FNUType>(), byte);
  }

  /// The tile row of row `row` of this wave's rows.
  Value waveRow(Value row) { return waveM ? a.add(a.mul(waveM, a.idx(p.mPerWave)), row) : row; }

  /// This wave's index within its K-group (N-waves vary fastest).
  Value waveInGroup() { return waveM ? a.add(waveN, a.mul(waveM, a.idx(p.nWaves))) : waveN; }

  using RowInfo = GemmRowInfo;
  RowInfo rowInfo(Value rowInTile) {
    return emitGemmRowInfo(a, sortedIds, a.add(a.mul(bidM, a.idx(s.tileM)), rowInTile), tokens,
                           topk);
  }

  /// The weight row (in w's row order) of output column n of a stage-1 half
  /// (0 gate, 1 up) or of stage 2. `n` is the first column of an n-tile (a
  /// multiple of 16): the row is uniform across the wave.
  Value weightRow(Value n, int half) {
    if (!stage1)
      return n;
    if (spec.problem.gateUp == GateUpLayout::Separated)
      return half ? a.add(n, a.idx(I)) : n;
    // GUGU: 16 gate rows, then the same 16 columns' up rows.
    Value group = a.mul(a.divu(n, a.idx(16)), a.idx(32));
    return half ? a.add(group, a.idx(16)) : group;
  }

  /// This lane's row within an n-tile's rows: lane%M, where the second 16
  /// columns of a 32-wide tile are 32 rows further in the GUGU layout.
  int64_t laneRowStep() const {
    return stage1 && spec.problem.gateUp == GateUpLayout::Interleaved ? 32 : 16;
  }
  int64_t weightRows() const { return stage1 ? 2 * I : N; }

  // --- Operand loads ------------------------------------------------------

  /// Byte offset of the 16-byte chunk `chunk` (16 bytes = 32 fp4 / 16 fp8
  /// elements along K) of this lane's weight row in the n-tile starting at
  /// weight row `row0` (a multiple of 16).
  Value weightChunk(Value row0, Value chunk) {
    int64_t rowBytes = weightRowBytes();
    Value expertBase = a.mul(expert, a.idx(weightRows() * rowBytes));
    Value off = a.add(expertBase, a.mul(a.divu(row0, a.idx(16)), a.idx(16 * rowBytes)));
    off = a.add(off, a.mul(chunk, a.idx(256)));
    return a.add(off, laneWeightBytes);
  }

  /// B operand (MX) at K offset kk of the n-tile starting at weight row `row`.
  Value loadB(Value row, Value kk) {
    VectorType v16 = VectorType::get({16}, b.getI8Type());
    if (p.bFormat == DType::MXFP4) {
      Value chunk = a.add(a.divu(kk, a.idx(32)), laneGroup);
      Value bytes = vload(v16, wBuf, weightChunk(row, chunk));
      return vector::BitCastOp::create(b, VectorType::get({32}, b.getType<Float4E2M1FNType>()),
                                       bytes);
    }
    // fp8: the lane's second 16 bytes are mfma.k/2 elements further along K.
    Value chunk = a.add(a.divu(kk, a.idx(16)), laneGroup);
    Value lo = vload(v16, wBuf, weightChunk(row, chunk));
    Value hi = vload(v16, wBuf, weightChunk(row, a.add(chunk, a.idx(p.mfma.k / 32))));
    return fp8Operand(lo, hi);
  }

  /// An fp8 MFMA operand from its two 16-byte halves.
  Value fp8Operand(Value lo, Value hi) {
    SmallVector<int64_t> mask;
    for (int i = 0; i < 32; ++i)
      mask.push_back(i);
    Value both = vector::ShuffleOp::create(b, lo, hi, mask);
    return vector::BitCastOp::create(b, VectorType::get({32}, b.getType<Float8E4M3FNType>()), both);
  }

  /// B operand of the bf16 MFMA: 8 elements k = kk + 8*(lane/16) + e of
  /// column row0 + lane%16, bf16 weights as they are, fp4 ones dequantized exactly
  /// (fp4 times the e8m0 power of two) to bf16 by four
  /// v_cvt_scalef32_pk_bf16_fp4, which multiply by the scale's exponent field
  /// (0xFF: NaN). Split in two: loadBRaw appends the global loads (bf16: the
  /// operand; fp4: its 4 bytes and the scale byte), dequantB turns them into
  /// the operand where it is used, so a prefetched step holds packed bytes.
  void loadBRaw(Value row, Value kk, SmallVectorImpl<Value> &ops) {
    if (p.bFormat == DType::BF16) {
      // bf16 weights: the lane's 8 elements are one 16-byte chunk.
      Value chunk = a.add(a.divu(kk, a.idx(8)), laneGroup);
      Value bytes = vload(VectorType::get({16}, b.getI8Type()), wBuf, weightChunk(row, chunk));
      ops.push_back(vector::BitCastOp::create(b, VectorType::get({8}, b.getBF16Type()), bytes));
      return;
    }
    Value off = a.add(weightChunk(row, a.divu(kk, a.idx(32))), a.mul(laneGroup, a.idx(4)));
    ops.push_back(vload(VectorType::get({4}, b.getI8Type()), wBuf, off));
    Value scaleRow = a.add(a.mul(expert, a.idx(weightRows())), a.add(row, laneWeightRow));
    ops.push_back(load(wScale, scaleOffset(scaleRow, a.divu(kk, a.idx(32)), K / 32)));
  }

  /// The bf16 operand from what loadBRaw appended, advancing `op` past it.
  Value dequantB(const Value *&op) {
    if (p.bFormat == DType::BF16)
      return *op++;
    Value fp4 =
        vector::BitCastOp::create(b, VectorType::get({8}, b.getType<Float4E2M1FNType>()), *op++);
    Value sbyte = *op++;
    Value sb = arith::ExtUIOp::create(b, b.getI32Type(), sbyte);
    Value scale = arith::BitcastOp::create(b, f32(), a.shl(sb, a.i32(23)));
    VectorType pair = VectorType::get({2}, b.getBF16Type());
    Value lo01 = amdgpu::ScaledExtPackedOp::create(b, pair, fp4, scale, b.getI32IntegerAttr(0));
    Value lo23 = amdgpu::ScaledExtPackedOp::create(b, pair, fp4, scale, b.getI32IntegerAttr(1));
    Value hi45 = amdgpu::ScaledExtPackedOp::create(b, pair, fp4, scale, b.getI32IntegerAttr(2));
    Value hi67 = amdgpu::ScaledExtPackedOp::create(b, pair, fp4, scale, b.getI32IntegerAttr(3));
    Value lo = vector::ShuffleOp::create(b, lo01, lo23, ArrayRef<int64_t>{0, 1, 2, 3});
    Value hi = vector::ShuffleOp::create(b, hi45, hi67, ArrayRef<int64_t>{0, 1, 2, 3});
    return vector::ShuffleOp::create(b, lo, hi, ArrayRef<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
  }

  // --- Main loop ----------------------------------------------------------

  int accIndex(int64_t mt, int64_t nt, int half) const {
    return static_cast<int>((half * mTiles + mt) * nTiles + nt);
  }

  /// The K loop: returns the accumulators of this wave's K range.
  // --- A tiles through LDS ------------------------------------------------
  //
  // Each K-group's nWaves*mWaves*64 threads copy the group's A tile (tile_m gathered
  // rows x tile_k) in 16-byte chunks into LDS; every wave then reads its MFMA
  // operands from there. Two buffers: the next tile's global loads are issued
  // before the MFMAs of the current one and stored after them, one barrier
  // per iteration.

  int64_t weightRowBytes() const { return halfBytesPerElement(p.bFormat) * K / 2; }

  int64_t aRowBytes() const {
    return p.aFormat == DType::BF16 ? 2 * K : halfBytesPerElement(p.aFormat) * K / 2;
  }

  struct TileCopy {
    SmallVector<Value> globalBase; // byte offset of the chunk's row and column at k = 0
    SmallVector<Value> ldsOffset;  // byte offset within one tile buffer
    SmallVector<Value> inRange;    // null when every thread has every chunk
  };

  TileCopy planTileCopy() {
    TileCopy t;
    int64_t perRow = p.aTileRowBytes / 16, chunks = s.tileM * perRow;
    int64_t groupThreads = p.nWaves * p.mWaves * 64;
    int64_t perThread = (chunks + groupThreads - 1) / groupThreads;
    Value tid = a.add(a.mul(waveInGroup(), a.idx(64)), lane);
    for (int64_t j = 0; j < perThread; ++j) {
      Value c = a.add(tid, a.idx(j * groupThreads));
      Value in;
      if (chunks % groupThreads != 0 && (j + 1) * groupThreads > chunks) {
        in = a.cmp(CmpIPredicate::ult, c, a.idx(chunks));
        c = a.select(in, c, a.idx(0));
      }
      Value r = a.divu(c, a.idx(perRow)), col = a.remu(c, a.idx(perRow));
      RowInfo ri = rowInfo(r);
      Value row = stage1 ? ri.token : a.add(a.mul(ri.token, a.idx(topk)), ri.slot);
      row = a.select(ri.valid, row, a.idx(0)); // padding rows copy row 0, never stored
      t.globalBase.push_back(a.add(a.mul(row, a.idx(aRowBytes())), a.mul(col, a.idx(16))));
      t.ldsOffset.push_back(a.add(a.mul(r, a.idx(p.ldsRowStride)), a.mul(col, a.idx(16))));
      t.inRange.push_back(in);
    }
    return t;
  }

  SmallVector<Value> loadTile(const TileCopy &t, Value k0) {
    VectorType v16 = VectorType::get({16}, b.getI8Type());
    Value kBytes = p.aFormat == DType::BF16
                       ? a.mul(k0, a.idx(2))
                       : a.divu(a.mul(k0, a.idx(halfBytesPerElement(p.aFormat))), a.idx(2));
    SmallVector<Value> chunks;
    for (Value base : t.globalBase) {
      Value off = a.add(base, kBytes);
      if (p.aFormat == DType::BF16) {
        Value v = vload(VectorType::get({8}, b.getBF16Type()), aBuf, a.divu(off, a.idx(2)));
        chunks.push_back(vector::BitCastOp::create(b, v16, v));
      } else {
        chunks.push_back(vload(v16, aBuf, off));
      }
    }
    return chunks;
  }

  Value tileBase(Value buffer) {
    return a.mul(a.add(a.mul(buffer, a.idx(s.kWave)), waveK), a.idx(s.tileM * p.ldsRowStride));
  }

  void storeTile(const TileCopy &t, ArrayRef<Value> chunks, Value buffer) {
    Value base = tileBase(buffer);
    for (size_t j = 0; j < chunks.size(); ++j) {
      auto store16 = [&] {
        vector::StoreOp::create(b, chunks[j], ldsA, ValueRange{a.add(base, t.ldsOffset[j])});
      };
      if (t.inRange[j])
        ifThen(t.inRange[j], store16);
      else
        store16();
    }
  }

  /// The A operand of m-tile mt, MFMA step ks, from the tile in `buffer`.
  Value readA(Value buffer, int64_t mt, int64_t ks) {
    VectorType v16 = VectorType::get({16}, b.getI8Type());
    Value row = a.add(tileBase(buffer),
                      a.mul(waveRow(a.add(a.idx(mt * M), laneRow)), a.idx(p.ldsRowStride)));
    Value group16 = a.mul(laneGroup, a.idx(16));
    switch (p.aFormat) {
    case DType::MXFP4: {
      Value bytes = vload(v16, ldsA, a.add(row, a.add(a.idx(ks * p.mfma.k / 2), group16)));
      return vector::BitCastOp::create(b, VectorType::get({32}, b.getType<Float4E2M1FNType>()),
                                       bytes);
    }
    case DType::MXFP8: {
      Value lo = vload(v16, ldsA, a.add(row, a.add(a.idx(ks * p.mfma.k), group16)));
      Value hi = vload(v16, ldsA, a.add(row, a.add(a.idx(ks * p.mfma.k + p.mfma.k / 2), group16)));
      return fp8Operand(lo, hi);
    }
    default: {
      Value bytes = vload(v16, ldsA, a.add(row, a.add(a.idx(ks * 64), group16)));
      return vector::BitCastOp::create(b, VectorType::get({8}, b.getBF16Type()), bytes);
    }
    }
  }

  /// What one K step reads straight from global memory, in the order the
  /// MFMAs consume it: per k-slice, the A scales (MX) of each m-tile, then per
  /// (half, n-tile) the B operand and (MX) its scale. The main loop issues
  /// these loads a step ahead (software pipelining), so their latency hides
  /// behind the current step's MFMAs instead of stalling each of them.
  SmallVector<Value> loadStepOperands(Value k0, ArrayRef<Value> aScaleRows, Value colBase) {
    bool mx = p.mfma.kind != MfmaKind::BF16_16x16x32;
    SmallVector<Value> ops;
    for (int64_t ks = 0; ks < s.tileK / p.mfma.k; ++ks) {
      Value kk = a.add(k0, a.idx(ks * p.mfma.k));
      Value block = a.add(a.divu(kk, a.idx(32)), laneGroup); // this lane's scale block
      if (mx)
        for (int64_t mt = 0; mt < mTiles; ++mt)
          ops.push_back(loadScale(aScale, aScaleRows[mt], block, K / 32));
      for (int half = 0; half < halves; ++half)
        for (int64_t nt = 0; nt < nTiles; ++nt) {
          Value row = weightRow(a.add(colBase, a.idx(nt * M)), half);
          if (!mx) {
            loadBRaw(row, kk, ops);
            continue;
          }
          ops.push_back(loadB(row, kk));
          Value scaleRow = a.add(a.mul(expert, a.idx(weightRows())), a.add(row, laneWeightRow));
          ops.push_back(loadScale(wScale, scaleRow, block, K / 32));
        }
    }
    return ops;
  }

  /// The K loop: returns the accumulators of this wave's K range.
  SmallVector<Value> mainLoop() {
    // Rows whose A scales this lane reads, per m-tile (lane%16 of each).
    SmallVector<Value> aScaleRows;
    for (int64_t mt = 0; mt < mTiles; ++mt) {
      RowInfo r = rowInfo(waveRow(a.add(a.idx(mt * M), laneRow)));
      Value row = stage1 ? r.token : r.sortedPos;
      aScaleRows.push_back(a.select(r.valid, row, stage1 ? a.idx(0) : r.sortedPos));
    }
    Value colBase = a.add(a.mul(bidN, a.idx(s.tileN)), a.mul(waveN, a.idx(nPerWave)));
    Value kBase = a.add(a.mul(bidK, a.idx(p.kSlice)), a.mul(waveK, a.idx(p.kPerWave)));

    TileCopy copy = planTileCopy();
    storeTile(copy, loadTile(copy, kBase), a.idx(0));
    gpu::BarrierOp::create(b);

    Value zero = arith::ConstantOp::create(b, DenseElementsAttr::get(accType(), 0.0f));
    SmallVector<Value> init(numAcc, zero);
    // Global operands go a step ahead, except in split tiles (mWaves > 1):
    // their accumulators fill half of what a lane may hold (the 128x256
    // stage 1: 8 waves, two per SIMD, 256 registers each), and two steps'
    // operands do not fit beside them. They load a step's at the step.
    bool prefetch = p.mWaves == 1;
    if (prefetch) {
      SmallVector<Value> firstOps = loadStepOperands(kBase, aScaleRows, colBase);
      init.append(firstOps.begin(), firstOps.end());
    }
    auto loop = scf::ForOp::create(b, a.idx(0), a.idx(p.kIterations), a.idx(1), init);
    // The loop is software-pipelined by hand: LLVM's full unrolling of a
    // short loop (K = 2048 at tile_k 256 is 8 trips) would hoist every
    // step's loads and spill; scf-to-cf carries this to the latch branch.
    disableUnroll(loop);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    auto iterArgs = loop.getRegionIterArgs();
    SmallVector<Value> acc(iterArgs.begin(), iterArgs.begin() + numAcc);
    SmallVector<Value> stepOps(iterArgs.begin() + numAcc, iterArgs.end());
    Value kt = loop.getInductionVar();
    Value cur = a.remu(kt, a.idx(2));
    // The next step (the last one again on the last trip, never used): its
    // A tile for LDS and its global operands, in flight during this step.
    Value nextKt = arith::MinUIOp::create(b, a.add(kt, a.idx(1)), a.idx(p.kIterations - 1));
    Value nextK0 = a.add(kBase, a.mul(nextKt, a.idx(s.tileK)));
    SmallVector<Value> next = loadTile(copy, nextK0);
    SmallVector<Value> nextOps;
    if (prefetch)
      nextOps = loadStepOperands(nextK0, aScaleRows, colBase);
    else
      stepOps = loadStepOperands(a.add(kBase, a.mul(kt, a.idx(s.tileK))), aScaleRows, colBase);
    bool mx = p.mfma.kind != MfmaKind::BF16_16x16x32;
    const Value *op = stepOps.begin(); // consumed in loadStepOperands' order
    for (int64_t ks = 0; ks < s.tileK / p.mfma.k; ++ks) {
      SmallVector<Value> aOps, aScales;
      for (int64_t mt = 0; mt < mTiles; ++mt) {
        aOps.push_back(readA(cur, mt, ks));
        if (mx)
          aScales.push_back(*op++);
      }
      for (int half = 0; half < halves; ++half) {
        for (int64_t nt = 0; nt < nTiles; ++nt) {
          Value bOp = mx ? *op++ : dequantB(op);
          Value bScale = mx ? *op++ : Value();
          for (int64_t mt = 0; mt < mTiles; ++mt) {
            int i = accIndex(mt, nt, half);
            if (mx)
              acc[i] = amdgpu::ScaledMFMAOp::create(
                  b, accType(), b.getI32IntegerAttr(M), b.getI32IntegerAttr(M),
                  b.getI32IntegerAttr(p.mfma.k), aOps[mt], bOp, acc[i], aScales[mt], bScale,
                  b.getI32IntegerAttr(0), b.getI32IntegerAttr(0));
            else
              acc[i] = amdgpu::MFMAOp::create(b, accType(), b.getI32IntegerAttr(16),
                                              b.getI32IntegerAttr(16), b.getI32IntegerAttr(32),
                                              b.getI32IntegerAttr(1), aOps[mt], bOp, acc[i]);
          }
        }
      }
    }
    storeTile(copy, next, a.sub(a.idx(1), cur));
    gpu::BarrierOp::create(b);
    acc.append(nextOps.begin(), nextOps.end());
    scf::YieldOp::create(b, acc);
    return SmallVector<Value>(loop.getResults().begin(), loop.getResults().begin() + numAcc);
  }

  /// Sums the K-groups' accumulators through LDS, in K-group order. The
  /// scratch reuses the A tiles' LDS: the main loop ends with a barrier after
  /// its last reads.
  SmallVector<Value> reduceKWaves(SmallVector<Value> acc) {
    if (s.kWave == 1)
      return acc;
    int64_t groupWaves = p.nWaves * p.mWaves;
    Value inGroup = waveInGroup();
    Value wave = a.add(inGroup, a.mul(waveK, a.idx(groupWaves)));
    auto slot = [&](Value w, int i) {
      return a.mul(a.add(a.mul(a.add(a.mul(w, a.idx(numAcc)), a.idx(i)), a.idx(64)), lane),
                   a.idx(4 * regs));
    };
    VectorType bytes = VectorType::get({4 * regs}, b.getI8Type());
    for (int i = 0; i < numAcc; ++i)
      vector::StoreOp::create(b, vector::BitCastOp::create(b, bytes, acc[i]), ldsA,
                              ValueRange{slot(wave, i)});
    gpu::BarrierOp::create(b);
    auto read = [&](Value w, int i) {
      return vector::BitCastOp::create(b, accType(), vload(bytes, ldsA, slot(w, i)));
    };
    SmallVector<Value> sum;
    for (int i = 0; i < numAcc; ++i) {
      Value total = read(inGroup, i);
      for (int64_t g = 1; g < s.kWave; ++g)
        total = arith::AddFOp::create(b, total, read(a.add(inGroup, a.idx(g * groupWaves)), i));
      sum.push_back(total);
    }
    return sum;
  }

  // --- Epilogues ----------------------------------------------------------

  /// The tile row lane l's accumulator register r of m-tile mt holds (C/D
  /// layout, within the wave's rows): 16x16: 4*(l/16) + r; 32x32:
  /// 8*(r/4) + 4*(l/32) + r%4. Column: l % M.
  Value regRow(int64_t mt, int64_t r) {
    int64_t fixed = M == 16 ? r : 8 * (r / 4) + r % 4;
    return waveRow(a.add(a.idx(mt * M + fixed), a.mul(laneGroup, a.idx(4))));
  }

  Value element(Value acc, int64_t r) {
    return vector::ExtractOp::create(b, acc, ArrayRef<int64_t>{r});
  }

  /// A global pointer to element `index` of a memref (for LLVM atomics).
  Value elementPtr(Value mem, Type elemType, Value index) {
    return elementPointer(b, mem, elemType, index);
  }

  Value shuffleXor(Value v, int32_t offset) {
    return gpu::ShuffleOp::create(b, v, offset, 64, gpu::ShuffleMode::XOR).getShuffleResult();
  }

  Value fatBuffer(Value mem, Value bytes) {
    Value valid = arith::IndexCastOp::create(b, b.getI64Type(), bytes);
    return amdgpu::FatRawBufferCastOp::create(b, mem, valid, Value(), b.getBoolAttr(true));
  }

  void ifThen(Value cond, llvm::function_ref<void()> body) { moegen::ifThen(b, cond, body); }

  /// Stage 1 with k_batch > 1: the pre-activation gate/up partial sums of
  /// this split, f32 [T*topk, 2I] (see FinishKernel.h).
  void storePartials(ArrayRef<Value> acc) {
    Value colBase = a.add(a.mul(bidN, a.idx(s.tileN)), a.mul(waveN, a.idx(nPerWave)));
    bool atomic = s.kBatchMode == KBatchMode::Atomic;
    // Deterministic mode: split bid.z owns buffer bid.z.
    Value splitBase =
        atomic ? a.idx(0) : a.mul(bidK, a.mul(a.mul(tokens, a.idx(topk)), a.idx(2 * I)));
    for (int64_t mt = 0; mt < mTiles; ++mt)
      for (int64_t r = 0; r < regs; ++r) {
        RowInfo row = rowInfo(regRow(mt, r));
        Value rowBase =
            a.add(splitBase, a.mul(a.add(a.mul(row.token, a.idx(topk)), row.slot), a.idx(2 * I)));
        ifThen(row.valid, [&] {
          for (int64_t nt = 0; nt < nTiles; ++nt)
            for (int half = 0; half < 2; ++half) {
              Value col = a.add(a.add(colBase, a.idx(nt * M + half * I)), laneRow);
              Value v = element(acc[accIndex(mt, nt, half)], r);
              Value index = a.add(rowBase, col);
              if (atomic)
                LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::fadd, elementPtr(out, f32(), index),
                                          v, LLVM::AtomicOrdering::monotonic, "agent", 4);
              else
                store(v, out, index);
            }
        });
      }
  }

  void epilogue(ArrayRef<Value> acc) {
    if (stage1 && s.kBatch > 1)
      return storePartials(acc);
    Value colBase = a.add(a.mul(bidN, a.idx(s.tileN)), a.mul(waveN, a.idx(nPerWave)));
    Value isEven = a.cmp(CmpIPredicate::eq, andI(lane, 1), a.idx(0));
    for (int64_t mt = 0; mt < mTiles; ++mt) {
      // Split tiles: the m-tile's fused-quantization scales, per register and
      // 32-column block, stored together after its rows.
      SmallVector<SmallVector<Value>> rowScales;
      for (int64_t r = 0; r < regs; ++r) {
        RowInfo row = rowInfo(regRow(mt, r));
        Value pair = a.add(a.mul(row.token, a.idx(topk)), row.slot);
        Value weight;
        bool applyWeight = stage1 == spec.problem.doweightStage1;
        if (applyWeight)
          weight = load(sortedWeights, row.sortedPos);
        SmallVector<Value> vals;
        for (int64_t nt = 0; nt < nTiles; ++nt) {
          Value v;
          if (stage1)
            v = emitActivation(b, spec.activation, target, element(acc[accIndex(mt, nt, 0)], r),
                               element(acc[accIndex(mt, nt, 1)], r));
          else
            v = element(acc[accIndex(mt, nt, 0)], r);
          if (applyWeight)
            v = arith::MulFOp::create(b, v, weight);
          vals.push_back(v);
        }
        if (stage1 && s.fusedQuant != FusedQuant::None) {
          storeQuantized(vals, row, pair, colBase, isEven, rowScales);
          continue;
        }
        for (int64_t nt = 0; nt < nTiles; ++nt) {
          Value col = a.add(a.add(colBase, a.idx(nt * M)), laneRow);
          Value bf = arith::TruncFOp::create(b, b.getBF16Type(), vals[nt]);
          if (stage1 || s.reduce == ReduceMode::Reduce) {
            int64_t width = stage1 ? I : N;
            ifThen(row.valid, [&] { store(bf, out, a.add(a.mul(pair, a.idx(width)), col)); });
            continue;
          }
          // Atomic top-k sum: adjacent columns live in adjacent lanes; the
          // even lane adds both with one packed bf16 atomic.
          Value other = arith::TruncFOp::create(b, b.getBF16Type(), shuffleXor(vals[nt], 1));
          Value packed = vector::FromElementsOp::create(b, VectorType::get({2}, b.getBF16Type()),
                                                        ValueRange{bf, other});
          Value cond = arith::AndIOp::create(b, row.valid, isEven);
          ifThen(cond, [&] {
            Value ptr = elementPtr(out, b.getBF16Type(), a.add(a.mul(row.token, a.idx(N)), col));
            LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::fadd, ptr, packed,
                                      LLVM::AtomicOrdering::monotonic, "agent", 4);
          });
        }
      }
      if (!rowScales.empty())
        storeTileScales(mt, rowScales, colBase);
    }
  }

  /// Fused MX quantization of one output row's values (one per n-tile): per
  /// 32-column block (two 16-wide n-tiles of 16 lanes, or one 32-wide n-tile
  /// of 32 lanes), the e8m0 exponent of the block's amax with the
  /// in-epilogue rule, then fp4/fp8 conversion.
  void storeQuantized(ArrayRef<Value> vals, RowInfo &row, Value pair, Value colBase, Value isEven,
                      SmallVectorImpl<SmallVector<Value>> &rowScales) {
    bool fp4 = s.fusedQuant == FusedQuant::FP4;
    // Split tiles store the scales per m-tile (storeTileScales): an address
    // per row and block, hoisted out of the M-tile loop, would spill.
    bool deferScales = p.mWaves > 1;
    if (deferScales)
      rowScales.emplace_back();
    Type i32 = b.getI32Type();
    int64_t tilesPerBlock = 32 / M;
    for (int64_t cb = 0; cb < nTiles / tilesPerBlock; ++cb) {
      Value amax;
      for (int64_t h = 0; h < tilesPerBlock; ++h) {
        Value v = emitFAbs(b, target, vals[tilesPerBlock * cb + h]);
        amax = amax ? arith::MaximumFOp::create(b, amax, v) : v;
      }
      for (int32_t off = M / 2; off >= 1; off /= 2) // across the M lanes of the row
        amax = arith::MaximumFOp::create(b, amax, shuffleXor(amax, off));
      Value e = emitEpilogueScale(b, arith::BitcastOp::create(b, i32, amax), fp4);
      Value firstCol = a.add(colBase, a.idx(cb * 32));
      for (int64_t h = 0; h < tilesPerBlock; ++h) {
        Value v = vals[tilesPerBlock * cb + h];
        Value col = a.add(a.add(firstCol, a.idx(h * M)), laneRow);
        if (fp4) {
          // Columns 2j and 2j+1 sit in adjacent lanes; the even one stores.
          Value byte = emitFp4Byte(b, target, v, shuffleXor(v, 1), e);
          Value cond = arith::AndIOp::create(b, row.valid, isEven);
          ifThen(cond, [&] {
            store(byte, out, a.add(a.mul(pair, a.idx(I / 2)), a.divu(col, a.idx(2))));
          });
        } else {
          Value byte = emitFp8Byte(b, target, v, e);
          ifThen(row.valid, [&] { store(byte, out, a.add(a.mul(pair, a.idx(I)), col)); });
        }
      }
      if (deferScales) {
        rowScales.back().push_back(e);
        continue;
      }
      // The lane of the block's first column writes the scale at the row's
      // sorted position.
      Value isFirst = a.cmp(CmpIPredicate::eq, laneRow, a.idx(0));
      ifThen(isFirst, [&] {
        Value byte = arith::TruncIOp::create(b, b.getI8Type(), e);
        store(byte, outScale, scaleOffset(row.sortedPos, a.divu(firstCol, a.idx(32)), I / 32));
      });
    }
  }

  /// The scales `rowScales[r][cb]` of m-tile mt's rows (every lane of a row
  /// holds them): lane l % M = r < regs writes register r's, at the row
  /// regRow(mt, r) of its lane group, one store per 32-column block.
  void storeTileScales(int64_t mt, ArrayRef<SmallVector<Value>> rowScales, Value colBase) {
    Value r = laneRow;
    Value fixed = M == 16 ? r : a.add(a.mul(shr(r, 2), a.idx(8)), andI(r, 3));
    Value rowInTile = waveRow(a.add(a.add(a.idx(mt * M), fixed), a.mul(laneGroup, a.idx(4))));
    Value sortedPos = a.add(a.mul(bidM, a.idx(s.tileM)), rowInTile);
    Value writes = a.cmp(CmpIPredicate::ult, laneRow, a.idx(regs));
    for (size_t cb = 0; cb < rowScales.front().size(); ++cb) {
      Value e = rowScales[0][cb];
      for (int64_t i = 1; i < regs; ++i)
        e = a.select(a.cmp(CmpIPredicate::eq, laneRow, a.idx(i)), rowScales[i][cb], e);
      Value col = a.add(colBase, a.idx(static_cast<int64_t>(cb) * 32));
      ifThen(writes, [&] {
        Value byte = arith::TruncIOp::create(b, b.getI8Type(), e);
        store(byte, outScale, scaleOffset(sortedPos, a.divu(col, a.idx(32)), I / 32));
      });
    }
  }

  void build(gpu::GPUFuncOp func) {
    bindArgs(func, stage1, /*clears=*/false); // gfx950 keeps the memset (GemmPlan.h)
    ldsA = func.getWorkgroupAttributions()[0];

    tokens = a.toIndex(tokensI32);
    // Operands go through buffer resources sized to the real tensors: 16-byte
    // buffer loads, and a read past the end returns 0 instead of faulting.
    Value aRows = stage1 ? tokens : a.mul(tokens, a.idx(topk));
    aBuf = fatBuffer(aBuf, a.mul(aRows, a.idx(aRowBytes())));
    wBuf = fatBuffer(wBuf, a.idx(spec.problem.experts * weightRows() * weightRowBytes()));
    if (p.mWaves > 1) {
      // Split tiles (few registers beside the accumulators) read the scales
      // through buffer resources too: 32-bit offsets instead of 64-bit
      // addresses, unbounded like the global loads of the other tiles.
      aScale = fatBuffer(aScale, a.idx(UINT32_MAX));
      wScale = fatBuffer(wScale, a.idx(UINT32_MAX));
    }
    Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
    lane = andI(tid, 63);
    laneRow = andI(lane, M - 1);
    laneGroup = a.divu(lane, a.idx(M));
    laneWeightRow = a.add(a.mul(shr(laneRow, 4), a.idx(laneRowStep())), andI(laneRow, 15));
    laneWeightBytes = a.add(a.mul(shr(laneWeightRow, 4), a.idx(16 * weightRowBytes())),
                            a.mul(andI(laneWeightRow, 15), a.idx(16)));
    Value wave = shr(tid, 6);
    waveN = a.remu(wave, a.idx(p.nWaves));
    if (p.mWaves > 1) {
      waveM = a.remu(a.divu(wave, a.idx(p.nWaves)), a.idx(p.mWaves));
      waveK = a.divu(wave, a.idx(p.nWaves * p.mWaves));
    } else {
      waveK = a.divu(wave, a.idx(p.nWaves));
    }
    std::array<Value, 3> grid = {workgroupCount(b, gpu::Dimension::x),
                                 workgroupCount(b, gpu::Dimension::y),
                                 workgroupCount(b, gpu::Dimension::z)};
    auto [n, firstRow, k] = emitWorkgroupTile(a, s.xcdSwizzle, grid);
    bidN = n;
    bidK = k;

    emitPersistentMTiles(
        a, p, spec.problem.experts, numValid, sortedExperts, firstRow, grid[1], waveK,
        [&](Value m, Value e) {
          bidM = m;
          expert = e;
          return reduceKWaves(mainLoop());
        },
        [&](ArrayRef<Value> acc) { epilogue(acc); });
    gpu::ReturnOp::create(b);
  }
};

} // namespace

gpu::GPUFuncOp buildGemmKernel(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module, StringRef symbol,
                               const MoeSpec &spec, const GemmPlan &plan,
                               const TargetInfo &target) {
  SmallVector<MemRefType> lds = {ldsBufferType(b.getContext(), b.getI8Type(), plan.ldsAllocBytes)};
  KernelSignature sig = gemmKernelSignature(symbol, spec, plan);
  gpu::GPUFuncOp func = createKernel(b, module, sig, gemmArgElementTypes(b, plan), lds);
  GemmBuilder(b, spec, plan, target).build(func);
  return func;
}

} // namespace moegen
