//===- Sm90GemmPlan.cpp - The sm_90a GEMM's shared-memory plan ------------===//

#include "templates/gemm/Sm90GemmPlan.h"

#include "templates/gemm/GemmPlan.h"

#include <algorithm>
#include <optional>
#include <string>

namespace moegen {

namespace {

/// Register weights: the workgroups of `warps` warps an SM holds for the
/// warps asked for (`warpsPerSM`), as far as its 64K registers hold them with
/// `loopRegs` registers a thread (accumulators and weights in flight) and
/// kOtherRegs more (at least 1, at most kMaxBlocksPerSM).
int64_t residentBlocks(int64_t loopRegs, int64_t warps, int64_t warpsPerSM) {
  warps = std::max<int64_t>(1, warps);
  int64_t need = loopRegs + Sm90GemmLayout::kOtherRegs;
  int64_t fit = 65536 / (need * warps * 32);
  return std::clamp<int64_t>(std::min(warpsPerSM / warps, fit), 1, Sm90GemmLayout::kMaxBlocksPerSM);
}

/// The shared memory a workgroup may take where `blocks` of them share an
/// SM (each also takes 1 KiB for the system), within the block's limit.
int64_t sharedPerBlock(int64_t blocks, const TargetInfo &target) {
  return std::min(target.ldsBytes, Sm90GemmLayout::kSharedBytesPerSM / blocks - 1024);
}

/// Register weights: the steps of weights in flight (1 to kMaxPrefetch, at
/// most `steps`) that the registers a thread has where `blocks` workgroups of
/// `warps` warps share an SM (255 at most) leave beside `loopRegs`, the
/// accumulators and the step being used, each step `stepRegs` registers.
int64_t prefetchSteps(int64_t blocks, int64_t warps, int64_t loopRegs, int64_t accRegs,
                      int64_t stepRegs, int64_t steps) {
  int64_t regs = std::min<int64_t>(255, 65536 / (blocks * warps * 32));
  int64_t budget = std::min(Sm90GemmLayout::kMaxAccRegs, regs - loopRegs);
  int64_t spare = std::max<int64_t>(0, budget - accRegs);
  return std::clamp<int64_t>(spare / std::max<int64_t>(1, stepRegs) - 1, 1,
                             std::min(Sm90GemmLayout::kMaxPrefetch, steps));
}

/// The widest main-loop step (register weights) that divides `kPerWave`; 0
/// for none.
int64_t widestStep(int64_t kPerWave) {
  for (int64_t w : {128, 64, 32})
    if (kPerWave % w == 0)
      return w;
  return 0;
}

} // namespace

Sm90GemmLayout planSm90Gemm(const GemmPlan &p, const TargetInfo &target, ScheduleIssues &issues) {
  const StageSchedule &s = p.schedule;
  KernelFamily family = gemmFamily(p.stage);
  auto fail = [&](const char *param, const std::string &msg) {
    issues.push_back({family, param, msg});
  };
  auto str = [](int64_t v) { return std::to_string(v); };
  Sm90GemmLayout l;
  bool stage1 = p.stage == StageId::Stage1;
  // A schedule's prefetch replaces the register plan's where weights are
  // loaded into registers step by step (register estimates cannot tell
  // which depth runs faster; the tuner measures it): 1 to
  // min(kMaxPrefetch, the K-group's steps).
  bool prefetchTaken = false;
  auto chosenPrefetch = [&](int64_t steps) {
    if (s.prefetch == 0)
      return;
    prefetchTaken = true;
    int64_t most = std::min(Sm90GemmLayout::kMaxPrefetch, steps);
    if (s.prefetch > most)
      fail("prefetch", "prefetch=" + str(s.prefetch) + " exceeds " + str(most) + ": at most " +
                           str(Sm90GemmLayout::kMaxPrefetch) +
                           " steps of weights in flight, and each K-group has " + str(steps) +
                           " step(s) of " + str(l.superK));
    else
      l.prefetch = s.prefetch;
  };
  int64_t halves = stage1 ? 2 : 1;
  l.registerWeights = p.bFormat == DType::MXFP4;
  // The warps per SM registers are planned for: waves_per_eu on each
  // sub-partition where a schedule sets it, else the kernel's own default.
  auto warpsAskedFor = [&](int64_t byDefault) {
    return s.wavesPerEU > 0 ? s.wavesPerEU * Sm90GemmLayout::kSubPartitions : byDefault;
  };
  // One warp per gfx950 wave; with register weights two, each taking half the
  // wave's columns, where those stay whole MMA tiles: half the accumulators
  // and weight registers per thread buy a deeper prefetch and twice the warps
  // per SM. A fused quantization's 32-column MX blocks then lie within a warp
  // or, at 16 columns per warp, across a pair of warps (quantPairs). Stage 2
  // keeps one warp per wave where the SM still holds the warps asked for:
  // each of a warp's staged-row fragments then feeds two MMAs instead of one
  // (stage 1's gate and up halves do that already), half the shared-memory
  // reads per MMA (docs/sm90a.md).
  l.warpsPerSM = warpsAskedFor(Sm90GemmLayout::kTargetWarpsPerSM);
  auto wholeWavesHoldSM = [&] {
    if (stage1 || p.nWaves <= 0 || s.tileN % (8 * p.nWaves) != 0)
      return false;
    int64_t tiles = s.tileN / p.nWaves / 8, step = widestStep(p.kPerWave);
    int64_t warps = p.nWaves * s.kWave;
    int64_t acc = s.tileM / 16 * tiles * 4, stepRegs = tiles * (step / 32 + 1);
    return acc <= Sm90GemmLayout::kMaxAccRegs &&
           residentBlocks(acc + 2 * stepRegs, warps, l.warpsPerSM) * warps >= l.warpsPerSM;
  };
  l.warpsN = p.nWaves;
  // (With k_batch > 1 stage 1 writes f32 partials; finish quantizes.)
  bool fusedQuant = stage1 && s.fusedQuant != FusedQuant::None && s.kBatch == 1;
  // Stage 2 over a short K on warpgroup MMAs, looping over its N tiles
  // (loopN): the weights in registers as register weights load them, carried
  // from N tile to N tile, and the M tile's rows for all of K staged once,
  // where they fit the shared memory of the workgroups an SM holds. From
  // kWgmmaLoopNMinRows rows (wgmma's N: a multiple of 8, 16-row tiles here).
  struct WgmmaLoopN {
    int64_t step, steps, warpsPerSM, minBlocks, stepRegs;
  };
  auto wgmmaLoopN = [&]() -> std::optional<WgmmaLoopN> {
    int64_t step = widestStep(p.kPerWave);
    if (stage1 || !l.registerWeights || s.kWave != 1 || s.kBatch != 1 || s.tileN % 64 != 0 ||
        s.tileM % 16 != 0 || s.tileM < Sm90GemmLayout::kWgmmaLoopNMinRows || step == 0 ||
        p.kPerWave / step > Sm90GemmLayout::kMaxCarrySteps ||
        (s.tileM < Sm90GemmLayout::kWgmmaMinRows && s.weightDecode != WeightDecode::Mixed))
      return std::nullopt;
    int64_t warps = s.tileN / 16, acc = s.tileM / 2, stepRegs = 2 * (step / 32 + 1);
    int64_t warpsPerSM = warpsAskedFor(Sm90GemmLayout::kWgmmaLoopNWarpsPerSM);
    int64_t minBlocks = residentBlocks(acc + 2 * stepRegs, warps, warpsPerSM);
    if (p.kPerWave / step * s.tileM * 2 * step > sharedPerBlock(minBlocks, target))
      return std::nullopt;
    return WgmmaLoopN{step, p.kPerWave / step, warpsPerSM, minBlocks, stepRegs};
  };
  std::optional<WgmmaLoopN> loopNOnWgmma = wgmmaLoopN();
  l.wgmma = loopNOnWgmma || (l.registerWeights && s.kWave == 1 &&
                             s.tileM >= Sm90GemmLayout::kWgmmaMinRows && s.tileN % 64 == 0);
  if (l.wgmma) {
    l.warpsN = s.tileN / 16;
    l.quantPairs = fusedQuant;
  } else if (l.registerWeights && p.nWaves > 0 && s.tileN % (16 * p.nWaves) == 0 &&
             !wholeWavesHoldSM()) {
    int64_t perWarp = s.tileN / (2 * p.nWaves);
    if (!fusedQuant || perWarp % 32 == 0 || perWarp == 16) {
      l.warpsN = 2 * p.nWaves;
      l.quantPairs = fusedQuant && perWarp == 16;
    }
  }
  if (l.warpsN > 0 && s.tileN % l.warpsN == 0)
    l.nPerWarp = s.tileN / l.warpsN;
  if (l.nPerWarp == 0 || l.nPerWarp % 8 != 0)
    fail("tile_n", "tile_n=" + str(s.tileN) + " over " + str(l.warpsN) +
                       " warps is not a multiple of the mma.sync N=8 per warp on sm_90a");
  l.mTiles = s.tileM / 16;
  l.nTiles = l.nPerWarp / 8;
  l.accRegs = l.mTiles * l.nTiles * 4 * halves;
  if (l.accRegs > Sm90GemmLayout::kMaxAccRegs)
    fail("tile", "tile " + str(s.tileM) + "x" + str(s.tileN) + " gives each of " + str(l.warpsN) +
                     " warps " + str(l.accRegs) + " f32 accumulators, over the " +
                     str(Sm90GemmLayout::kMaxAccRegs) +
                     " registers the sm_90a mma.sync kernel keeps per thread");
  l.aRows = s.tileM;
  l.swapAB = l.registerWeights && l.nTiles % 2 == 0;
  l.rowWiseEpilogue = !(stage1 && (s.kBatch > 1 || s.fusedQuant != FusedQuant::None));
  l.transposedEpilogue =
      l.swapAB && l.rowWiseEpilogue && s.tileM >= Sm90GemmLayout::kTransposedEpilogueMinRows;
  l.allRowsArithmetic = s.weightDecode == WeightDecode::Arithmetic;
  if (l.allRowsArithmetic && (!l.registerWeights || l.wgmma))
    fail("weight_decode",
         "weight_decode=arithmetic decodes MXFP4 weights in the registers of mma.sync warps; "
         "this stage's " +
             std::string(!l.registerWeights ? "weights are not MXFP4"
                                            : "tile (" + str(s.tileM) +
                                                  " rows, tile_n a multiple of 64, k_wave 1) "
                                                  "runs on warpgroup MMAs") +
             " (use weight_decode=mixed)");
  const int64_t limit = target.staticLdsBytes;
  // One f32 amax per row and warp of a quantizing pair.
  l.quantScratchBytes = l.quantPairs ? s.tileM * l.warpsN * 4 : 0;
  if (l.wgmma) {
    // A stage: the A rows (bf16) and the fp4 codes of the workgroup's weight
    // rows of one step, in as many stages (up to kMaxStages) as the shared
    // memory of the workgroups an SM holds allows: dynamic shared memory
    // beyond 48 KiB. Steps of two MX blocks (one barrier per 64 of K) where
    // they leave three stages, else of one.
    int64_t rows = l.nTiles * halves;
    if (loopNOnWgmma) {
      const WgmmaLoopN &n = *loopNOnWgmma;
      l.loopN = l.carryWeights = true;
      l.superK = n.step;
      l.aRowBytes = 2 * n.step;
      l.stagingBytes = s.tileM * 2 * n.step;
      l.buffers = n.steps;
      l.warpsPerSM = n.warpsPerSM;
      l.minBlocksPerSM = n.minBlocks;
      l.prefetch = prefetchSteps(n.minBlocks, l.warpsN, Sm90GemmLayout::kOtherRegs, l.accRegs,
                                 n.stepRegs, n.steps);
      chosenPrefetch(n.steps);
    } else {
      l.warpsPerSM = warpsAskedFor(Sm90GemmLayout::kWgmmaWarpsPerSM);
      for (int64_t w : {64, 32}) {
        if (p.kPerWave % w != 0)
          continue;
        int64_t blocks = w / Sm90GemmLayout::kChunk;
        // Registers per weight row: 8 decoded words (this block's and the
        // next's) and a scale per block and stage.
        int64_t minBlocks = residentBlocks(
            l.accRegs + rows * (8 + Sm90GemmLayout::kMaxStages * blocks), l.warpsN, l.warpsPerSM);
        int64_t budget = sharedPerBlock(minBlocks, target);
        int64_t staging = s.tileM * 2 * w + halves * s.tileN * w / 2;
        int64_t stages =
            std::min((budget - l.quantScratchBytes) / staging, Sm90GemmLayout::kMaxStages);
        if (stages < (w == 32 ? 2 : 3))
          continue;
        l.superK = w;
        l.aRowBytes = 2 * w;
        l.stagingBytes = staging;
        l.buffers = stages;
        l.minBlocksPerSM = minBlocks;
        break;
      }
      if (p.kPerWave % 32 != 0)
        fail("k_wave", "each K-group's " + str(p.kPerWave) +
                           " elements of K are not a multiple of 32 (one MX block)");
      else if (l.superK == 0)
        fail("lds", "two stages of " + str(s.tileM) + " A rows and " + str(halves * s.tileN) +
                        " weight rows, 32 wide, exceed the shared memory of the sm_90a wgmma GEMM");
      l.decodeAhead = l.buffers >= 3;
      // The scales of the stages in flight stay in registers.
      l.prefetch = l.buffers - 1;
    }
  } else if (l.registerWeights) {
    // The widest main-loop step that divides a K-group's range; each lane of
    // a quad takes a quarter of it (16 fp4 bytes at 128).
    l.superK = widestStep(p.kPerWave);
    if (l.superK == 0)
      fail("k_wave", "each K-group's " + str(p.kPerWave) +
                         " elements of K are not a multiple of 32 (one MX block)");
    // Staged A rows in 16-byte groups of 8 elements: one group more than a
    // row holds (none at 32 wide, 4 groups) puts the 8 lanes of a 128-bit
    // read phase in distinct banks (with the kernel's swizzle at 128).
    l.aRowBytes = 16 * (l.superK == 32 ? 4 : l.superK / 8 + 1);
    l.stagingBytes = l.aRows * l.aRowBytes;
    // (At least 1: a schedule that splits K away entirely fails other rules.)
    int64_t superBlocks = std::max<int64_t>(1, l.superK ? p.kPerWave / l.superK : 1);
    // Weight bytes in flight share the accumulators' register budget; a
    // step's codes stay live while the next `prefetch` steps' arrive. Per
    // weight row and step: superK / 32 words of codes and a scale.
    int64_t stepRegs = l.nTiles * halves * (l.superK / 32 + 1);
    // Workgroups resident per SM for the warps asked for (waves_per_eu = N:
    // N warps on each of the SM's 4 sub-partitions, as N waves per SIMD on
    // gfx950; 0: kTargetWarpsPerSM), as far as the 64K registers of an SM
    // hold them with one step of weights in flight (at most kMaxBlocksPerSM;
    // the persistent grid launches as many per SM, GemmPlan::grid).
    int64_t warps = std::max<int64_t>(1, l.warpsN * s.kWave);
    l.minBlocksPerSM = residentBlocks(l.accRegs + 2 * stepRegs, warps, l.warpsPerSM);
    // Registers for the main loop beside accumulators and weights in
    // flight: with an occupancy asked for (waves_per_eu), what its weight rows
    // need (their decoding tables and addresses, by ptxas's counts), so the
    // prefetch does not spill; by default kOtherRegs, which spills a few
    // registers on the examples and measured faster at 16 warps per SM.
    int64_t weightRows = l.nTiles * halves;
    int64_t loopRegs = s.wavesPerEU > 0 ? Sm90GemmLayout::kBaseRegs +
                                              Sm90GemmLayout::kRegsPerWeightRow * weightRows
                                        : Sm90GemmLayout::kOtherRegs;
    l.prefetch = prefetchSteps(l.minBlocksPerSM, warps, loopRegs, l.accRegs, stepRegs, superBlocks);
    chosenPrefetch(superBlocks);
    l.carryWeights = superBlocks <= Sm90GemmLayout::kMaxCarrySteps;
    // Stage 2 over a short K: the M tile's A rows for the whole K range stay
    // staged while the workgroup loops over its N tiles (loopN), where they
    // fit the shared memory of the workgroups an SM holds.
    int64_t resident = superBlocks * l.stagingBytes;
    bool fits = resident <= limit || resident <= sharedPerBlock(l.minBlocksPerSM, target);
    if (!stage1 && l.carryWeights && s.kWave == 1 && s.kBatch == 1 && fits) {
      l.loopN = true;
      l.buffers = superBlocks;
    }
  } else {
    l.bRows = halves * s.tileN;
    l.stagingBytes = (l.aRows + l.bRows) * Sm90GemmLayout::kRowStride;
  }
  if (s.prefetch != 0 && !prefetchTaken)
    fail("prefetch", "prefetch=" + str(s.prefetch) +
                         " sets the steps of MXFP4 weights loaded ahead into registers; this "
                         "stage's " +
                         std::string(!l.registerWeights ? "weights are not MXFP4"
                                                        : "wgmma tile stages its weight codes "
                                                          "through shared memory") +
                         " (leave it out)");
  int64_t warps = l.warpsN * s.kWave;
  l.reductionBytes = s.kWave > 1 ? warps * l.accRegs * 32 * 4 : 0;
  // Two staging buffers where they fit: a K block is staged while the warps
  // still read the previous one, one barrier per block instead of two. With
  // register weights and one K-group the pair may take dynamic shared memory
  // beyond the static 48 KiB, as far as the SM's resident workgroups leave
  // (tiles from 96 rows: 26112 bytes a buffer at 128 wide). (k_wave > 1
  // keeps one buffer there, as its tuned rows were measured.)
  bool dynamicPair = false;
  if (!l.wgmma && !l.loopN) {
    int64_t pair = 2 * s.kWave * l.stagingBytes + l.quantScratchBytes;
    dynamicPair = l.registerWeights && s.kWave == 1 && pair > limit &&
                  pair <= sharedPerBlock(l.minBlocksPerSM, target);
    l.buffers = pair <= limit || dynamicPair ? 2 : 1;
  }
  int64_t staging = l.buffers * s.kWave * l.stagingBytes;
  l.sharedBytes = std::max(staging, l.reductionBytes) + l.quantScratchBytes;
  l.dynamicShared = (l.wgmma || l.loopN || dynamicPair) && l.sharedBytes > limit;
  if (!l.dynamicShared && l.sharedBytes > limit)
    fail("lds", "needs " + str(l.sharedBytes) + " bytes of shared memory (bf16 staging of " +
                    str(s.kWave) + " K-group(s) x " + str(l.stagingBytes) + ", k_wave reduction " +
                    str(l.reductionBytes) + ", quantization scratch " + str(l.quantScratchBytes) +
                    "), over the " + str(limit) + "-byte static shared memory of the sm_90a GEMM");
  return l;
}

} // namespace moegen
