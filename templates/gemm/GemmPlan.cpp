//===- GemmPlan.cpp - The MoE GEMM template's plan and rules --------------===//

#include "templates/gemm/GemmPlan.h"

#include "templates/TargetSupport.h"

#include "compiler/spec/DslParser.h"

#include "llvm/ADT/Hashing.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace moegen {

int64_t halfBytesPerElement(DType t) {
  switch (t) {
  case DType::MXFP4:
    return 1;
  case DType::MXFP8:
    return 2;
  case DType::BF16:
    return 4;
  case DType::F32:
    return 8;
  }
  return 8;
}

DType stageAFormat(const MoeSpec &spec, StageId, const TargetInfo &target) {
  return carriesDecodedMx(spec, target) ? DType::BF16 : spec.formats.activation;
}

int64_t GemmPlan::expectedMTiles(int64_t tokens, int64_t experts, int64_t topk) const {
  if (tokens <= 0 || experts <= 0 || topk <= 0 || sortBlockM <= 0)
    return 0;
  // Uniform routing: a token misses an expert with probability 1 - topk / E.
  double hit =
      double(experts) *
      (1.0 - std::pow(1.0 - double(std::min(topk, experts)) / double(experts), double(tokens)));
  double rows = double(tokens) * double(topk) / std::max(hit, 1.0);
  // A hit expert's rows padded to whole sorting blocks: about half a block
  // more than its rows where it has more than one.
  double blocks = std::max(1.0, rows / double(sortBlockM) + 0.5);
  // (Less a rounding error's worth: 16.000000000001 experts are 16.)
  return std::max<int64_t>(1, int64_t(std::ceil(hit * blocks - 1e-6)) * mTilesPerSortBlock);
}

std::array<int64_t, 3> GemmPlan::grid(int64_t sortBlocks, int64_t maxWorkgroups,
                                      int64_t expectedTiles) const {
  int64_t nTiles = n / schedule.tileN;
  // sm_90a workgroups of few warps: as many per SM as the kernel is planned
  // to keep resident (.minnctapersm), where that is more than the default.
  int64_t perCU = std::max(kPersistentWorkgroupsPerCU, sm90.minBlocksPerSM);
  int64_t capacity = maxWorkgroups / kPersistentWorkgroupsPerCU * perCU;
  int64_t maxY = std::max<int64_t>(1, gridM(sortBlocks));
  auto rowsFor = [&](int64_t gridN) {
    return std::clamp<int64_t>(capacity / std::max<int64_t>(1, gridN * schedule.kBatch), 1, maxY);
  };
  int64_t gridN = nTiles;
  if (sm90.loopN && expectedTiles > 0 && nTiles > 0) {
    // Each workgroup loops over nTiles / gridN N tiles of its M tiles, so
    // that it stages A once for them: the divisor of nTiles whose rounds of
    // M tiles (the expected ones, 10% more for the routing's spread) times
    // N tiles per M tile, plus one for the M tile's start, is least; the
    // most workgroups along N of those.
    int64_t best = -1;
    for (int64_t g = nTiles; g >= 1; --g) {
      if (nTiles % g != 0)
        continue;
      int64_t rounds = (expectedTiles * 11 / 10 + rowsFor(g) - 1) / rowsFor(g);
      int64_t cost = rounds * (nTiles / g + 1);
      if (best < 0 || cost < best) {
        best = cost;
        gridN = g;
      }
    }
  }
  return {gridN, rowsFor(gridN), schedule.kBatch};
}

int64_t occupancyCapLdsBytes(int64_t wavesPerEU, int64_t wavesPerWorkgroup,
                             const TargetInfo &target) {
  if (wavesPerEU <= 0 || wavesPerWorkgroup <= 0)
    return 0;
  // A workgroup's waves spread over the CU's SIMDs; at most this many
  // workgroups keep every SIMD at or below wavesPerEU waves.
  int64_t workgroups = std::max<int64_t>(1, wavesPerEU * target.simdsPerCU / wavesPerWorkgroup);
  // The smallest allocation of which only `workgroups` fit the CU's LDS.
  return target.ldsBytes / (workgroups + 1) + 1;
}

namespace {

struct Rules {
  KernelFamily family;
  ScheduleIssues &issues;
  void fail(const char *param, const std::string &msg) { issues.push_back({family, param, msg}); }
};

std::string str(int64_t v) { return std::to_string(v); }

/// The MFMA for an (A, B) format pair on gfx950, or nullopt if the template
/// has none. sm_90a plans with the same shapes (its mma.sync tiles divide
/// them) and takes bf16 A with mxfp8 weights too: A is carried decoded
/// there, and its kernel decodes mxfp8 weights as it does mxfp4.
std::optional<MfmaShape> selectMfma(DType a, DType b, const TargetInfo &target) {
  bool mxA = a == DType::MXFP4 || a == DType::MXFP8;
  bool mxB = b == DType::MXFP4 || b == DType::MXFP8;
  if (mxA && mxB)
    return MfmaShape{MfmaKind::ScaledF8F6F4_16x16x128, 16, 16, 128};
  // bf16 activations: weights are dequantized in registers to bf16, which is
  // exact for fp4 times an e8m0 power of two.
  if (a == DType::BF16 &&
      (b == DType::MXFP4 || b == DType::BF16 || (b == DType::MXFP8 && target.isNvptx())))
    return MfmaShape{MfmaKind::BF16_16x16x32, 16, 16, 32};
  return std::nullopt;
}

} // namespace

GemmPlan planGemm(const MoeSpec &spec, StageId stage, const TargetInfo &target,
                  ScheduleIssues &issues) {
  Rules r{gemmFamily(stage), issues};
  GemmPlan p;
  p.stage = stage;
  p.schedule = spec.stage(stage);
  const StageSchedule &s = p.schedule;
  p.aFormat = stageAFormat(spec, stage, target);
  p.bFormat = spec.formats.weight;
  p.k = spec.stageK(stage);
  p.n = spec.stageN(stage);
  const char *kName = stage == StageId::Stage1 ? "model_dim" : "inter_dim";

  // Formats.
  std::optional<MfmaShape> mfma = selectMfma(p.aFormat, p.bFormat, target);
  if (!mfma) {
    r.fail("formats", "activation_dtype=" + toString(spec.formats.activation).str() +
                          " with weight_dtype=" + toString(p.bFormat).str() +
                          " is not supported on " + target.chip +
                          " (supported: bf16, mxfp8 or mxfp4 activations with mxfp4 weights; "
                          "mxfp8 x mxfp8; bf16 x bf16)");
    mfma = MfmaShape{MfmaKind::BF16_16x16x32, 16, 16, 32};
  }
  p.mfma = *mfma;
  p.decodedOut = stage == StageId::Stage1 && s.fusedQuant != FusedQuant::None &&
                 carriesDecodedMx(spec, target);
  if (stage == StageId::Stage1 && s.fusedQuant != FusedQuant::None) {
    DType want = s.fusedQuant == FusedQuant::FP4 ? DType::MXFP4 : DType::MXFP8;
    if (spec.formats.activation != want)
      r.fail("fused_quant",
             "fused_quant=" + toString(s.fusedQuant).str() + " writes the intermediate as " +
                 toString(want).str() +
                 ", but stage2 reads activation_dtype=" + toString(spec.formats.activation).str());
  }

  // Tile shape against the MFMA shape.
  p.sortBlockM = spec.stage1.tileM;
  if (s.tileM % p.mfma.m != 0)
    r.fail("tile_m",
           "tile_m=" + str(s.tileM) + " is not a multiple of the MFMA M=" + str(p.mfma.m));
  else if (p.sortBlockM % s.tileM != 0)
    r.fail("tile_m", "tile_m=" + str(s.tileM) + " does not divide the sorting block of stage1 " +
                         "tile_m=" + str(p.sortBlockM) +
                         " (an M tile must read the rows of one expert)");
  else
    p.mTilesPerSortBlock = p.sortBlockM / s.tileM;
  if (s.tileN % p.mfma.n != 0)
    r.fail("tile_n",
           "tile_n=" + str(s.tileN) + " is not a multiple of the MFMA N=" + str(p.mfma.n));
  if (s.tileM > 256 || s.tileN > 256)
    r.fail("tile", "tile " + str(s.tileM) + "x" + str(s.tileN) +
                       " exceeds the template's 256x256 output tile");
  int64_t kAlign = std::lcm<int64_t>(32, p.mfma.k);
  if (s.tileK % kAlign != 0)
    r.fail("tile_k", "tile_k=" + str(s.tileK) + " is not a multiple of " + str(kAlign) +
                         " (the MX block of 32 and the MFMA K=" + str(p.mfma.k) + ")");
  if (p.n % s.tileN != 0)
    r.fail("tile_n", "tile_n=" + str(s.tileN) + " does not divide N=" + str(p.n) + " (" +
                         (stage == StageId::Stage1 ? "inter_dim" : "model_dim") + ")");

  // The weights' (16,16) preshuffle (runtime/numerics/Preshuffle.h): groups
  // of 16 rows, 16-byte chunks of K in pairs.
  int64_t weightRows = stage == StageId::Stage1 ? 2 * spec.problem.interDim : p.n;
  int64_t weightRowBytes = halfBytesPerElement(p.bFormat) * p.k / 2;
  if (weightRows % 16 != 0 || weightRowBytes % 32 != 0)
    r.fail(kName, "the " + toString(p.bFormat).str() + " weights are " + str(weightRows) +
                      " rows of " + str(weightRowBytes) +
                      " bytes; the (16,16) preshuffle needs rows in groups of 16 and row bytes "
                      "a multiple of 32 (" +
                      kName + "=" + str(p.k) + ")");

  // Split-K.
  p.kSlice = p.k / s.kBatch;
  p.kPerWave = p.kSlice / s.kWave;
  if (p.k % s.kBatch != 0) {
    r.fail("k_batch",
           "k_batch=" + str(s.kBatch) + " does not divide K=" + str(p.k) + " (" + kName + ")");
  } else if (p.kSlice % s.kWave != 0) {
    r.fail("k_wave", "k_wave=" + str(s.kWave) + " does not divide K/k_batch=" + str(p.k) + "/" +
                         str(s.kBatch) + "=" + str(p.kSlice));
  } else if (p.kPerWave % s.tileK != 0) {
    r.fail("tile_k", "K/(k_batch*k_wave)=" + str(p.k) + "/(" + str(s.kBatch) + "*" + str(s.kWave) +
                         ")=" + str(p.kPerWave) + " is not a multiple of tile_k=" + str(s.tileK));
  }
  p.kIterations = s.tileK > 0 ? p.kPerWave / s.tileK : 0;

  // Waves: up to 4 waves split tile_n (at least 16 columns each), k_wave
  // groups of them split K. On gfx950, where a wave's f32 accumulators would
  // take more than kAccumulatorRegisterBudget registers per lane, 2, 4, ...
  // waves also split tile_m, as far as the workgroup's thread limit allows
  // (128x256 in stage 1: 8 waves of 64x64 gate and 64x64 up).
  p.nWaves = std::clamp<int64_t>(s.tileN / 32, 1, 4);
  int64_t nPerWave = s.tileN / p.nWaves;
  int64_t halves = stage == StageId::Stage1 ? 2 : 1; // gate and up accumulators
  auto accRegisters = [&](int64_t rows) { return rows * nPerWave * halves / target.waveSize; };
  if (!target.isNvptx())
    while (accRegisters(s.tileM / p.mWaves) > kAccumulatorRegisterBudget &&
           s.tileM % (2 * p.mWaves * p.mfma.m) == 0 &&
           p.nWaves * 2 * p.mWaves * s.kWave * target.waveSize <= target.maxThreadsPerWorkgroup)
      p.mWaves *= 2;
  p.mPerWave = s.tileM / p.mWaves;
  p.waves = p.nWaves * p.mWaves * s.kWave;
  p.threads = p.waves * target.waveSize;
  if (p.threads > target.maxThreadsPerWorkgroup)
    r.fail("k_wave", "k_wave=" + str(s.kWave) + " with tile_n=" + str(s.tileN) + " needs " +
                         str(p.waves) + " waves (" + str(p.threads) +
                         " threads), over the workgroup limit of " +
                         str(target.maxThreadsPerWorkgroup));
  // The 32x32x64 scaled MFMA computes at the same rate from half the operand
  // registers per FLOP, at the price of more per-lane addressing. It pays
  // when a wave's output tile is large enough that operand registers limit
  // occupancy (a 128x32 tile per wave or more: bench/gfx950_static shows the
  // 16x16 form ahead below that). The tile_k rule above stays the 16x16x128
  // one, so both shapes accept every valid tile_k.
  if (p.mfma.kind == MfmaKind::ScaledF8F6F4_16x16x128 && p.mPerWave % 32 == 0 &&
      nPerWave % 32 == 0 && s.tileK % 128 == 0 && p.mPerWave * nPerWave >= 128 * 32)
    p.mfma = MfmaShape{MfmaKind::ScaledF8F6F4_32x32x64, 32, 32, 64};
  if (stage == StageId::Stage1 && s.fusedQuant != FusedQuant::None && nPerWave % 32 != 0)
    r.fail("fused_quant", "fused_quant=" + toString(s.fusedQuant).str() + " needs 32-column " +
                              "blocks per wave, but tile_n=" + str(s.tileN) + " gives " +
                              str(nPerWave) + " columns to each of " + str(p.nWaves) + " waves");
  if (stage == StageId::Stage2 && s.kBatch > 1 && s.reduce != ReduceMode::Atomic)
    r.fail("k_batch", "k_batch=" + str(s.kBatch) +
                          " splits K across workgroups, which only reduce=atomic combines; "
                          "use reduce=atomic or k_batch=1");
  if (s.wavesPerEU > target.maxWavesPerEU)
    r.fail("waves_per_eu",
           "waves_per_eu=" + str(s.wavesPerEU) + " exceeds " + str(target.maxWavesPerEU));

  if (!target.isNvptx() && s.weightDecode != WeightDecode::Mixed)
    r.fail("weight_decode", "weight_decode=" + toString(s.weightDecode).str() +
                                " chooses how sm_90a decodes MXFP4 weights; " + target.chip +
                                " multiplies them natively (leave it out)");
  if (!target.isNvptx() && s.prefetch != 0)
    r.fail("prefetch", "prefetch=" + str(s.prefetch) +
                           " sets how many K steps of MXFP4 weights sm_90a loads ahead into "
                           "registers; " +
                           target.chip + " has no such plan (leave it out)");
  if (target.isNvptx() && s.xcdSwizzle != 1)
    r.fail("xcd_swizzle", "xcd_swizzle=" + str(s.xcdSwizzle) +
                              " regroups workgroups over gfx950's XCDs; " + target.chip +
                              " has none (leave it out)");
  if (target.isNvptx()) {
    p.clearsLayerOutput = stage == StageId::Stage1 && spec.stage2.reduce == ReduceMode::Atomic;
    p.stageReady = stagesOverlap(spec, target);
    // The mma.sync kernel stages bf16 tiles of its own (Sm90GemmPlan.h).
    p.sm90 = planSm90Gemm(p, target, issues);
    p.ldsBytes = p.ldsAllocBytes = p.sm90.sharedBytes;
    p.waves = p.sm90.warpsN * s.kWave;
    p.threads = p.waves * target.waveSize;
    return p;
  }

  // LDS.
  p.aTileRowBytes = s.tileK * halfBytesPerElement(p.aFormat) / 2;
  p.ldsRowStride = p.aTileRowBytes + 16;
  p.ldsMainLoop = 2 * s.kWave * s.tileM * p.ldsRowStride;
  int64_t accPerWave = 64 * (p.mPerWave / 16) * (nPerWave / 16) * 4 * halves * 4;
  p.ldsReduction = s.kWave > 1 ? p.waves * accPerWave : 0;
  p.ldsBytes = std::max(p.ldsMainLoop, p.ldsReduction); // one allocation, reused
  if (p.ldsBytes > target.ldsBytes)
    r.fail("lds", "needs " + str(p.ldsBytes) + " bytes of LDS (double-buffered A tiles " +
                      str(p.ldsMainLoop) + ", k_wave reduction " + str(p.ldsReduction) +
                      "), over the " + str(target.ldsBytes) + "-byte limit of " + target.chip);
  p.ldsAllocBytes = std::max(p.ldsBytes, occupancyCapLdsBytes(s.wavesPerEU, p.waves, target));
  return p;
}

std::string gemmKernelSymbol(const MoeSpec &spec, const GemmPlan &p) {
  const StageSchedule &s = p.schedule;
  const Problem &pr = spec.problem;
  // The hash covers everything that changes the code besides the words.
  llvm::hash_code h = llvm::hash_combine(pr.modelDim, pr.interDim, pr.experts, pr.topk,
                                         pr.doweightStage1, printActivation(spec.activation),
                                         s.wavesPerEU, static_cast<int>(s.kBatchMode));
  std::string name = "moe_" + toString(p.stage).str() + "_" + precisionTag(spec.formats);
  if (p.stage == StageId::Stage1)
    name += pr.gateUp == GateUpLayout::Separated ? "_gguu" : "_gugu";
  name += "_t" + std::to_string(s.tileM) + "x" + std::to_string(s.tileN) + "x" +
          std::to_string(s.tileK) + "_kb" + std::to_string(s.kBatch) + "_kw" +
          std::to_string(s.kWave);
  if (p.stage == StageId::Stage1 && s.fusedQuant != FusedQuant::None)
    name += "_" + toString(s.fusedQuant).str();
  if (p.stage == StageId::Stage2)
    name += "_" + toString(s.reduce).str();
  if (s.weightDecode != WeightDecode::Mixed)
    name += "_dqa";
  if (s.prefetch != 0)
    name += "_pf" + std::to_string(s.prefetch);
  if (s.xcdSwizzle != 1)
    name += "_xcd" + std::to_string(s.xcdSwizzle);
  if (p.stage == StageId::Stage1 && spec.stage2.reduce != ReduceMode::Atomic)
    h = llvm::hash_combine(h, static_cast<int>(spec.stage2.reduce));
  // Whether the stages overlap depends on both schedules (stagesOverlap):
  // stage 1's k_batch, stage 2's wait.
  if (p.stageReady)
    h = llvm::hash_combine(h, llvm::StringRef("stage_ready"));
  char hex[17];
  snprintf(hex, sizeof(hex), "%08x", static_cast<uint32_t>(static_cast<size_t>(h)));
  return name + "_" + hex;
}

KernelSignature gemmKernelSignature(llvm::StringRef symbol, const MoeSpec &spec,
                                    const GemmPlan &p) {
  using K = KernelArgKind;
  KernelSignature sig{symbol.str(),
                      {{"a", K::Pointer},
                       {"a_scale", K::Pointer},
                       {"w", K::Pointer},
                       {"w_scale", K::Pointer},
                       {"sorted_ids", K::Pointer},
                       {"sorted_experts", K::Pointer},
                       {"sorted_weights", K::Pointer},
                       {"num_valid_ids", K::Pointer},
                       {"out", K::Pointer}},
                      p.threads};
  bool partials = p.stage == StageId::Stage1 && p.schedule.kBatch > 1;
  if (partials)
    sig.args.back().name = "partials";
  if (p.stage == StageId::Stage1) {
    sig.args.push_back({"out_scale", K::Pointer});
    if (p.clearsLayerOutput)
      sig.args.push_back({"clear_out", K::Pointer});
  }
  if (p.stageReady)
    sig.args.push_back({"stage_ready", K::Pointer});
  sig.args.push_back({"tokens", K::I32});
  if (p.sm90.dynamicShared)
    sig.dynamicSharedBytes = p.sm90.sharedBytes;
  return sig;
}

} // namespace moegen
