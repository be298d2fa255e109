//===- FinishKernel.h - Stage 1's split-K finishing kernel ------*- C++ -*-===//
//
// With k_batch > 1 the stage-1 GEMM writes pre-activation gate/up partial
// sums instead of its epilogue; this kernel finishes them: the sum over the
// splits, the activation, doweight and the output (bf16, or fp4/fp8 with e8m0
// scales by the RoundUp rule, ceil_pow2(amax / max), written at the sorted
// position in the e8m0_shuffle layout; or, where the target carries MX
// activations decoded, the bf16 values those codes decode to, no scales).
//
// Partials, f32 [T*topk, 2I] (gate columns [0, I), up [I, 2I)), row
// token*topk + slot:
//   k_batch_mode = atomic         one buffer, zeroed, accumulated with f32 atomics
//   k_batch_mode = deterministic  k_batch buffers [k_batch, T*topk, 2I], one per
//                                 split, summed here in split order
//
// Arguments: partials, sorted_ids, sorted_weights, num_valid_ids, out,
// out_scale, tokens. Launch: one thread per (sorted row, 32-column block):
// grid ceil(maxPaddedRows * I/32 / 256), block 256.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEMPLATES_FINISH_FINISHKERNEL_H
#define MOEGEN_TEMPLATES_FINISH_FINISHKERNEL_H

#include "templates/KernelBuilder.h"
#include "templates/finish/FinishPlan.h"
#include "templates/gemm/GemmPlan.h"

namespace moegen {

mlir::gpu::GPUFuncOp buildFinishKernel(mlir::ImplicitLocOpBuilder &b, mlir::gpu::GPUModuleOp module,
                                       llvm::StringRef symbol, const MoeSpec &spec,
                                       const TargetInfo &target);

/// The e8m0 byte of a block's amax (f32 bits as i32) with the RoundUp rule:
/// the smallest power of two s with max * 2^s >= amax, where max is 6 (fp4)
/// or 448 (fp8); 0 for amax = 0 or below 2^-127, 0xFF for NaN/Inf.
mlir::Value emitRoundUpScale(mlir::ImplicitLocOpBuilder &b, mlir::Value amaxBits, bool fp4);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_FINISH_FINISHKERNEL_H
