//===- QuantPlan.h - The activation quantization kernel's plan --*- C++ -*-===//
//
// bf16 rows [R, C] -> MXFP4 (fp4x2, element 2j in the low nibble) or MXFP8
// (e4m3fn) with one e8m0 scale per 32 columns, scale rule RoundUp (the
// smallest power of two X with max_elem * X >= amax, as
// runtime/numerics/MxQuant.h defines it). One thread quantizes one 32-column
// block: the block's amax is thread-local, so the kernel needs no LDS and no
// cross-lane reduction. Thread i of the grid owns item i of the (row, block)
// items; threads past the last item (or past num_valid_ids[0] sorted rows)
// do nothing.
//
// Two layouts of the scales, both e8m0_shuffle of a [rows, C/32] matrix:
//   Rows    scale row = data row (token-major A, e.g. stage-1 A by token).
//   Sorted  rows are visited through sorted_token_ids; the data row is the
//           source row (token*topk + slot of a [T*topk, C] intermediate, or
//           token of [T, C]) and the scale row is the sorted position (stage-2
//           A of the non-fused a4w4/a8w4 path).
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEMPLATES_QUANT_QUANTPLAN_H
#define MOEGEN_TEMPLATES_QUANT_QUANTPLAN_H

#include "compiler/spec/Spec.h"
#include "compiler/spec/TargetInfo.h"
#include "templates/KernelSignature.h"
#include "templates/ScheduleIssue.h"

#include <array>
#include <optional>

namespace moegen {

enum class QuantScaleOrder : uint8_t { Rows, Sorted };

/// What a sorted id's (token, slot) names in the bf16 source.
enum class QuantSourceRows : uint8_t {
  Slots,  // row token*topk + slot of [T*topk, C]
  Tokens, // row token of [T, C]; every routed slot rewrites the same bytes
};

struct QuantPlan {
  DType format = DType::MXFP4; // MXFP4 or MXFP8
  /// carriesDecodedMx (TargetSupport.h): each value rounded to `format` is
  /// written as the bf16 it decodes to, rows of C bf16, and no scales.
  bool decoded = false;
  int64_t cols = 0;            // C, a multiple of 32
  QuantScaleOrder order = QuantScaleOrder::Rows;
  QuantSourceRows source = QuantSourceRows::Slots; // Sorted only
  int64_t topk = 1;                                // Sorted only
  int64_t experts = 0, blockM = 0;                 // Sorted only: sizes of the sorted ids
  int64_t threads = 256;
  /// Sorted only, sm_90a (interQuantCountsDown, templates/TargetSupport.h):
  /// a persistent grid whose workgroups take the sorted blocks in turn
  /// (block bid, bid + grid, ...), each once stage 1 has counted its
  /// stage_ready down to 1, and then take that 1 for stage 2
  /// (templates/gemm/StageReady.h); the kernel lets stage 2 launch at its
  /// start and waits for stage 1's grid at its exit.
  bool stageReady = false;
  /// stageReady: workgroups per SM of the persistent grid (of the
  /// maxWorkgroups a GEMM may have, kPersistentWorkgroupsPerCU per SM).
  static constexpr int64_t kStageReadyWorkgroupsPerSM = 2;

  static constexpr int64_t kBlock = 32;
  int64_t blocksPerRow() const { return cols / kBlock; }
  /// Bytes of one quantized row: C/2 for fp4, C for fp8, 2C decoded.
  int64_t rowBytes() const { return decoded ? 2 * cols : format == DType::MXFP4 ? cols / 2 : cols; }
  /// Column count of the shuffled scale matrix: ceil(C/32, 8).
  int64_t scaleCols() const { return (blocksPerRow() + 7) / 8 * 8; }

  /// Rows of the bf16 source and of the quantized data for `tokens` tokens.
  int64_t sourceRows(int64_t tokens) const {
    return order == QuantScaleOrder::Sorted && source == QuantSourceRows::Slots ? tokens * topk
                                                                                : tokens;
  }
  /// Rows the scales are indexed by: source rows, or sorted positions
  /// (sort's maxPaddedRows).
  int64_t scaleRows(int64_t tokens) const {
    return order == QuantScaleOrder::Rows ? tokens : tokens * topk + experts * blockM - topk;
  }
  /// Sorted blocks of blockM rows the scale rows hold (the stage_ready
  /// counters a stageReady kernel reads).
  int64_t sortedBlocks(int64_t tokens) const { return (scaleRows(tokens) + blockM - 1) / blockM; }
  /// Bytes of the scale buffer: rows padded to 256 (e8m0_shuffle); none
  /// decoded.
  int64_t scaleBytes(int64_t tokens) const {
    return decoded ? 0 : (scaleRows(tokens) + 255) / 256 * 256 * scaleCols();
  }
  /// Launch: {x, 1, 1} workgroups of `threads`, one thread per 32-column
  /// block of every scale row, for `tokens` tokens (`rows` of the Rows
  /// order); stageReady: at most kStageReadyWorkgroupsPerSM a CU of the
  /// `cuNum` (0: one a sorted block), none past the last sorted block.
  std::array<int64_t, 3> grid(int64_t tokens, int64_t cuNum = 0) const;
};

/// The kernel's symbol, unique per plan: "moe_quant_mxfp4_c3584",
/// "moe_quant_mxfp4_c384_sorted_k16", "moe_quant_mxfp8_c3584_sorted_tok_k16",
/// "moe_quant_mxfp4_c3584_bf16" (decoded), "moe_quant_mxfp4_c384_sorted_k16_bf16_ready_bm32"
/// (stageReady).
std::string quantKernelSymbol(const QuantPlan &plan);
/// Arguments: x, q, scales (not when decoded), then rows (Rows order) or
/// sorted_ids, num_valid_ids, stage_ready (stageReady), tokens (Sorted).

KernelSignature quantKernelSignature(llvm::StringRef symbol, const QuantPlan &plan);

/// The rules of a plan (family: the stage whose A it produces).
void checkQuantPlan(const QuantPlan &plan, KernelFamily family, const TargetInfo &target,
                    ScheduleIssues &issues);

/// Stage-1 A: the layer's bf16 input [T, model_dim] quantized token-major
/// (Rows order), when the activation format is MX. nullopt for bf16 A.
std::optional<QuantPlan> planInputQuant(const MoeSpec &spec, const TargetInfo &target,
                                        ScheduleIssues &issues);

/// Stage-2 A: the bf16 stage-1 output [T*topk, inter_dim] quantized with
/// scales by sorted position, when the activation format is MX and stage 1
/// does not quantize in its epilogue. nullopt otherwise.
std::optional<QuantPlan> planInterQuant(const MoeSpec &spec, const TargetInfo &target,
                                        ScheduleIssues &issues);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_QUANT_QUANTPLAN_H
