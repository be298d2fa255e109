//===- QuantKernel.h - The activation quantization kernel -------*- C++ -*-===//
#ifndef MOEGEN_TEMPLATES_QUANT_QUANTKERNEL_H
#define MOEGEN_TEMPLATES_QUANT_QUANTKERNEL_H

#include "templates/KernelBuilder.h"
#include "templates/quant/QuantPlan.h"

namespace moegen {

/// The quantization kernel's arguments, in order. Rows order:
///   x              bf16 [rows, C]
///   q              u8   [rows, rowBytes]     fp4x2 (C/2 bytes) or e4m3fn (C bytes)
///   scales         u8   e8m0_shuffle of [rows, C/32]: plan.scaleBytes(rows) bytes
///   rows           i32
/// Sorted order:
///   x              bf16 [sourceRows, C]      sourceRows = tokens*topk (Slots) or tokens
///   q              u8   [sourceRows, rowBytes]
///   scales         u8   e8m0_shuffle of [maxPaddedRows, C/32] by sorted position
///   sorted_ids     i32  [maxPaddedRows]      the sorting kernel's output
///   num_valid_ids  i32  [2]
///   stage_ready    i32  [maxBlocks]          plan.stageReady only (templates/gemm/StageReady.h)
///   tokens         i32
/// Sorted rows past num_valid_ids[0] are not touched; padding rows within it
/// get scale bytes 0. Data rows no sorted id names (unrouted) are not
/// written. The shuffle's padding bytes (columns past C/32) are not written.
/// Decoded plans (plan.decoded) have no `scales`, and q is bf16 [rows, C]:
/// each value rounded to the format with its block's scale, decoded.
/// Pointers must be 16-byte aligned.
/// Launch: plan.grid(tokens) workgroups of plan.threads threads (plan.stageReady:
/// plan.grid(tokens, SMs), or any other count: the workgroups stride over the blocks).

/// Adds the quantization kernel to `module`, for gfx950 or sm_90a (where the
/// MX encoding is done in software, templates/sm90/MxSoftwareConvert.h).
mlir::gpu::GPUFuncOp buildQuantKernel(mlir::ImplicitLocOpBuilder &b, mlir::gpu::GPUModuleOp module,
                                      llvm::StringRef symbol, const QuantPlan &plan,
                                      const TargetInfo &target);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_QUANT_QUANTKERNEL_H
