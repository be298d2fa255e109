//===- KernelBuilder.h - Shared helpers of the kernel builders --*- C++ -*-===//
#ifndef MOEGEN_TEMPLATES_KERNELBUILDER_H
#define MOEGEN_TEMPLATES_KERNELBUILDER_H

#include "templates/KernelSignature.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <string>
#include <vector>

namespace moegen {

/// A global buffer argument: a bare pointer typed as a flat memref. The
/// static size is only an upper bound for indexing; the real extent comes
/// from the other arguments.
mlir::MemRefType globalBufferType(mlir::MLIRContext *ctx, mlir::Type elementType);

/// A workgroup (LDS) buffer of `count` elements.
mlir::MemRefType ldsBufferType(mlir::MLIRContext *ctx, mlir::Type elementType, int64_t count);

/// Views of `buffers` laid out one after another in the kernel's dynamic
/// shared memory (sm_90a: the launch provides their bytes,
/// KernelSignature::dynamicSharedBytes), each at a 16-byte aligned offset
/// (the launch's bytes must count that padding).
llvm::SmallVector<mlir::Value> dynamicLdsBuffers(mlir::ImplicitLocOpBuilder &b,
                                                 llvm::ArrayRef<mlir::MemRefType> buffers);

/// An LLVM pointer to element `index` (of type `elemType`) of memref `mem`,
/// in address space `addressSpace` (1 global, 3 shared): for LLVM atomics,
/// inline asm and cp.async.
mlir::Value elementPointer(mlir::ImplicitLocOpBuilder &b, mlir::Value mem, mlir::Type elemType,
                           mlir::Value index, unsigned addressSpace = 1);

/// Builds `then` under `cond` (an scf.if without else), leaving `b` after it.
void ifThen(mlir::ImplicitLocOpBuilder &b, mlir::Value cond, llvm::function_ref<void()> then);

/// A unit attribute on an NVPTX kernel whose memory no earlier kernel of the
/// layer touches and whose inputs are final before the first of them starts
/// its work, or that waits for each of its inputs itself (stage 2 beside
/// stage 1, templates/gemm/StageReady.h): moe-attach-grid-dependencies puts
/// its wait for the kernels before it at its exit instead of its entry, so
/// that its work overlaps theirs where they let it launch early, and its
/// dependents still find their outputs complete.
inline constexpr llvm::StringLiteral kGridWaitAtExitAttrName = "moe.grid_wait_at_exit";

/// NVPTX: `griddepcontrol.wait` (the kernels before this one in the stream
/// complete, their memory visible), as inline PTX with a memory clobber so
/// that no load or store of the kernel moves across it.
void emitGridWait(mlir::ImplicitLocOpBuilder &b);

/// Creates an empty kernel in `module` with the signature's arguments (and
/// the given LDS buffers) and its known block size, and leaves `b` at the
/// start of its body.
mlir::gpu::GPUFuncOp createKernel(mlir::ImplicitLocOpBuilder &b, mlir::gpu::GPUModuleOp module,
                                  const KernelSignature &sig,
                                  llvm::ArrayRef<mlir::Type> elementTypes,
                                  llvm::ArrayRef<mlir::MemRefType> ldsBuffers);

/// The number of workgroups of the launch along `dim`, as an index. Read from
/// the hidden kernel arguments of code objects v5+ (hidden_block_count_*):
/// gpu.grid_dim lowers to a device-library call that moegen does not link.
mlir::Value workgroupCount(mlir::ImplicitLocOpBuilder &b, mlir::gpu::Dimension dim);

/// Marks `loop` "do not unroll" (llvm.loop_annotation, carried to the latch
/// branch by moe-attach-loop-annotations): hand-pipelined main loops must
/// stay loops, as full unrolling hoists every step's loads and spills.
void disableUnroll(mlir::scf::ForOp loop);

/// Small arithmetic helpers over index and i32 values.
struct Arith {
  mlir::ImplicitLocOpBuilder &b;
  mlir::Value idx(int64_t v) { return mlir::arith::ConstantIndexOp::create(b, v); }
  mlir::Value i32(int64_t v) { return mlir::arith::ConstantIntOp::create(b, v, 32); }
  mlir::Value i64(int64_t v) { return mlir::arith::ConstantIntOp::create(b, v, 64); }
  mlir::Value f32(float v) {
    return mlir::arith::ConstantFloatOp::create(b, b.getF32Type(), llvm::APFloat(v));
  }
  mlir::Value add(mlir::Value x, mlir::Value y) { return mlir::arith::AddIOp::create(b, x, y); }
  mlir::Value sub(mlir::Value x, mlir::Value y) { return mlir::arith::SubIOp::create(b, x, y); }
  mlir::Value mul(mlir::Value x, mlir::Value y) { return mlir::arith::MulIOp::create(b, x, y); }
  mlir::Value divu(mlir::Value x, mlir::Value y) { return mlir::arith::DivUIOp::create(b, x, y); }
  mlir::Value remu(mlir::Value x, mlir::Value y) { return mlir::arith::RemUIOp::create(b, x, y); }
  mlir::Value shl(mlir::Value x, mlir::Value y) { return mlir::arith::ShLIOp::create(b, x, y); }
  mlir::Value bitOr(mlir::Value x, mlir::Value y) { return mlir::arith::OrIOp::create(b, x, y); }
  mlir::Value cmp(mlir::arith::CmpIPredicate p, mlir::Value x, mlir::Value y) {
    return mlir::arith::CmpIOp::create(b, p, x, y);
  }
  mlir::Value select(mlir::Value c, mlir::Value x, mlir::Value y) {
    return mlir::arith::SelectOp::create(b, c, x, y);
  }
  mlir::Value toIndex(mlir::Value v) {
    return mlir::arith::IndexCastUIOp::create(b, b.getIndexType(), v);
  }
  mlir::Value toI32(mlir::Value v) {
    return mlir::arith::IndexCastUIOp::create(b, b.getI32Type(), v);
  }
};

/// Byte offset of scale (row, col) of a [rows, cols] e8m0 matrix in the
/// e8m0_shuffle layout (columns padded to a multiple of 8): with
/// row = 32 r0 + 16 r1 + r2 and col = 8 c0 + 4 c1 + c2,
/// r0 * 32 * paddedCols + c0 * 256 + c2 * 64 + r2 * 4 + c1 * 2 + r1.
mlir::Value emitE8m0ShuffleOffset(Arith &a, mlir::Value row, mlir::Value col, int64_t cols);
/// Its two parts: the row's (r0 * 32 * paddedCols + r2 * 4 + r1) and the
/// column's (c0 * 256 + c2 * 64 + c1 * 2). The row part of row + 32 d is the
/// row's plus d * 32 * paddedCols, so loops over K add a column part to
/// row parts computed once.
mlir::Value emitE8m0RowOffset(Arith &a, mlir::Value row, int64_t cols);
/// The e8m0_shuffle layout's columns: cols padded to a multiple of 8.
inline int64_t e8m0PaddedCols(int64_t cols) { return (cols + 7) / 8 * 8; }
mlir::Value emitE8m0ColumnOffset(Arith &a, mlir::Value col);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_KERNELBUILDER_H
