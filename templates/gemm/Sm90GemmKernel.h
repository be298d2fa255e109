//===- Sm90GemmKernel.h - The stage-1 and stage-2 GEMMs for sm_90a -*- C++ -*-===//
//
// The sm_90a build of the MoE GEMM: the arguments, launch grid, persistent
// M loop and memory layouts of GemmKernel.h (the same preshuffled MX
// weights, e8m0_shuffle scales, sorted rows and outputs), computed with
// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 by warps of 32 lanes.
//
// Hopper has neither fp4 nor scaled MMAs, so MX activations reach these
// kernels already decoded to bf16 (carriesDecodedMx, templates/TargetSupport.h:
// the quantizing kernels write the values their codes decode to, and stage
// 1's fused quantization does so too), and the weights are dequantized
// exactly to bf16 before the MMA: each element's e2m1/e4m3 value times its
// block's e8m0 scale is computed in f32 and rounded to bf16, which holds it
// exactly (at most 4 significant bits) whenever it lies in bf16's range
// (2^-133 to 2^128; MX data far from those ends). bf16 products are exact in
// the f32 accumulators, so only the summation order differs from the
// reference.
//
// Per K-group of nWaves warps (Sm90GemmPlan.h), per 32-wide K block: the
// group's threads load the block of the tile_m gathered A rows (padding rows
// as zeros) and of the tile_n (stage 1: 2 x tile_n gate/up) weight rows with
// their scales, dequantize them and store them as bf16 rows in shared memory;
// after a barrier each warp reads its mma.sync fragments from there (its
// nPerWarp columns, every row of the tile). K-groups are summed through
// shared memory in group order, then the epilogue of GemmKernel.h runs on
// the mma.sync accumulator layout: stage 1 activation (and weight), bf16
// rows or fused MX quantization (in-epilogue scale rule, decoded values
// stored as bf16 rows); stage 2 weight,
// then packed bf16x2 atomic adds (reduce=atomic) or per-slot bf16 rows;
// stage 1 with k_batch > 1 writes f32 gate/up partials for the finish kernel.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEMPLATES_GEMM_SM90GEMMKERNEL_H
#define MOEGEN_TEMPLATES_GEMM_SM90GEMMKERNEL_H

#include "templates/KernelBuilder.h"
#include "templates/gemm/GemmPlan.h"

namespace moegen {

mlir::gpu::GPUFuncOp buildSm90GemmKernel(mlir::ImplicitLocOpBuilder &b,
                                         mlir::gpu::GPUModuleOp module, llvm::StringRef symbol,
                                         const MoeSpec &spec, const GemmPlan &plan,
                                         const TargetInfo &target);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_GEMM_SM90GEMMKERNEL_H
