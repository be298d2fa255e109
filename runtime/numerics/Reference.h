//===- Reference.h - Reference MoE stages -----------------------*- C++ -*-===//
//
// The single-source reference of a MoE layer. Every parameter comes from the
// MoeSpec: formats, problem sizes, doweight placement, the fused output
// quantization and the activation, which is evaluated only through
// evalActivationF32/F64(spec.activation, g, u), the same expression the
// kernel epilogue is generated from. There is no other way to pass an
// activation or its parameters in.
//
// Conventions (all buffers row-major, logical, unshuffled):
//   a1   [M, K]            stage-1 A in formats.activation (token-major)
//   w1   [E, 2I, K]        formats.weight, gate rows [0, I), up rows [I, 2I)
//                          (GGUU; the GUGU kernel layout is a preshuffle)
//   a2   [M, topk, I]      stage-2 A (row token*topk + slot)
//   w2   [E, K, I]         formats.weight
//   out  [M, K]            formats.output
// Stage 1 walks the sorted rows (gather by sorted ids, expert per block);
// products of decoded elements are exact in f32, so Accum::F32 (f32 sums,
// evalActivationF32) differs from a kernel only by summation order and the
// kernel's transcendental approximations; Accum::F64 is the exact-math
// variant (f64 sums and evalActivationF64; values are rounded to f32 before
// any output encoding). doweight in stage 1 multiplies the activation output, as the
// kernel epilogue does.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_NUMERICS_REFERENCE_H
#define MOEGEN_RUNTIME_NUMERICS_REFERENCE_H

#include "compiler/spec/Spec.h"
#include "runtime/numerics/MxQuant.h"
#include "runtime/numerics/Sorting.h"
#include "runtime/numerics/Tensor.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <vector>

namespace moegen::num {

enum class Accum : uint8_t { F32, F64 };

/// How stage 2 combines the top-k contributions of a token.
enum class Stage2Sum : uint8_t {
  F32ThenRound, // sum the slots in f32 (f64 in F64 mode) in slot order, round once
  Bf16Atomic,   // each contribution rounded to bf16 and added into a bf16
                // accumulator in sorted order, as packed bf16 atomics do
  Bf16SlotRows, // each contribution rounded to bf16 (the per-slot rows of
                // reduce=reduce), then summed in f32 in slot order, round once
};

struct RefOptions {
  Accum accum = Accum::F32;
  /// e8m0 rule of the fused stage-1 output quantization. Default: the
  /// in-epilogue rule when k_batch == 1, RoundUp (the split-K finishing
  /// kernel) otherwise.
  std::optional<ScaleRounding> fusedQuantRounding;
  /// Rule of the separate quantization of a bf16 stage-1 output for an MX
  /// stage 2 (aiter's fused_dynamic_mxfp4_quant_moe_sort uses RoundUp).
  ScaleRounding interQuantRounding = ScaleRounding::RoundUp;
  Stage2Sum sum = Stage2Sum::F32ThenRound;
};

/// The fused-quant scale rule `opts` selects for `spec`.
ScaleRounding fusedQuantRoundingFor(const MoeSpec &spec, const RefOptions &opts);

struct Stage1Result {
  HostTensor out;      // [M, topk, I]: bf16, or mxfp4/mxfp8 with fused quant
  HostTensor preRound; // [M, topk, I] f32 values before output encoding
  /// Fused quant only: e8m0 scales by sorted position, [sortedRows, I/32]
  /// (e8m0Shuffle gives the kernel layout); rows of padding are 0.
  std::vector<uint8_t> sortedScales;
  std::vector<bool> sortedRowValid; // per sorted row
  std::vector<bool> pairRouted;     // per (token, slot) row of out
};

struct Stage2Result {
  HostTensor out;      // [M, K] in formats.output
  HostTensor preRound; // [M, K] f32 sums before output rounding
  HostTensor perSlot;  // [M, topk, K] f32 contributions, weights applied
};

/// Checks tensor formats and shapes against the spec; errors name the
/// tensor, the expected and the actual value.
llvm::Error verifyStage1Inputs(const MoeSpec &spec, const HostTensor &a1, const HostTensor &w1);
llvm::Error verifyStage2Inputs(const MoeSpec &spec, const HostTensor &a2, const HostTensor &w2);

llvm::Expected<Stage1Result> referenceStage1(const MoeSpec &spec, const HostTensor &a1,
                                             const MoeSorting &sorting, const HostTensor &w1,
                                             const RefOptions &opts = {});

/// The stage-2 A the kernels see: the fused stage-1 output as is, else the
/// bf16 output converted to formats.activation (MX: interQuantRounding).
llvm::Expected<HostTensor> stage2Input(const MoeSpec &spec, const Stage1Result &s1,
                                       const RefOptions &opts = {});

llvm::Expected<Stage2Result> referenceStage2(const MoeSpec &spec, const HostTensor &a2,
                                             const MoeSorting &sorting, const HostTensor &w2,
                                             const RefOptions &opts = {});

struct LayerResult {
  MoeSorting sorting;
  Stage1Result stage1;
  HostTensor a2;
  Stage2Result stage2;
};

/// stage 1 -> stage-2 input -> stage 2 on a given sorting (which the result
/// holds): referenceLayer after its sort.
llvm::Expected<LayerResult> referenceStages(const MoeSpec &spec, const HostTensor &a1,
                                            MoeSorting sorting, const HostTensor &w1,
                                            const HostTensor &w2, const RefOptions &opts = {});

/// sort (block = stage1 tile_m) -> stage 1 -> stage-2 input -> stage 2.
llvm::Expected<LayerResult> referenceLayer(const MoeSpec &spec, const HostTensor &a1,
                                           llvm::ArrayRef<int32_t> topkIds,
                                           llvm::ArrayRef<float> topkWeights, const HostTensor &w1,
                                           const HostTensor &w2, const RefOptions &opts = {});

/// The whole layer in f64 with no intermediate quantization: x [M, K] given
/// as values (e.g. the bf16 input before activation quantization), weights
/// decoded. Returns [M, K] values; the ideal against which error budgets of
/// the quantized pipeline are measured.
llvm::Expected<std::vector<double>> referenceLayerF64(const MoeSpec &spec, llvm::ArrayRef<double> x,
                                                      llvm::ArrayRef<int32_t> topkIds,
                                                      llvm::ArrayRef<float> topkWeights,
                                                      const HostTensor &w1, const HostTensor &w2);

} // namespace moegen::num

#endif // MOEGEN_RUNTIME_NUMERICS_REFERENCE_H
