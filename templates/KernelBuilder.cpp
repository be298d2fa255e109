//===- KernelBuilder.cpp - Shared helpers of the kernel builders ----------===//

#include "templates/KernelBuilder.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

namespace moegen {

MemRefType globalBufferType(MLIRContext *ctx, Type elementType) {
  // 2^31 bytes at most: offsets stay in 32 bits, as buffer instructions need.
  int64_t bytes = std::max<int64_t>(1, elementType.getIntOrFloatBitWidth() / 8);
  auto space = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Global);
  return MemRefType::get({(int64_t(1) << 31) / bytes}, elementType, MemRefLayoutAttrInterface(),
                         space);
}

MemRefType ldsBufferType(MLIRContext *ctx, Type elementType, int64_t count) {
  auto space = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  return MemRefType::get({count}, elementType, MemRefLayoutAttrInterface(), space);
}

Value elementPointer(ImplicitLocOpBuilder &b, Value mem, Type elemType, Value index,
                     unsigned addressSpace) {
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, mem);
  Value addr = arith::IndexCastOp::create(b, b.getI64Type(), base);
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext(), addressSpace);
  Value ptr = LLVM::IntToPtrOp::create(b, ptrType, addr);
  Value idx = arith::IndexCastOp::create(b, b.getI64Type(), index);
  return LLVM::GEPOp::create(b, ptrType, elemType, ptr, ValueRange{idx});
}

void emitGridWait(ImplicitLocOpBuilder &b) {
  LLVM::InlineAsmOp::create(b, Type(), ValueRange(), "griddepcontrol.wait;", "~{memory}",
                            /*has_side_effects=*/true, /*is_align_stack=*/false,
                            LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
                            ArrayAttr());
}

void ifThen(ImplicitLocOpBuilder &b, Value cond, llvm::function_ref<void()> then) {
  auto op = scf::IfOp::create(b, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(op.thenBlock());
  then();
}

SmallVector<Value> dynamicLdsBuffers(ImplicitLocOpBuilder &b, ArrayRef<MemRefType> buffers) {
  auto space = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value bytes =
      gpu::DynamicSharedMemoryOp::create(b, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                                                            MemRefLayoutAttrInterface(), space));
  SmallVector<Value> views;
  int64_t offset = 0;
  for (MemRefType t : buffers) {
    Value at = arith::ConstantIndexOp::create(b, offset);
    views.push_back(memref::ViewOp::create(b, t, bytes, at, ValueRange()));
    // Each view 16-byte aligned, as the static buffers (whole vectors of 4 words).
    offset = llvm::alignTo(offset + t.getNumElements() * (t.getElementTypeBitWidth() / 8), 16);
  }
  return views;
}

gpu::GPUFuncOp createKernel(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                            const KernelSignature &sig, ArrayRef<Type> elementTypes,
                            ArrayRef<MemRefType> ldsBuffers) {
  MLIRContext *ctx = b.getContext();
  SmallVector<Type> argTypes;
  for (auto [arg, elem] : llvm::zip_equal(sig.args, elementTypes)) {
    switch (arg.kind) {
    case KernelArgKind::Pointer:
      argTypes.push_back(globalBufferType(ctx, elem));
      break;
    case KernelArgKind::I32:
      argTypes.push_back(b.getI32Type());
      break;
    case KernelArgKind::F32:
      argTypes.push_back(b.getF32Type());
      break;
    }
  }
  b.setInsertionPointToEnd(module.getBody());
  SmallVector<Type> lds(ldsBuffers.begin(), ldsBuffers.end());
  auto func = gpu::GPUFuncOp::create(b, sig.symbol, b.getFunctionType(argTypes, {}), lds);
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({int32_t(sig.blockSize), 1, 1}));
  b.setInsertionPointToStart(&func.getBody().front());
  return func;
}

Value workgroupCount(ImplicitLocOpBuilder &b, gpu::Dimension dim) {
  MLIRContext *ctx = b.getContext();
  auto constPtr = LLVM::LLVMPointerType::get(ctx, 4);
  Value args = LLVM::CallIntrinsicOp::create(
                   b, constPtr, b.getStringAttr("llvm.amdgcn.implicitarg.ptr"), ValueRange{})
                   .getResult(0);
  // hidden_block_count_x, _y, _z: three u32 at the start of the hidden
  // arguments.
  int32_t offset = 4 * static_cast<int32_t>(dim);
  Value field = LLVM::GEPOp::create(b, constPtr, b.getI8Type(), args,
                                    ArrayRef<LLVM::GEPArg>{LLVM::GEPArg(offset)});
  Value count = LLVM::LoadOp::create(b, b.getI32Type(), field, /*alignment=*/4,
                                     /*isVolatile=*/false, /*isNonTemporal=*/false,
                                     /*isInvariant=*/true);
  return arith::IndexCastUIOp::create(b, b.getIndexType(), count);
}

Value emitE8m0RowOffset(Arith &a, Value row, int64_t cols) {
  int64_t paddedCols = e8m0PaddedCols(cols);
  Value r0 = arith::ShRUIOp::create(a.b, row, a.idx(5));
  Value r1 = arith::AndIOp::create(a.b, arith::ShRUIOp::create(a.b, row, a.idx(4)), a.idx(1));
  Value r2 = arith::AndIOp::create(a.b, row, a.idx(15));
  return a.add(a.add(a.mul(r0, a.idx(32 * paddedCols)), a.mul(r2, a.idx(4))), r1);
}

Value emitE8m0ColumnOffset(Arith &a, Value col) {
  Value c0 = arith::ShRUIOp::create(a.b, col, a.idx(3));
  Value c1 = arith::AndIOp::create(a.b, arith::ShRUIOp::create(a.b, col, a.idx(2)), a.idx(1));
  Value c2 = arith::AndIOp::create(a.b, col, a.idx(3));
  return a.add(a.add(a.mul(c0, a.idx(256)), a.mul(c2, a.idx(64))), a.mul(c1, a.idx(2)));
}

Value emitE8m0ShuffleOffset(Arith &a, Value row, Value col, int64_t cols) {
  return a.add(emitE8m0RowOffset(a, row, cols), emitE8m0ColumnOffset(a, col));
}

void disableUnroll(scf::ForOp loop) {
  MLIRContext *ctx = loop.getContext();
  loop->setAttr("llvm.loop_annotation",
                LLVM::LoopAnnotationAttr::get(
                    ctx, /*disableNonforced=*/nullptr, /*vectorize=*/nullptr,
                    /*interleave=*/nullptr,
                    LLVM::LoopUnrollAttr::get(ctx, /*disable=*/BoolAttr::get(ctx, true), {}, {}, {},
                                              {}, {}, {}),
                    {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}));
}

} // namespace moegen
