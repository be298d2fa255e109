//===- ReduceKernel.cpp - The stage-2 top-k reduction kernel --------------===//

#include "templates/reduce/ReduceKernel.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using arith::CmpIPredicate;

namespace moegen {

gpu::GPUFuncOp buildReduceKernel(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module, StringRef symbol,
                                 const ReducePlan &plan) {
  Type bf16 = b.getBF16Type(), f32 = b.getF32Type(), i32 = b.getI32Type();
  KernelSignature sig = reduceKernelSignature(symbol, plan);
  gpu::GPUFuncOp func = createKernel(b, module, sig, {bf16, i32, bf16, i32}, {});
  Block &entry = func.getBody().front();
  Value rows = entry.getArgument(0), topkIds = entry.getArgument(1);
  Value out = entry.getArgument(2), tokens = entry.getArgument(3);

  Arith a{b};
  const int64_t n = ReducePlan::kVector;
  auto vecBf16 = VectorType::get({n}, bf16), vecF32 = VectorType::get({n}, f32);
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value group = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value token = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  Value vec = a.add(a.mul(group, a.idx(plan.threads)), tid);
  Value inRange =
      arith::AndIOp::create(b, a.cmp(CmpIPredicate::ult, vec, a.idx(plan.vectorsPerRow())),
                            a.cmp(CmpIPredicate::ult, token, a.toIndex(tokens)));
  auto ifIn = scf::IfOp::create(b, inRange, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifIn.thenBlock());

  Value col = a.mul(vec, a.idx(n));
  Value firstRow = a.mul(token, a.idx(plan.topk));
  Value zero = vector::BroadcastOp::create(b, vecF32, a.f32(0.0f));
  // Slot order, one f32 accumulator: the sum does not depend on the launch.
  auto slots = scf::ForOp::create(b, a.idx(0), a.idx(plan.topk), a.idx(1), ValueRange{zero});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(slots.getBody());
    Value acc = slots.getRegionIterArgs()[0];
    Value row = a.add(firstRow, slots.getInductionVar());
    // The id is uniform across the workgroup: a scalar load and branch.
    Value id = memref::LoadOp::create(b, topkIds, row);
    // Unsigned compare: negative ids are not routed either.
    Value routed = a.cmp(CmpIPredicate::ult, id, a.i32(plan.experts));
    auto ifRouted = scf::IfOp::create(b, TypeRange{vecF32}, routed, /*withElseRegion=*/true);
    b.setInsertionPointToStart(ifRouted.thenBlock());
    Value off = a.add(a.mul(row, a.idx(plan.cols)), col);
    Value v = vector::LoadOp::create(b, vecBf16, rows, ValueRange{off}, /*nontemporal=*/false,
                                     llvm::MaybeAlign(16));
    Value sum = arith::AddFOp::create(b, acc, arith::ExtFOp::create(b, vecF32, v));
    scf::YieldOp::create(b, sum);
    b.setInsertionPointToStart(ifRouted.elseBlock());
    scf::YieldOp::create(b, acc);
    b.setInsertionPointAfter(ifRouted);
    scf::YieldOp::create(b, ifRouted.getResult(0));
  }
  Value result = arith::TruncFOp::create(b, vecBf16, slots.getResult(0));
  Value outOff = a.add(a.mul(token, a.idx(plan.cols)), col);
  vector::StoreOp::create(b, result, out, ValueRange{outOff}, /*nontemporal=*/false,
                          llvm::MaybeAlign(16));
  b.setInsertionPointAfter(ifIn);
  gpu::ReturnOp::create(b);
  return func;
}

} // namespace moegen
