//===- QuantKernel.cpp - The activation quantization kernel ---------------===//

#include "templates/quant/QuantKernel.h"

#include "templates/epilogue/MxQuantize.h"
#include "templates/gemm/StageReady.h"
#include "templates/sm90/MxSoftwareConvert.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using arith::CmpIPredicate;

namespace moegen {

namespace {

/// sm_90a: the input quantization's grids of at most this many workgroups
/// let their dependents launch at once.
constexpr int64_t kEarlyTriggerWorkgroups = 16;

/// Emits the quantization of one 32-column block.
struct BlockQuantizer {
  ImplicitLocOpBuilder &b;
  Arith a;
  const QuantPlan &plan;
  const TargetInfo &target;
  Value x, q, scales;

  Value shrui(Value v, int64_t s) { return arith::ShRUIOp::create(b, v, a.i32(s)); }
  Value andi(Value v, int64_t m) { return arith::AndIOp::create(b, v, a.i32(m)); }

  /// Byte offset of scale (row, block) in the e8m0_shuffle layout:
  /// r = 32*r0 + 16*r1 + r2, c = 8*c0 + 4*c1 + c2 ->
  /// r0*(32*C') + c0*256 + c2*64 + r2*4 + c1*2 + r1.
  Value scaleOffset(Value row, Value blk) {
    Value r0 = a.divu(row, a.idx(32)), r1 = a.remu(a.divu(row, a.idx(16)), a.idx(2));
    Value r2 = a.remu(row, a.idx(16));
    Value c0 = a.divu(blk, a.idx(8)), c1 = a.remu(a.divu(blk, a.idx(4)), a.idx(2));
    Value c2 = a.remu(blk, a.idx(4));
    Value off = a.mul(r0, a.idx(32 * plan.scaleCols()));
    off = a.add(off, a.mul(c0, a.idx(256)));
    off = a.add(off, a.mul(c2, a.idx(64)));
    off = a.add(off, a.mul(r2, a.idx(4)));
    off = a.add(off, a.mul(c1, a.idx(2)));
    return a.add(off, r1);
  }

  void storeScale(Value byteI32, Value scaleRow, Value blk) {
    Value byte = arith::TruncIOp::create(b, b.getI8Type(), byteI32);
    memref::StoreOp::create(b, byte, scales, scaleOffset(scaleRow, blk));
  }

  /// RoundUp from the bits of amax (sign clear): amax = m * 2^E with
  /// m in [1, 2); max_elem = 1.5 * 2^2 (fp4) or 1.75 * 2^8 (fp8). The
  /// smallest s with max_elem * 2^s >= amax is E - emax, or one more when
  /// m exceeds 1.5 / 1.75. Below 2^-127 clamps to byte 0; inf/NaN give 0xFF.
  Value roundUpScale(Value amaxBits) {
    bool fp4 = plan.format == DType::MXFP4;
    Value exp = shrui(amaxBits, 23);
    Value mant = andi(amaxBits, 0x7FFFFF);
    Value over = a.cmp(CmpIPredicate::ugt, mant, a.i32(fp4 ? 0x400000 : 0x600000));
    Value byte = a.sub(exp, a.i32(fp4 ? 2 : 8));
    byte = a.add(byte, a.select(over, a.i32(1), a.i32(0)));
    byte = arith::MaxSIOp::create(b, byte, a.i32(0));
    return a.select(a.cmp(CmpIPredicate::eq, exp, a.i32(255)), a.i32(255), byte);
  }

  /// Clamps x to +-448 * 2^(byte-127) so the non-saturating fp8 conversion
  /// cannot produce NaN. RoundUp never exceeds it; the clamp keeps that a
  /// property of this code rather than of the rule.
  Value clampFp8(Value xf, Value byte) {
    auto vt = cast<VectorType>(xf.getType());
    Value biased = a.add(byte, a.i32(8));
    Value bits = a.bitOr(a.shl(biased, a.i32(23)), a.i32(0x600000));
    bits = a.select(a.cmp(CmpIPredicate::sge, biased, a.i32(255)), a.i32(0x7F800000), bits);
    Value lim = arith::BitcastOp::create(b, b.getF32Type(), bits);
    Value hi = vector::BroadcastOp::create(b, vt, lim);
    Value lo = vector::BroadcastOp::create(b, vt, arith::NegFOp::create(b, lim));
    return arith::MinimumFOp::create(b, arith::MaximumFOp::create(b, xf, lo), hi);
  }

  /// Quantizes block `blk` of source row `srcRow`; the scale goes to scale
  /// row `scaleRow`.
  void emit(Value srcRow, Value scaleRow, Value blk) {
    const int64_t n = QuantPlan::kBlock;
    const bool fp4 = plan.format == DType::MXFP4;
    Type bf16 = b.getBF16Type(), f32 = b.getF32Type(), i16 = b.getI16Type();
    Value xOff = a.add(a.mul(srcRow, a.idx(plan.cols)), a.mul(blk, a.idx(n)));
    Value v = vector::LoadOp::create(b, VectorType::get({n}, bf16), x, ValueRange{xOff},
                                     /*nontemporal=*/false, llvm::MaybeAlign(16));

    // amax on the integer bits: |x| orders like its bits, and NaN > inf >
    // finite, so a NaN or inf in the block yields exponent 255. Shifting the
    // sign out (rather than masking it) keeps the 16-bit lanes packed.
    Value bits = vector::BitCastOp::create(b, VectorType::get({n}, i16), v);
    Value one = vector::BroadcastOp::create(b, VectorType::get({n}, i16),
                                            arith::ConstantIntOp::create(b, 1, 16));
    Value mag2 = arith::ShLIOp::create(b, bits, one); // 2|x|, sign dropped
    Value amax2 = vector::ReductionOp::create(b, vector::CombiningKind::MAXUI, mag2);
    Value amaxBits = a.shl(arith::ExtUIOp::create(b, b.getI32Type(), amax2), a.i32(15));
    Value byte = roundUpScale(amaxBits);
    // The conversions read only the exponent field of the scale operand.
    Value scale = arith::BitcastOp::create(b, f32, a.shl(byte, a.i32(23)));

    Value xf = arith::ExtFOp::create(b, VectorType::get({n}, f32), v);
    if (plan.decoded)
      return storeDecoded(xf, byte, srcRow, blk);
    if (!fp4)
      xf = clampFp8(xf, byte);

    // fp4: 4 pairs per 32-bit word (byte i of the word = pair i, element 2i
    // in the low nibble); fp8: 2 pairs per word.
    const int64_t pairsPerWord = fp4 ? 4 : 2;
    const int64_t words = n / 2 / pairsPerWord;
    // sm_90a has no scaled conversion: encode in software, same bytes.
    SmallVector<Value> packed =
        target.isNvptx() ? sm90::emitMxBlockWords(b, xf, byte, fp4) : packGfx950(xf, scale, fp4);
    Value data =
        vector::FromElementsOp::create(b, VectorType::get({words}, b.getI32Type()), packed);
    // q is addressed in 32-bit words: a block is 4 (fp4) or 8 (fp8) of them.
    Value qOff = a.add(a.mul(srcRow, a.idx(plan.rowBytes() / 4)), a.mul(blk, a.idx(words)));
    vector::StoreOp::create(b, data, q, ValueRange{qOff}, /*nontemporal=*/false,
                            llvm::MaybeAlign(16));
    storeScale(byte, scaleRow, blk);
  }

  /// Decoded: the block's values rounded to the format, as bf16 (exact: the
  /// decoded values have at most 4 significant bits) at element (srcRow, 32
  /// blk) of a [rows, C] bf16 matrix.
  void storeDecoded(Value xf, Value byte, Value srcRow, Value blk) {
    const int64_t n = QuantPlan::kBlock;
    SmallVector<Value> vals;
    for (int64_t i = 0; i < n; ++i) {
      Value x = vector::ExtractOp::create(b, xf, ArrayRef<int64_t>{i});
      Value d = emitMxDecodedValue(b, x, byte, plan.format == DType::MXFP4);
      vals.push_back(arith::TruncFOp::create(b, b.getBF16Type(), d));
    }
    Value data = vector::FromElementsOp::create(b, VectorType::get({n}, b.getBF16Type()), vals);
    Value off = a.add(a.mul(srcRow, a.idx(plan.cols)), a.mul(blk, a.idx(n)));
    vector::StoreOp::create(b, data, q, ValueRange{off}, /*nontemporal=*/false,
                            llvm::MaybeAlign(16));
  }

  /// The block's words through v_cvt_scalef32_pk_{fp4,fp8}_f32.
  SmallVector<Value> packGfx950(Value xf, Value scale, bool fp4) {
    const int64_t n = QuantPlan::kBlock;
    const int64_t pairsPerWord = fp4 ? 4 : 2;
    const int64_t words = n / 2 / pairsPerWord;
    Type packedType = fp4 ? VectorType::get({8}, b.getType<Float4E2M1FNType>())
                          : VectorType::get({4}, b.getType<Float8E4M3FNType>());
    SmallVector<Value> packed;
    for (int64_t w = 0; w < words; ++w) {
      Value word;
      for (int64_t p = 0; p < pairsPerWord; ++p) {
        int64_t e = 2 * (w * pairsPerWord + p);
        Value pair = vector::ShuffleOp::create(b, xf, xf, ArrayRef<int64_t>{e, e + 1});
        word = amdgpu::PackedScaledTruncOp::create(b, packedType, pair, scale, uint32_t(p), word);
      }
      Value asI32 = vector::BitCastOp::create(b, VectorType::get({1}, b.getI32Type()), word);
      packed.push_back(vector::ExtractOp::create(b, asI32, int64_t(0)));
    }
    return packed;
  }
};

} // namespace

gpu::GPUFuncOp buildQuantKernel(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module, StringRef symbol,
                                const QuantPlan &plan, const TargetInfo &target) {
  Type bf16 = b.getBF16Type(), i32 = b.getI32Type(), i8 = b.getI8Type();
  KernelSignature sig = quantKernelSignature(symbol, plan);
  const bool sorted = plan.order == QuantScaleOrder::Sorted;
  // x, q (i32 words, or bf16 decoded), scales (not decoded), then rows or
  // sorted_ids, num_valid_ids, tokens.
  SmallVector<Type> elems{bf16, plan.decoded ? bf16 : i32};
  if (!plan.decoded)
    elems.push_back(i8);
  elems.push_back(i32);
  if (sorted)
    elems.append({i32, i32});
  if (plan.stageReady)
    elems.push_back(i32);
  gpu::GPUFuncOp func = createKernel(b, module, sig, elems, {});
  // The layer's input is final before the sort that precedes this kernel
  // starts its work, and rows in token order need nothing of the sort's: on
  // sm_90a it quantizes while a sort sorting alone still runs, and waits for
  // it before it exits (stage 1, launched after it, reads both).
  const bool besideSort = !sorted && target.isNvptx();
  // Between the stages, it waits for stage 1's rows a block at a time
  // instead (QuantPlan::stageReady).
  if (besideSort || plan.stageReady)
    func->setAttr(kGridWaitAtExitAttrName, b.getUnitAttr());
  Block &entry = func.getBody().front();
  const unsigned rest = plan.decoded ? 2 : 3; // the first argument after the buffers
  Value x = entry.getArgument(0), q = entry.getArgument(1);
  Value scales = plan.decoded ? Value() : entry.getArgument(2);

  Arith a{b};
  BlockQuantizer quant{b, a, plan, target, x, q, scales};
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value bid = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  // A few workgroups (decode sizes) also let stage 1 launch now: its
  // workgroups wait at their entry for this grid on the SMs it leaves idle.
  if (besideSort)
    ifThen(b,
           a.cmp(CmpIPredicate::ule, gpu::GridDimOp::create(b, gpu::Dimension::x),
                 a.idx(kEarlyTriggerWorkgroups)),
           [&] { NVVM::GriddepcontrolOp::create(b, NVVM::GridDepActionKind::launch_dependents); });
  Value nb = a.idx(plan.blocksPerRow());

  if (!sorted) {
    Value item = a.add(a.mul(bid, a.idx(plan.threads)), tid);
    Value row = a.divu(item, nb), blk = a.remu(item, nb);
    Value rows = a.toIndex(entry.getArgument(rest));
    ifThen(b, a.cmp(CmpIPredicate::ult, row, rows), [&] { quant.emit(row, row, blk); });
    gpu::ReturnOp::create(b);
    return func;
  }

  Value sortedIds = entry.getArgument(rest), numValid = entry.getArgument(rest + 1);
  Value stageReady = plan.stageReady ? entry.getArgument(rest + 2) : Value();
  Value tokens = entry.getArgument(plan.stageReady ? rest + 3 : rest + 2);
  Value validRows = a.toIndex(memref::LoadOp::create(b, numValid, a.idx(0)));
  // Item (sorted row, 32-column block) of the sorted rows.
  auto quantizeItem = [&](Value item) {
    Value row = a.divu(item, nb), blk = a.remu(item, nb);
    ifThen(b, a.cmp(CmpIPredicate::ult, row, validRows), [&] {
      Value id = memref::LoadOp::create(b, sortedIds, row);
      Value token = quant.andi(id, 0xFFFFFF), slot = quant.shrui(id, 24);
      Value routed = arith::AndIOp::create(b, a.cmp(CmpIPredicate::ult, token, tokens),
                                           a.cmp(CmpIPredicate::ult, slot, a.i32(plan.topk)));
      auto ifRouted = scf::IfOp::create(b, routed, /*withElseRegion=*/!plan.decoded);
      b.setInsertionPointToStart(ifRouted.thenBlock());
      Value src = a.toIndex(token);
      if (plan.source == QuantSourceRows::Slots)
        src = a.add(a.mul(src, a.idx(plan.topk)), a.toIndex(slot));
      quant.emit(src, row, blk);
      // Padding rows: scale byte 0, as the reference's sorted scales have
      // (decoded rows are by source row: padding has none).
      if (!plan.decoded) {
        b.setInsertionPointToStart(ifRouted.elseBlock());
        quant.storeScale(a.i32(0), row, blk);
      }
      b.setInsertionPointAfter(ifRouted);
    });
  };
  if (!plan.stageReady) {
    quantizeItem(a.add(a.mul(bid, a.idx(plan.threads)), tid));
    gpu::ReturnOp::create(b);
    return func;
  }

  // The sorted blocks bid, bid + grid, ..., each once stage 1 has written
  // all its N tiles (its counter down to 1). All the workgroups are resident
  // at once: stage 2 may launch at the start (it waits for the last 1).
  NVVM::GriddepcontrolOp::create(b, NVVM::GridDepActionKind::launch_dependents);
  Value blockM = a.idx(plan.blockM);
  Value validBlocks = a.divu(a.add(validRows, a.idx(plan.blockM - 1)), blockM);
  Value firstThread = a.cmp(CmpIPredicate::eq, tid, a.idx(0));
  auto blocks =
      scf::ForOp::create(b, bid, validBlocks, gpu::GridDimOp::create(b, gpu::Dimension::x));
  b.setInsertionPointToStart(blocks.getBody());
  Value block = blocks.getInductionVar();
  ifThen(b, firstThread, [&] { emitStageReadyAcquire(a, stageReady, block, /*readyAt=*/1); });
  gpu::BarrierOp::create(b);
  Value items = a.idx(plan.blockM * plan.blocksPerRow());
  auto loop = scf::ForOp::create(b, tid, items, a.idx(plan.threads));
  b.setInsertionPointToStart(loop.getBody());
  quantizeItem(a.add(a.mul(a.mul(block, blockM), nb), loop.getInductionVar()));
  b.setInsertionPointAfter(loop);
  gpu::BarrierOp::create(b);
  ifThen(b, firstThread, [&] { emitStageReadyRelease(a, stageReady, block, a.idx(1)); });
  b.setInsertionPointAfter(blocks);
  gpu::ReturnOp::create(b);
  return func;
}

} // namespace moegen
