//===- Preshuffle.h - Weight and scale layouts of the kernels ---*- C++ -*-===//
//
// The byte layouts aiter's MoE kernels read, as pure permutations of a
// row-major byte matrix, each with its inverse.
//
// (16,16) weight shuffle, per expert, of a [N, Kb] byte matrix (Kb = bytes
// per row, K/2 for fp4): row n = 16*n0 + nl, byte kb = 16*kc + kp goes to
//   n0*(16*Kb) + kc*256 + nl*16 + kp
// (needs N % 16 == 0 and Kb % 32 == 0). The gate/up interleaved variant
// first reorders the [2I] rows of w1 from GGUU to GUGU in 16-row groups
// (gate group g, then up group g), then applies the same shuffle.
//
// e8m0_shuffle of a [R, C] scale matrix: padded (zeros) to R' = ceil(R, 256)
// rows, C' = ceil(C, 8) columns; with r = 32*r0 + 16*r1 + r2 and
// c = 8*c0 + 4*c1 + c2 the byte goes to
//   r0*(32*C') + c0*256 + c2*64 + r2*4 + c1*2 + r1.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_NUMERICS_PRESHUFFLE_H
#define MOEGEN_RUNTIME_NUMERICS_PRESHUFFLE_H

#include "compiler/spec/Spec.h"
#include "runtime/numerics/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace moegen::num {

/// Moves gate/up rows between GGUU ([gate rows 0..I), [up rows 0..I)) and
/// GUGU (16 gate rows, 16 up rows, ...) for `experts` matrices of
/// [rows = 2I, rowBytes]. I must be a multiple of 16.
llvm::Expected<std::vector<uint8_t>> interleaveGateUp(llvm::ArrayRef<uint8_t> src, int64_t experts,
                                                      int64_t rows, int64_t rowBytes);
llvm::Expected<std::vector<uint8_t>>
deinterleaveGateUp(llvm::ArrayRef<uint8_t> src, int64_t experts, int64_t rows, int64_t rowBytes);

/// (16,16) shuffle of `experts` byte matrices of [rows, rowBytes].
llvm::Expected<std::vector<uint8_t>> shuffleWeight16x16(llvm::ArrayRef<uint8_t> src,
                                                        int64_t experts, int64_t rows,
                                                        int64_t rowBytes,
                                                        bool gateUpInterleave = false);
llvm::Expected<std::vector<uint8_t>> unshuffleWeight16x16(llvm::ArrayRef<uint8_t> src,
                                                          int64_t experts, int64_t rows,
                                                          int64_t rowBytes,
                                                          bool gateUpInterleave = false);

/// Offset of byte (r, c) of a [R, C] scale matrix in the e8m0_shuffle layout
/// whose padded column count is paddedCols.
int64_t e8m0ShuffleOffset(int64_t r, int64_t c, int64_t paddedCols);
int64_t e8m0ShuffledRows(int64_t rows); // ceil(rows, 256)
int64_t e8m0ShuffledCols(int64_t cols); // ceil(cols, 8)

/// [R, C] -> [ceil256(R), ceil8(C)] bytes; padding is 0.
std::vector<uint8_t> e8m0Shuffle(llvm::ArrayRef<uint8_t> src, int64_t rows, int64_t cols);
/// Inverse: reads the [R, C] logical bytes back out of a shuffled buffer.
llvm::Expected<std::vector<uint8_t>> e8m0Unshuffle(llvm::ArrayRef<uint8_t> src, int64_t rows,
                                                   int64_t cols);

/// The per-expert scale shuffle of gate/up-aware kernels (aiter's
/// shuffle_scale with is_guinterleave): each expert's [rows, cols] block in
/// the e8m0_shuffle byte order without padding, after the GGUU -> GUGU row
/// interleave when gateUpInterleave. Needs rows % 32 == 0 and cols % 8 == 0;
/// under those conditions the result equals the first experts*rows*cols bytes
/// of e8m0Shuffle of the (interleaved) rows.
llvm::Expected<std::vector<uint8_t>> shuffleExpertScales(llvm::ArrayRef<uint8_t> src,
                                                         int64_t experts, int64_t rows,
                                                         int64_t cols, bool gateUpInterleave);
llvm::Expected<std::vector<uint8_t>> unshuffleExpertScales(llvm::ArrayRef<uint8_t> src,
                                                           int64_t experts, int64_t rows,
                                                           int64_t cols, bool gateUpInterleave);

/// w1 and w2 in the layouts the GEMM kernels read (templates/gemm/GemmKernel.h),
/// what a host application uploads as LayerArgs::w1/w1Scale/w2/w2Scale.
struct PackedWeights {
  std::vector<uint8_t> w1, w1Scale, w2, w2Scale;
};

/// aiter's (16,16) preshuffle of the weight rows (w1 gate/up rows GUGU-
/// interleaved in 16-row groups for gate_up = interleaved) and, for MX
/// weights, the e8m0 scales in the e8m0_shuffle layout in the same row order
/// (bf16 weights: a 4-byte zero stand-in the kernels never read). w1 is
/// [experts, 2*inter_dim, model_dim], w2 [experts, model_dim, inter_dim], both
/// in the spec's weight format.
llvm::Expected<PackedWeights> packWeights(const MoeSpec &spec, const HostTensor &w1,
                                          const HostTensor &w2);

} // namespace moegen::num

#endif // MOEGEN_RUNTIME_NUMERICS_PRESHUFFLE_H
