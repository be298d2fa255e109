//===- Sm90GemmPlan.h - The sm_90a GEMM's shared-memory plan ----*- C++ -*-===//
//
// The sm_90a build of the stage-1/stage-2 GEMM (Sm90GemmKernel.h) keeps the
// schedule's meaning -- tile_m x tile_n output tiles, nWaves warps splitting
// tile_n, k_wave warp groups and k_batch workgroups splitting K -- and the
// gfx950 rules (GemmPlan.h), and adds its own: warps of 32 lanes issue
// mma.sync m16n8k16 (bf16 in, f32 accumulators), so each warp's columns
// must be a multiple of 8, and its accumulators (4 f32 per 16x8 tile) must
// fit in registers.
//
// MXFP4 weights never pass through shared memory: each lane loads the fp4
// bytes of its fragments' weight rows straight into registers, `prefetch`
// super blocks (superK elements of K) ahead, and dequantizes them to bf16
// pairs right before its MMAs; only the A rows are staged (bf16, in the K
// order the register dequantization produces; A is always bf16 on sm_90a,
// where MX activations are carried decoded). Other weight formats stage A
// rows and weight rows, dequantized to bf16, one 32-wide K block (one MX scale
// block) at a time. Either way the staging lives in static shared memory
// (under 48 KiB), double-buffered where two buffers fit; after the main loop
// the same allocation holds the k_wave reduction. Two layouts go beyond it
// into dynamic shared memory: warpgroup MMAs (wgmma, 128-row tiles) and
// stage 2's N loop over a short K (loopN: every step's A rows staged at once).
// MLIR-free.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEMPLATES_GEMM_SM90GEMMPLAN_H
#define MOEGEN_TEMPLATES_GEMM_SM90GEMMPLAN_H

#include "compiler/spec/TargetInfo.h"
#include "templates/ScheduleIssue.h"

#include <cstdint>

namespace moegen {

struct GemmPlan;

struct Sm90GemmLayout {
  /// K elements staged per main-loop step: one MX scale block.
  static constexpr int64_t kChunk = 32;
  /// Bytes per staged row: 32 bf16 plus 16 bytes of padding, so the eight
  /// rows one fragment load touches fall in distinct shared-memory banks.
  static constexpr int64_t kRowStride = 80;
  /// An SM's shared memory, of which each resident block takes 1 KiB for the
  /// system (a block's own limits: TargetInfo::staticLdsBytes without the
  /// opt-in of dynamic shared memory, ldsBytes with it).
  static constexpr int64_t kSharedBytesPerSM = 228 * 1024;
  /// Accumulator registers a thread may hold (f32), beyond which the tile
  /// would spill.
  static constexpr int64_t kMaxAccRegs = 128;
  /// Steps of weight bytes in flight at most (register weights); fewer where
  /// they and the accumulators would exceed the register budget.
  static constexpr int64_t kMaxPrefetch = 3;
  /// Register weights: the warps per SM the kernel asks registers for (its
  /// minimum resident workgroups, `.minnctapersm`), and the registers a
  /// thread needs beside its accumulators and weights in flight (addresses,
  /// A fragments, decoding temporaries).
  static constexpr int64_t kTargetWarpsPerSM = 16;
  /// wgmma: two workgroups of one warpgroup (a warpgroup's accumulators are
  /// the M tile's: up to 128 registers a thread).
  static constexpr int64_t kWgmmaWarpsPerSM = 8;
  /// An SM's sub-partitions (warp schedulers): a schedule's waves_per_eu = N
  /// plans registers for N warps on each, as N waves per SIMD on gfx950.
  static constexpr int64_t kSubPartitions = 4;
  /// Workgroups of one or two warps: at most this many per SM (Hopper holds
  /// 32), each an M tile in flight of its own.
  static constexpr int64_t kMaxBlocksPerSM = 16;
  static constexpr int64_t kOtherRegs = 56;
  /// With waves_per_eu set, the main loop's registers beside accumulators
  /// and weights in flight: kBaseRegs and kRegsPerWeightRow per weight row of
  /// a warp (its decoding tables, addresses), which the prefetch depth leaves
  /// (without it, kOtherRegs).
  static constexpr int64_t kBaseRegs = 32;
  static constexpr int64_t kRegsPerWeightRow = 16;

  int64_t warpsN = 0; // warps splitting tile_n in a K-group
  /// A fused MX quantization whose 32-column blocks span two warps of 16
  /// columns: each block's amax meets through quantScratchBytes of shared
  /// memory (after the staging and the reduction) and a barrier of the pair.
  bool quantPairs = false;
  int64_t quantScratchBytes = 0;
  int64_t nPerWarp = 0; // output columns of one warp (per stage-1 half)
  int64_t mTiles = 0;   // 16-row MMA tiles per warp
  int64_t nTiles = 0;   // 8-column MMA tiles per warp and half
  int64_t accRegs = 0;  // f32 accumulators per thread
  /// MXFP4 weights dequantized in registers (no weight staging).
  bool registerWeights = false;
  /// Register weights with swapped operands: the dequantized weights are
  /// mma.sync's A operand (two 8-column tiles form its 16 rows, straight from
  /// the decoding into the fragment's registers) and the staged A rows its B
  /// operand, in 8-row tiles (one shared-memory read per tile and step, no
  /// register moves, and half the MMAs where a 16-row tile has at most 8
  /// routed rows). The epilogue gets the accumulators back in the plain
  /// layout through warp shuffles. Needs an even nTiles.
  bool swapAB = false;
  /// Whether the epilogue writes each row alone: not stage 1's fused
  /// quantization (block amaxes across a row's columns) nor its k_batch
  /// partials.
  bool rowWiseEpilogue = true;
  /// swapAB and rowWiseEpilogue on M tiles of at least
  /// kTransposedEpilogueMinRows rows: each 8x8 block is rounded to bf16
  /// pairs where the lane holds it and transposed by one movmatrix, instead
  /// of the f32 accumulators unswapped by two shuffles a value; and where a
  /// warp has 32 columns or more (stage 2: 16, two 8-row blocks together),
  /// a row's 8 columns a lane go out as one 16-byte store or packed
  /// reduction (a quad transpose of 4 shuffles).
  /// From 48 rows it measured 0.5-4.6% less time a layer at 2048-16384
  /// tokens; on the 32-row tiles of 16-1024 tokens -2.7% to +2% (ptxas
  /// spilling in some), so those keep the shuffles (docs/sm90a.md).
  bool transposedEpilogue = false;
  static constexpr int64_t kTransposedEpilogueMinRows = 48;
  /// Register weights (mma.sync): which of a lane's weight rows of a step
  /// decode their e2m1 codes by placing the code bits as bf16 and bf16
  /// products (Sm90GemmKernel::dequantWordArith: 2 integer operations a
  /// fragment word, the rest on the FMA pipe) rather than through the
  /// block's byte table (4 byte permutes and logic operations a fragment
  /// word, all on the integer pipe, which bounds the main loop at small M).
  /// weight_decode=mixed: the odd rows, with two products (every scale);
  /// weight_decode=arithmetic (allRowsArithmetic): every row, with one
  /// product (2^126 x the scale, exact for scales up to 2; a tile whose warps
  /// meet a larger one runs its K loop again for those blocks). Which is
  /// faster depends on the tile and the token count (docs/sm90a.md), so the
  /// tuner picks it per row.
  bool allRowsArithmetic = false;
  bool decodesArithmetically(int64_t row) const { return allRowsArithmetic || row % 2 == 1; }
  /// Register weights on warpgroup MMAs (M tiles of at least kWgmmaMinRows
  /// rows, tile_n a multiple of 64, one K-group): each warp decodes 16 weight
  /// columns, a warpgroup's 4 warps form the 64 rows of wgmma's register A
  /// operand, and the staged A rows (up to 256 of them) are its B operand,
  /// read by the tensor cores from shared memory in the core-matrix layout.
  /// The fp4 codes of the workgroup's weight rows are staged with them, in
  /// `buffers` stages of cp.async copies (no registers for codes in
  /// flight): a lane of a quad needs byte q of every code word (its fragment
  /// pairs), so it reads whole 16-byte blocks of its rows from shared memory.
  /// Only the scales are loaded ahead into registers. The accumulators are the
  /// swapAB layout with 16 columns per warp.
  static constexpr int64_t kWgmmaMinRows = 128;
  /// Stage 2's N loop (loopN) runs on warpgroup MMAs from this many rows,
  /// asking registers for kWgmmaLoopNWarpsPerSM warps an SM where a schedule
  /// leaves waves_per_eu at 0: two workgroups of tile_n 128 where their
  /// registers allow (at one, 64- and 80-row tiles took 1.2-1.3x the time).
  static constexpr int64_t kWgmmaLoopNMinRows = 64;
  static constexpr int64_t kWgmmaLoopNWarpsPerSM = 16;
  static constexpr int64_t kMaxStages = 4;
  bool wgmma = false;
  int64_t superK = 0;   // register weights: K per main-loop step (128, 64 or 32)
  int64_t prefetch = 0; // register weights: super blocks of weight bytes in flight
  /// Register weights over at most kMaxCarrySteps steps per K-group (stage 2
  /// of the examples): a tile's last trips load the first `prefetch` steps of
  /// the workgroup's next M tile, carried through the persistent loop, so
  /// that a tile does not start by waiting on its weights.
  static constexpr int64_t kMaxCarrySteps = 4;
  bool carryWeights = false;
  /// Stage 2 with carryWeights, one K-group and no split: a workgroup stages
  /// its M tile's A rows for all of K once (`buffers` = the steps, each in a
  /// buffer of its own) and loops over N tiles bidN, bidN + grid.x, ...: no
  /// barrier or copy in the K loops, the sorted rows read once per M tile,
  /// and the weights carried from N tile to N tile (GemmPlan::grid chooses
  /// grid.x by the token count). On warpgroup MMAs too: the weights then
  /// come to registers as register weights load them (no staged codes) and
  /// are decoded into wgmma's A fragments, and the A rows are staged in
  /// wgmma's core-matrix layout with K in the order of the lanes' codes.
  bool loopN = false;
  int64_t warpsPerSM = 0;     // register weights: resident warps the registers are planned for
  int64_t minBlocksPerSM = 0; // register weights: workgroups an SM must hold at once
  int64_t aRowBytes = 0;      // register weights: staged A row stride
  int64_t aRows = 0;          // staged A rows per K-group (tile_m)
  int64_t bRows = 0;          // staged weight rows per K-group (tile_n, twice in stage 1)
  int64_t stagingBytes = 0;   // per K-group and buffer (wgmma: A rows, then the weight codes)
  /// Staging buffers per K-group: 2 (one barrier per K block) or 1; wgmma:
  /// its stages; loopN: one per step.
  int64_t buffers = 0;
  /// wgmma with three stages or more: the next MX block is decoded while the
  /// wgmmas of one run (two blocks' fragments live).
  bool decodeAhead = false;
  /// Staging beyond the static 48 KiB (wgmma stages, loopN's steps, the
  /// buffer pair of register weights): dynamic shared memory, which each
  /// launch provides (KernelSignature::dynamicSharedBytes).
  bool dynamicShared = false;
  int64_t reductionBytes = 0; // k_wave > 1: every warp's accumulators
  int64_t sharedBytes = 0;    // the allocation: max of k_wave stagings and the reduction
};

/// The layout of `plan` on sm_90a (`target`); appends every sm_90a rule it
/// breaks.
Sm90GemmLayout planSm90Gemm(const GemmPlan &plan, const TargetInfo &target, ScheduleIssues &issues);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_GEMM_SM90GEMMPLAN_H
