//===- GemmRows.h - Sorted rows and weight rows of the GEMM kernels -*- C++ -*-===//
//
// What both builds of the stage-1/stage-2 GEMM (GemmKernel.h for gfx950,
// Sm90GemmKernel.h for sm_90a) read the same way: a sorted row's token,
// top-k slot and validity from sorted_token_ids, and the row of w that holds
// an output column.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEMPLATES_GEMM_GEMMROWS_H
#define MOEGEN_TEMPLATES_GEMM_GEMMROWS_H

#include "compiler/spec/Spec.h"
#include "templates/KernelBuilder.h"
#include "templates/gemm/GemmPlan.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <array>

namespace moegen {

struct GemmRowInfo {
  mlir::Value sortedPos, token, slot;
  /// A routed row: token < tokens and slot < topk (padding rows are not).
  mlir::Value valid;
};

/// The row at `sortedPos` of sorted_ids (i32, token in the low 24 bits, slot
/// in the high 8).
GemmRowInfo emitGemmRowInfo(Arith &a, mlir::Value sortedIds, mlir::Value sortedPos,
                            mlir::Value tokens, int64_t topk);

/// The row of w (in its row order) that computes output column `n` of stage
/// 2, or of stage-1 half `half` (0 gate, 1 up): gate/up separated, n or
/// I + n; interleaved (GUGU, 16-row groups), 32 (n / 16) + 16 half + n % 16.
mlir::Value emitWeightRowOf(Arith &a, const MoeSpec &spec, bool stage1, mlir::Value n, int half);
/// emitWeightRowOf's value for a known column.
int64_t weightRowOf(const MoeSpec &spec, bool stage1, int64_t n, int half);

/// The stage-1/stage-2 kernel's arguments, in the launch contract's order
/// (gemmKernelSignature): a, a_scale, w, w_scale, sorted_ids, sorted_experts,
/// sorted_weights, num_valid_ids, out, [out_scale (stage 1)], [clear_out
/// (stage 1 where GemmPlan::clearsLayerOutput)], [stage_ready (where
/// GemmPlan::stageReady)], tokens.
struct GemmKernelArgs {
  mlir::Value aBuf, aScale, wBuf, wScale, sortedIds, sortedExperts, sortedWeights, numValid, out,
      outScale, clearOut, stageReady, tokensI32;
  /// Binds the fields to `func`'s arguments (outScale is null for stage 2,
  /// clearOut and stageReady where the kernel has no such argument:
  /// gemmKernelSignature).
  void bindArgs(mlir::gpu::GPUFuncOp func, bool stage1, bool clears, bool ready = false);
  /// Stage 1 with clear_out: zeroes the layer's bf16 output, [tokens,
  /// modelDim], 16 bytes a store spread over every thread of the launch
  /// (`blockSize` threads per workgroup, `grid` workgroups along x, y, z).
  /// Emitted after the M tiles, where none of their registers is live, or
  /// first where stage 2 starts beside stage 1 (GemmPlan::stageReady).
  void emitClearLayerOutput(Arith &a, int64_t modelDim, int64_t blockSize,
                            std::array<mlir::Value, 3> grid);
};

/// The element types of those arguments, for createKernel: a is bf16 (a16)
/// or MX bytes; out is f32 partials (stage 1 with k_batch > 1), MX bytes
/// (fused quantization) or bf16.
llvm::SmallVector<mlir::Type> gemmArgElementTypes(mlir::Builder &b, const GemmPlan &plan);

/// The workgroup's tile coordinates {N tile, first M row, K split}: its block
/// ids x, y, z, or with xcd_swizzle = G > 1 those of tile index
/// xcdSwizzledId(dispatch index, grid size, G) (GemmPlan.h), in 32-bit
/// arithmetic on the grid's sizes `grid`.
std::array<mlir::Value, 3> emitWorkgroupTile(Arith &a, int64_t xcdSwizzle,
                                             std::array<mlir::Value, 3> grid);

/// The persistent loop over M: workgroup row `firstRow` (of gridM rows)
/// takes the M tiles firstRow, firstRow + gridM, ... of the sorted rows in
/// use (num_valid_ids), so any grid.y from 1 to the worst case computes the
/// layer. For each tile whose sort block has an
/// expert (padding blocks have none), `accumulate(bidM, expert)` emits the
/// main loop and the k_wave reduction and returns the accumulators;
/// `epilogue` stores them, run by K-group 0 only when k_wave > 1 (`waveK`:
/// the wave's K-group; the others' sums are in its registers). A barrier
/// follows each tile, as the next tile rewrites the shared memory this one
/// read.
void emitPersistentMTiles(
    Arith &a, const GemmPlan &p, int64_t experts, mlir::Value numValid, mlir::Value sortedExperts,
    mlir::Value firstRow, mlir::Value gridM, mlir::Value waveK,
    llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::Value bidM, mlir::Value expert)>
        accumulate,
    llvm::function_ref<void(llvm::ArrayRef<mlir::Value>)> epilogue);

/// The M tiles holding sorted rows in use: ceil(num_valid_ids / tile_m).
mlir::Value emitUsedMTiles(Arith &a, const GemmPlan &p, mlir::Value numValid);

/// The same loop over `usedTiles` (emitUsedMTiles) carrying values from one
/// tile to the workgroup's next (starting as `init`): `accumulate(bidM,
/// expert, carried, next)` also sets what the next tile gets; a tile without
/// an expert passes them on as they are. `beforeTile(sortBlock)`, if given,
/// is emitted first in each tile with an expert (before `accumulate`), and
/// `afterTile(sortBlock)` after the barrier that ends it.
void emitPersistentMTilesCarrying(
    Arith &a, const GemmPlan &p, int64_t experts, mlir::Value usedTiles, mlir::Value sortedExperts,
    mlir::Value firstRow, mlir::Value gridM, mlir::Value waveK, mlir::ValueRange init,
    llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::Value bidM, mlir::Value expert,
                                                      mlir::ValueRange carried,
                                                      llvm::SmallVectorImpl<mlir::Value> &next)>
        accumulate,
    llvm::function_ref<void(llvm::ArrayRef<mlir::Value>)> epilogue,
    llvm::function_ref<void(mlir::Value sortBlock)> beforeTile = nullptr,
    llvm::function_ref<void(mlir::Value sortBlock)> afterTile = nullptr);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_GEMM_GEMMROWS_H
