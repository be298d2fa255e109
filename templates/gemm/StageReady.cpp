//===- StageReady.cpp - Stage 2 beside stage 1's last round ---------------===//

#include "templates/gemm/StageReady.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using arith::CmpIPredicate;

namespace moegen {

/// The GPU scope of LLVM's NVPTX atomics and fences (.gpu in PTX).
static constexpr llvm::StringLiteral kGpuScope = "device";

void emitStage2Launch(Arith &a) {
  LLVM::FenceOp::create(a.b, LLVM::AtomicOrdering::release, kGpuScope);
  NVVM::GriddepcontrolOp::create(a.b, NVVM::GridDepActionKind::launch_dependents);
}

void emitStageReadyRelease(Arith &a, Value stageReady, Value block, Value tiles) {
  ImplicitLocOpBuilder &b = a.b;
  Value ptr = elementPointer(b, stageReady, b.getI32Type(), block);
  LLVM::FenceOp::create(b, LLVM::AtomicOrdering::release, kGpuScope);
  LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::sub, ptr, a.toI32(tiles),
                            LLVM::AtomicOrdering::monotonic, kGpuScope, 4);
}

void emitStageReadyAcquire(Arith &a, Value stageReady, Value block, int64_t readyAt) {
  ImplicitLocOpBuilder &b = a.b;
  Type i32 = b.getI32Type(), i1 = b.getI1Type();
  Value ptr = elementPointer(b, stageReady, b.getI32Type(), block);
  // (tries, ready): the loop ends on a full counter or after the last try.
  auto loop = scf::WhileOp::create(b, TypeRange{i32, i1},
                                   ValueRange{a.i32(0), arith::ConstantIntOp::create(b, 0, 1)});
  {
    OpBuilder::InsertionGuard guard(b);
    Block *before = b.createBlock(&loop.getBefore(), {}, {i32, i1}, {b.getLoc(), b.getLoc()});
    Value tries = before->getArgument(0);
    auto load =
        LLVM::LoadOp::create(b, i32, ptr, /*alignment=*/4, /*isVolatile=*/false,
                             /*isNonTemporal=*/false, /*isInvariant=*/false,
                             /*isInvariantGroup=*/false, LLVM::AtomicOrdering::acquire, kGpuScope);
    Value ready = a.cmp(CmpIPredicate::sle, load, a.i32(readyAt));
    Value more = arith::AndIOp::create(
        b, arith::XOrIOp::create(b, ready, arith::ConstantIntOp::create(b, 1, 1)),
        a.cmp(CmpIPredicate::slt, tries, a.i32(kStageReadyTries)));
    scf::ConditionOp::create(b, more, ValueRange{tries, ready});
    Block *after = b.createBlock(&loop.getAfter(), {}, {i32, i1}, {b.getLoc(), b.getLoc()});
    NVVM::NanosleepOp::create(b, a.i32(kStageReadySleepNs));
    scf::YieldOp::create(b,
                         ValueRange{a.add(after->getArgument(0), a.i32(1)), after->getArgument(1)});
  }
  Value notReady =
      arith::XOrIOp::create(b, loop.getResult(1), arith::ConstantIntOp::create(b, 1, 1));
  ifThen(b, notReady, [&] { emitGridWait(b); });
}

} // namespace moegen
