//===- GemmKernel.h - The stage-1 and stage-2 MoE GEMM kernels --*- C++ -*-===//
//
// One template builds both stages (see GemmPlan.h for the plan and rules).
// Workgroup (bid.x, bid.y, bid.z) computes output columns
// [bid.x * tile_n, +tile_n) of M tile bid.y (tile_m sorted rows of one
// expert: a sorted block, or in stage 2 a part of one) over the K slice bid.z
// of k_batch. Its waves are nWaves N-waves times mWaves M-waves times k_wave
// K-groups; wave (waveN, waveM) of a K-group computes columns
// [waveN * tile_n/nWaves, +tile_n/nWaves) of rows [waveM * mPerWave,
// +mPerWave) and keeps their f32 accumulators (twice in stage 1: gate and
// up). A rows, gathered through sorted_token_ids, are copied per K step by
// the K-group's threads in 16-byte buffer loads into double-buffered LDS
// tiles (the next tile's loads are in flight during the current tile's
// MFMAs; one barrier per step), and every wave reads its A operands from
// there. Weights, in the (16,16)
// preshuffle whose 16-byte chunks are exactly one lane's MFMA operand, go
// straight from memory to registers. K-groups are reduced through LDS (the
// same allocation) in a fixed order, so the result is deterministic.
//
// Stage-1 arguments, in order:
//   a          activations [T, K]: fp4x2 [T, K/2] / fp8 [T, K] bytes, or bf16
//   a_scale    MX: e8m0 [T, K/32] in the e8m0_shuffle layout, row = token (unused for bf16)
//   w          w1 [E, 2I, K] (16,16)-preshuffled bytes; rows GGUU or GUGU (16-row groups)
//   w_scale    e8m0 [E*2I, K/32] in the e8m0_shuffle layout, rows in w's row order
//   sorted_ids, sorted_experts, sorted_weights, num_valid_ids   (the sorting kernel's outputs)
//   out        bf16 [T, topk, I]; with fused_quant fp4x2 [T*topk, I/2] / fp8 [T*topk, I] bytes
//   out_scale  fused_quant: e8m0 [sortedRows, I/32] in the e8m0_shuffle layout, row = sorted
//   position tokens     i32
// Stage-2 arguments:
//   a          stage-1 output [T*topk, I] (row token*topk + slot), format as stage 1's A
//   a_scale    MX: e8m0 [sortedRows, I/32] e8m0_shuffle, row = sorted position
//   w          w2 [E, model_dim, I] (16,16)-preshuffled bytes
//   w_scale    e8m0 [E*model_dim, I/32] e8m0_shuffle
//   sorted_ids, sorted_experts, sorted_weights, num_valid_ids
//   out        bf16: reduce=atomic [T, model_dim] zeroed, accumulated with packed bf16
//              atomics; reduce=reduce [T*topk, model_dim] per-slot rows
//   tokens     i32
// Launch: grid (N / tile_n, Y, k_batch), block plan.threads, for any Y in [1,
// plan.gridM(maxBlocks(tokens))]: workgroup row y computes the M tiles y, y + Y, ...
// below num_valid_ids (the runtime launches plan.grid()).
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEMPLATES_GEMM_GEMMKERNEL_H
#define MOEGEN_TEMPLATES_GEMM_GEMMKERNEL_H

#include "templates/KernelBuilder.h"
#include "templates/gemm/GemmPlan.h"

namespace moegen {

mlir::gpu::GPUFuncOp buildGemmKernel(mlir::ImplicitLocOpBuilder &b, mlir::gpu::GPUModuleOp module,
                                     llvm::StringRef symbol, const MoeSpec &spec,
                                     const GemmPlan &plan, const TargetInfo &target);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_GEMM_GEMMKERNEL_H
