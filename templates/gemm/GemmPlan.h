//===- GemmPlan.h - The MoE GEMM template's plan and rules ------*- C++ -*-===//
//
// Stage 1 and stage 2 share one GEMM main-loop template: rows gathered through
// the sorted token ids, MX (or bf16) A tiles staged in LDS, preshuffled weights
// read straight into registers, MFMA accumulation, split-K across workgroups
// (k_batch) and across waves (k_wave). The plan holds every constant the
// kernel builder derives from a schedule; `planGemm` also checks the rules, so
// the verifier, a tuner's enumeration and codegen ask the same code.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEMPLATES_GEMM_GEMMPLAN_H
#define MOEGEN_TEMPLATES_GEMM_GEMMPLAN_H

#include "compiler/spec/Spec.h"
#include "compiler/spec/TargetInfo.h"
#include "templates/KernelSignature.h"

#include "templates/ScheduleIssue.h"
#include "templates/gemm/Sm90GemmPlan.h"

#include <algorithm>
#include <array>

namespace moegen {

enum class MfmaKind : uint8_t {
  ScaledF8F6F4_16x16x128, // v_mfma_scale_f32_16x16x128_f8f6f4 (MX A and B)
  ScaledF8F6F4_32x32x64,  // v_mfma_scale_f32_32x32x64_f8f6f4: same rate, half the operand
                          // registers per FLOP; chosen for waves with 128x32 outputs or more
  BF16_16x16x32,          // v_mfma_f32_16x16x32_bf16 (bf16 A, weights dequantized to bf16)
};

struct MfmaShape {
  MfmaKind kind;
  int64_t m, n, k;
};

struct GemmPlan {
  StageId stage;
  StageSchedule schedule;
  DType aFormat, bFormat;
  MfmaShape mfma;
  int64_t k = 0;           // the stage's reduction length
  int64_t n = 0;           // output columns (stage 1: per gate and per up half)
  int64_t kSlice = 0;      // K per workgroup = k / k_batch
  int64_t kPerWave = 0;    // K per wave group = kSlice / k_wave
  int64_t kIterations = 0; // main-loop trips = kPerWave / tile_k
  int64_t nWaves = 0;      // waves splitting tile_n
  int64_t mWaves = 1;      // waves splitting tile_m (gfx950 only; 1 on sm_90a)
  int64_t mPerWave = 0;    // tile_m / mWaves: the rows of one wave
  int64_t waves = 0;       // nWaves * mWaves * k_wave
  int64_t threads = 0;     // waves * 64
  // A tiles in LDS: each K-group stages tile_m rows of tile_k elements
  // (aTileRowBytes each, rows padded to ldsRowStride against bank conflicts),
  // twice (ping/pong: one is read while the next is loaded).
  int64_t aTileRowBytes = 0, ldsRowStride = 0;
  // LDS use in bytes: the A tiles, then (after the main loop) the k_wave
  // reduction scratch in the same allocation.
  int64_t ldsMainLoop = 0, ldsReduction = 0, ldsBytes = 0;
  // What the kernel allocates: ldsBytes, padded so that at most waves_per_eu
  // waves per SIMD fit a CU (aiter's occupancy cap; a register budget would
  // spill instead). Equal to ldsBytes without a cap.
  int64_t ldsAllocBytes = 0;
  // The sorting kernel pads each expert's rows to blocks of stage 1's tile_m
  // (aiter's block_m) and records one expert per block. Stage 2 may cut a
  // sorted block into several M tiles (aiter's sort_block_m), never the
  // other way round: an M tile reads exactly one expert.
  int64_t sortBlockM = 0;
  int64_t mTilesPerSortBlock = 1;
  /// Stage 1 zeroes the layer's output (its `clear_out` argument, after its
  /// M tiles) for an atomic stage 2 to add into: one launch (a memset) less
  /// per call. sm_90a only: gfx950 keeps the memset, which its latency model
  /// times as one launch (the clear's per-thread loop it cannot bound).
  bool clearsLayerOutput = false;
  /// Stage 1's fused quantization writes the decoded values, bf16 rows of
  /// inter_dim, and no scales (carriesDecodedMx, templates/TargetSupport.h).
  bool decodedOut = false;
  /// sm_90a, stagesOverlap (templates/TargetSupport.h): the kernel's
  /// stage_ready argument, a counter per sorted block that the sort sets to
  /// stageReadyCount (stage 1's N tiles, plus one for an inter-stage
  /// quantization). Stage 1 clears the layer output first
  /// (clearsLayerOutput), lets the next kernel launch, and takes from a
  /// block's counter the N tiles it has written of it; stage 2 waits for
  /// zero there (the quantization's pass included) before it reads the
  /// block's rows, and for the kernel before it before it exits
  /// (StageReady.h).
  bool stageReady = false;
  /// sm_90a only (planSm90Gemm): the mma.sync kernel's shared-memory plan;
  /// ldsBytes and ldsAllocBytes are its sharedBytes there.
  Sm90GemmLayout sm90;

  /// Workgroups along M (grid.y) for `sortBlocks` sorted blocks: one per M
  /// tile, the worst case.
  int64_t gridM(int64_t sortBlocks) const { return sortBlocks * mTilesPerSortBlock; }
  /// Launch: {n / tile_n, Y, k_batch}. The kernel is persistent over M (each
  /// workgroup row loops over the M tiles in use with grid.y as its step), so
  /// Y may be anything from 1 to gridM: gridM capped so that the whole grid
  /// stays within `maxWorkgroups`, instead of up to experts x tiles
  /// workgroups that mostly find no rows at small token counts.
  /// With sm90.loopN, grid.x is a divisor of n / tile_n chosen for
  /// `expectedTiles` M tiles in use (expectedMTiles; 0: n / tile_n).
  std::array<int64_t, 3> grid(int64_t sortBlocks, int64_t maxWorkgroups,
                              int64_t expectedTiles = 0) const;
  /// The M tiles in use at `tokens` tokens routed uniformly to `topk` of
  /// `experts` experts (0 for no tokens).
  int64_t expectedMTiles(int64_t tokens, int64_t experts, int64_t topk) const;
};

/// xcd_swizzle = `groups` (gfx950): the tile index that the workgroup of
/// dispatch index `id` (x + grid.x (y + grid.y z)) of `count` computes.
/// gfx950 hands workgroup i to XCD i mod 8, each XCD with its own L2; the
/// workgroups of one residue mod `groups` get consecutive tile indices (with
/// 8 groups, each XCD its own run of them). The GEMM kernels read a tile
/// index t as M row t mod grid.y, N tile (t / grid.y) mod grid.x and K split
/// t / (grid.x grid.y): an XCD's workgroups walk the M tiles of few N tiles,
/// whose weights its L2 then keeps. A bijection of [0, count) for any count
/// and groups >= 1 (the first count mod groups residues get one index more).
inline int64_t xcdSwizzledId(int64_t id, int64_t count, int64_t groups) {
  int64_t group = id % groups, perGroup = count / groups, longer = count % groups;
  return group * perGroup + std::min(group, longer) + id / groups;
}

/// Workgroups per CU of a persistent GEMM grid: enough to keep a CU busy
/// while one of them waits on memory (aiter's persistent kernels launch 1-4 x
/// cu_num).
inline constexpr int64_t kPersistentWorkgroupsPerCU = 4;

/// Bytes of one element of an A or B format (fp4 = 0.5 byte, counted in halves).
int64_t halfBytesPerElement(DType t);

/// The A format of a stage's GEMM: the activation dtype (stage 2 reads stage
/// 1's output, quantized to the same dtype), or bf16 where the target
/// carries MX activations decoded (carriesDecodedMx).
DType stageAFormat(const MoeSpec &spec, StageId stage, const TargetInfo &target);

/// "moe_stage1_a4w4_separated_t32x32x256_kb1_kw2_fp4_<hash>": schedule and
/// formats in words, the problem and activation folded into a short hash.
std::string gemmKernelSymbol(const MoeSpec &spec, const GemmPlan &plan);

KernelSignature gemmKernelSignature(llvm::StringRef symbol, const MoeSpec &spec,
                                    const GemmPlan &plan);

/// LDS bytes per workgroup that cap occupancy at `wavesPerEU` waves per SIMD
/// for workgroups of `wavesPerWorkgroup` waves (0 = no cap): aiter FlyDSL's
/// waves_per_eu. It caps occupancy without a register budget, so it cannot
/// make a kernel spill.
int64_t occupancyCapLdsBytes(int64_t wavesPerEU, int64_t wavesPerWorkgroup,
                             const TargetInfo &target);

/// f32 accumulator registers per lane above which planGemm splits tile_m
/// across waves on gfx950: the rest of a lane's registers must hold the A
/// and the pipelined B operands and the epilogue.
inline constexpr int64_t kAccumulatorRegisterBudget = 128;

/// Plans the GEMM of `stage` and appends every rule the spec breaks.
GemmPlan planGemm(const MoeSpec &spec, StageId stage, const TargetInfo &target,
                  ScheduleIssues &issues);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_GEMM_GEMMPLAN_H
