//===- FinishKernel.cpp - Stage 1's split-K finishing kernel --------------===//

#include "templates/finish/FinishKernel.h"

#include "templates/TargetSupport.h"
#include "templates/epilogue/ActivationLowering.h"
#include "templates/epilogue/MxQuantize.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using arith::CmpIPredicate;

namespace moegen {

gpu::GPUFuncOp buildFinishKernel(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module, StringRef symbol,
                                 const MoeSpec &spec, const TargetInfo &target) {
  const StageSchedule &s = spec.stage1;
  const int64_t I = spec.problem.interDim, topk = spec.problem.topk;
  const int64_t colBlocks = I / 32;
  const bool quant = s.fusedQuant != FusedQuant::None, fp4 = s.fusedQuant == FusedQuant::FP4;
  // Quantized rows carried decoded: bf16 rows and no scales.
  const bool decoded = quant && carriesDecodedMx(spec, target);
  Type i8 = b.getI8Type(), i32 = b.getI32Type(), f32 = b.getF32Type(), bf16 = b.getBF16Type();
  gpu::GPUFuncOp func =
      createKernel(b, module, finishKernelSignature(symbol),
                   {f32, i32, f32, i32, quant && !decoded ? i8 : bf16, i8, i32}, {});
  Block &entry = func.getBody().front();
  Value partials = entry.getArgument(0), sortedIds = entry.getArgument(1);
  Value sortedWeights = entry.getArgument(2), numValid = entry.getArgument(3);
  Value out = entry.getArgument(4), outScale = entry.getArgument(5);
  Arith a{b};
  auto load = [&](Value mem, Value idx) { return memref::LoadOp::create(b, mem, ValueRange{idx}); };
  auto store = [&](Value v, Value mem, Value idx) {
    memref::StoreOp::create(b, v, mem, ValueRange{idx});
  };
  Value tokens = a.toIndex(entry.getArgument(6));

  Value gid = a.add(a.mul(gpu::BlockIdOp::create(b, gpu::Dimension::x), a.idx(kFinishThreads)),
                    gpu::ThreadIdOp::create(b, gpu::Dimension::x));
  Value pos = a.divu(gid, a.idx(colBlocks));
  Value cb = a.remu(gid, a.idx(colBlocks));
  Value used = a.toIndex(load(numValid, a.idx(0)));
  Value fused =
      a.toIndex(load(sortedIds, a.select(a.cmp(CmpIPredicate::ult, pos, used), pos, a.idx(0))));
  Value token = arith::AndIOp::create(b, fused, a.idx(0xFFFFFF));
  Value slot = arith::ShRUIOp::create(b, fused, a.idx(24));
  Value valid =
      arith::AndIOp::create(b, a.cmp(CmpIPredicate::ult, pos, used),
                            arith::AndIOp::create(b, a.cmp(CmpIPredicate::ult, token, tokens),
                                                  a.cmp(CmpIPredicate::ult, slot, a.idx(topk))));
  auto ifValid = scf::IfOp::create(b, valid, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifValid.thenBlock());

  Value pair = a.add(a.mul(token, a.idx(topk)), slot);
  Value splitStride = a.mul(a.mul(tokens, a.idx(topk)), a.idx(2 * I));
  int64_t splits = s.kBatchMode == KBatchMode::Deterministic ? s.kBatch : 1;
  Value weight = spec.problem.doweightStage1 ? load(sortedWeights, pos) : Value();
  SmallVector<Value> vals;
  for (int64_t c = 0; c < 32; ++c) {
    Value col = a.add(a.mul(cb, a.idx(32)), a.idx(c));
    Value g, u;
    for (int64_t k = 0; k < splits; ++k) {
      // Deterministic: the splits in order.
      Value row = a.add(a.mul(a.idx(k), splitStride), a.mul(pair, a.idx(2 * I)));
      Value gk = load(partials, a.add(row, col));
      Value uk = load(partials, a.add(row, a.add(col, a.idx(I))));
      g = g ? arith::AddFOp::create(b, g, gk) : gk;
      u = u ? arith::AddFOp::create(b, u, uk) : uk;
    }
    Value v = emitActivation(b, spec.activation, target, g, u);
    if (weight)
      v = arith::MulFOp::create(b, v, weight);
    vals.push_back(v);
  }
  Value rowBase = a.mul(pair, a.idx(quant && !decoded ? (fp4 ? I / 2 : I) : I));
  auto storeBf16 = [&] {
    for (int64_t c = 0; c < 32; ++c)
      store(arith::TruncFOp::create(b, bf16, vals[c]), out,
            a.add(rowBase, a.add(a.mul(cb, a.idx(32)), a.idx(c))));
  };
  if (!quant) {
    storeBf16();
  } else {
    Value amax = a.f32(0.0f);
    for (Value v : vals)
      amax = arith::MaximumFOp::create(b, amax, emitFAbs(b, target, v));
    Value e = emitRoundUpScale(b, arith::BitcastOp::create(b, i32, amax), fp4);
    if (decoded) {
      for (Value &v : vals)
        v = emitMxDecodedValue(b, v, e, fp4);
      storeBf16();
    } else if (fp4) {
      for (int64_t c = 0; c < 32; c += 2)
        store(emitFp4Byte(b, target, vals[c], vals[c + 1], e), out,
              a.add(rowBase, a.add(a.mul(cb, a.idx(16)), a.idx(c / 2))));
    } else {
      for (int64_t c = 0; c < 32; ++c)
        store(emitFp8Byte(b, target, vals[c], e), out,
              a.add(rowBase, a.add(a.mul(cb, a.idx(32)), a.idx(c))));
    }
    if (!decoded)
      store(arith::TruncIOp::create(b, i8, e), outScale,
            emitE8m0ShuffleOffset(a, pos, cb, colBlocks));
  }
  b.setInsertionPointAfter(ifValid);
  gpu::ReturnOp::create(b);
  return func;
}

} // namespace moegen
