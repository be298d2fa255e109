//===- Sm90aTargetTest.cpp - The sm_90a target model and its refusals ------===//

#include "compiler/spec/DslParser.h"
#include "compiler/spec/TargetInfo.h"
#include "templates/LayerPlan.h"
#include "templates/LayerRules.h"
#include "templates/TargetSupport.h"
#include "templates/gemm/GemmPlan.h"
#include "templates/quant/QuantPlan.h"
#include "test/unit/spec/SpecFixtures.h"

#include <gtest/gtest.h>

#include <random>

using namespace moegen;
using moegen::test::smallSpec;

namespace {

/// The sm_90a plan of `stage`; a test failure names any rule it breaks.
GemmPlan planSm90(const MoeSpec &spec, StageId stage) {
  ScheduleIssues issues;
  GemmPlan p = planGemm(spec, stage, *TargetInfo::forChip("sm_90a"), issues);
  EXPECT_TRUE(issues.empty()) << (issues.empty() ? "" : issues.front().str());
  return p;
}

/// `small` with bf16 activations and no fused quantization.
MoeSpec bf16Spec() {
  MoeSpec spec = smallSpec();
  spec.formats.activation = DType::BF16;
  spec.stage1.fusedQuant = FusedQuant::None;
  return spec;
}

/// bf16Spec() with Kimi-K3's shape.
MoeSpec kimiBf16Spec() {
  MoeSpec spec = bf16Spec();
  spec.problem.modelDim = 3584;
  spec.problem.interDim = 384;
  spec.problem.experts = 896;
  spec.problem.topk = 16;
  return spec;
}

TEST(Sm90aTarget, HasHopperLimits) {
  std::optional<TargetInfo> t = TargetInfo::forChip("sm_90a");
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(t->isNvptx());
  EXPECT_EQ(t->waveSize, 32);
  EXPECT_EQ(t->ldsBytes, 227 * 1024);
  // Static shared memory (the templates' workgroup buffers) stops at 48 KiB;
  // gfx950 has no such split.
  EXPECT_EQ(t->staticLdsBytes, 48 * 1024);
  EXPECT_EQ(TargetInfo::defaultTarget().staticLdsBytes, TargetInfo::defaultTarget().ldsBytes);
  EXPECT_EQ(t->maxThreadsPerWorkgroup, 1024);
  EXPECT_EQ(t->triple(), "nvptx64-nvidia-cuda");
  EXPECT_EQ(t->codeObjectExtension(), "ptx");
  EXPECT_FALSE(TargetInfo::forChip("gfx950")->isNvptx());
  // Plain sm_90 lacks wgmma/setmaxnreg, which the GEMMs will need.
  EXPECT_FALSE(TargetInfo::forChip("sm_90").has_value());
  auto e = TargetInfo::get("sm_100a");
  ASSERT_FALSE(bool(e));
  EXPECT_EQ(llvm::toString(e.takeError()),
            "unsupported target chip 'sm_100a'; moegen generates gfx950, sm_90a");
}

TEST(Sm90aTarget, EveryFamilyHasATemplate) {
  TargetInfo sm90 = *TargetInfo::forChip("sm_90a");
  for (KernelFamily f : allKernelFamilies()) {
    EXPECT_TRUE(hasTemplateFor(f, sm90)) << toString(f).str();
    EXPECT_TRUE(hasTemplateFor(f, TargetInfo::defaultTarget())) << toString(f).str();
  }
  EXPECT_EQ(familiesWithTemplates(sm90), "sort_count, sort_scan, sort, quant_input, stage1, "
                                         "finish, quant_inter, stage2, reduce");
}

TEST(Sm90aTarget, VerifierAcceptsTheWholeLayer) {
  TargetInfo sm90 = *TargetInfo::forChip("sm_90a");
  ScheduleIssues issues = checkLayer(smallSpec(), sm90);
  for (const ScheduleIssue &i : issues)
    ADD_FAILURE() << i.str();
  EXPECT_TRUE(checkLayer(smallSpec(), TargetInfo::defaultTarget()).empty());
}

TEST(Sm90aTarget, VerifierAcceptsPortedFamiliesAlone) {
  TargetInfo sm90 = *TargetInfo::forChip("sm_90a");
  EXPECT_TRUE(checkLayer(smallSpec(), sm90, {KernelFamily::QuantInput}).empty());
  EXPECT_TRUE(checkLayer(smallSpec(), sm90,
                         {KernelFamily::SortCount, KernelFamily::SortScan, KernelFamily::Sort})
                  .empty());
  EXPECT_TRUE(
      checkLayer(smallSpec(), sm90, {KernelFamily::QuantInput, KernelFamily::Stage2}).empty());
}

TEST(Sm90aTarget, RulesPlanAgainstTheHopperSharedMemory) {
  // The sort's scatter keeps per-expert counters in LDS: 60000 experts fit
  // neither 160 KiB (gfx950) nor the 227 KiB of shared memory a block has
  // on sm_90a, and the message names each chip's own limit.
  MoeSpec spec = smallSpec();
  spec.problem.experts = 60000;
  auto text = [](const ScheduleIssues &issues) {
    std::string all;
    for (const ScheduleIssue &i : issues)
      all += i.str() + "\n";
    return all;
  };
  std::string sm90 = text(checkLayer(spec, *TargetInfo::forChip("sm_90a")));
  std::string gfx = text(checkLayer(spec, TargetInfo::defaultTarget()));
  EXPECT_NE(sm90.find("232448-byte limit of sm_90a (at most 11620 experts"), std::string::npos)
      << sm90;
  EXPECT_NE(gfx.find("163840-byte limit of gfx950 (at most 2408 experts"), std::string::npos)
      << gfx;
}

TEST(Sm90aTarget, GemmPlansRegisterWeightsAndTheirPrefetch) {
  const TargetInfo sm90 = *TargetInfo::forChip("sm_90a");
  auto plan = [](const MoeSpec &spec, StageId stage) { return planSm90(spec, stage).sm90; };
  // MXFP4 weights: no weight staging, K stepped 128 wide, two warps per
  // gfx950 wave. Stage 1 (tile_n 32: 16 columns per warp, 2 tiles x 2 halves
  // of 16-byte quarters, 20 registers a step beside 32 accumulators): 8
  // workgroups of 2 warps make the SM's 16 warps, which leaves a thread 128
  // registers: one step of weights ahead.
  MoeSpec spec = smallSpec();
  Sm90GemmLayout s1 = plan(spec, StageId::Stage1);
  EXPECT_TRUE(s1.registerWeights);
  EXPECT_EQ(s1.warpsN, 2);
  EXPECT_EQ(s1.nPerWarp, 16);
  EXPECT_EQ(s1.superK, 128);
  EXPECT_EQ(s1.accRegs, 32);
  EXPECT_EQ(s1.prefetch, 1);
  EXPECT_EQ(s1.minBlocksPerSM, 8);
  EXPECT_EQ(s1.bRows, 0);
  EXPECT_EQ(s1.stagingBytes, 32 * 272); // 32 A rows of 17 16-byte groups
  EXPECT_EQ(s1.buffers, 2);
  // Stage 2 (tile_n 128 over 4 waves): one warp per wave, 32 columns each,
  // as 4 workgroups of 4 warps still make the SM's 16 warps.
  Sm90GemmLayout s2 = plan(spec, StageId::Stage2);
  EXPECT_EQ(s2.warpsN, 4);
  EXPECT_EQ(s2.nTiles, 4);
  EXPECT_EQ(s2.minBlocksPerSM, 4);
  // The persistent grid launches as many workgroups per SM as the kernel
  // keeps resident, and never fewer than the default 4: 132 SMs x 8 over
  // stage 1's 4 column tiles, 132 x 4 over stage 2's single one.
  {
    ScheduleIssues issues;
    GemmPlan g1 = planGemm(spec, StageId::Stage1, sm90, issues);
    GemmPlan g2 = planGemm(spec, StageId::Stage2, sm90, issues);
    const int64_t maxWorkgroups = 132 * kPersistentWorkgroupsPerCU;
    EXPECT_EQ(g1.grid(100000, maxWorkgroups), (std::array<int64_t, 3>{4, 132 * 8 / 4, 1}));
    EXPECT_EQ(g2.grid(100000, maxWorkgroups), (std::array<int64_t, 3>{2, 132 * 4 / 2, 1}));
  }
  // A K-group of at most 4 steps (small: stage 1 2, stage 2 1) gets its
  // first steps' weights from the previous M tile's last trips; a longer one
  // loads them itself.
  EXPECT_TRUE(s1.carryWeights);
  EXPECT_TRUE(s2.carryWeights);
  MoeSpec wide = smallSpec();
  wide.problem.modelDim = 1024; // stage 1 K: 8 steps
  EXPECT_FALSE(plan(wide, StageId::Stage1).carryWeights);
  EXPECT_EQ(s2.superK, 128);
  EXPECT_EQ(s2.prefetch, 1); // K = 128: one step in all
  // Two 8-column tiles per warp and half: the weights are the 16-row A
  // operand; one (stage 1's tile_n 16 over two warps) keeps them the B
  // operand.
  EXPECT_TRUE(s1.swapAB);
  EXPECT_TRUE(s2.swapAB);
  MoeSpec narrow = smallSpec();
  narrow.stage1.tileN = 16;
  narrow.stage1.fusedQuant = FusedQuant::None;
  Sm90GemmLayout n1 = plan(narrow, StageId::Stage1);
  EXPECT_EQ(n1.nTiles, 1);
  EXPECT_FALSE(n1.swapAB);
  // Stage 2 splits its waves where whole-wave warps would leave the SM fewer
  // warps than asked for: 64 rows x 32 columns (64 accumulators, 4 weight
  // rows) fit 3 workgroups of 4 warps, so 8 warps of 16 columns (2 of them).
  MoeSpec tall = smallSpec();
  tall.stage1.tileM = tall.stage2.tileM = 64;
  Sm90GemmLayout t2 = plan(tall, StageId::Stage2);
  EXPECT_EQ(t2.warpsN, 8);
  EXPECT_EQ(t2.minBlocksPerSM, 2);
  // A K-group range that is not a multiple of 128 steps 64 (320) or 32 (96)
  // wide: bf16 activations allow tile_k = 64 and 32.
  MoeSpec odd = bf16Spec();
  odd.problem.modelDim = 320;
  odd.problem.interDim = 192;
  odd.stage1.tileK = 64;
  odd.stage2.tileN = 64;
  odd.stage2.tileK = 32;
  odd.stage2.kWave = 2; // 96 of K per group
  EXPECT_EQ(plan(odd, StageId::Stage1).superK, 64);
  Sm90GemmLayout odd2 = plan(odd, StageId::Stage2);
  EXPECT_EQ(odd2.superK, 32);
  EXPECT_EQ(odd2.aRowBytes, 64); // 4 groups, no padding at 32 wide
  // A fused MX quantization with 16 columns per warp: each 32-column block
  // spans a pair of warps, whose amaxes meet in one f32 per row and warp
  // after the staging.
  MoeSpec fused = smallSpec();
  fused.stage1.fusedQuant = FusedQuant::FP4;
  Sm90GemmLayout f1 = plan(fused, StageId::Stage1);
  EXPECT_EQ(f1.warpsN, 2);
  EXPECT_TRUE(f1.quantPairs);
  EXPECT_EQ(f1.accRegs, 32);
  EXPECT_EQ(f1.quantScratchBytes, 32 * 2 * 4);
  EXPECT_EQ(f1.sharedBytes, 2 * 32 * 272 + 32 * 2 * 4);
  EXPECT_FALSE(s1.quantPairs); // no fused quantization
  EXPECT_EQ(s1.quantScratchBytes, 0);
  // bf16 weights are staged with A: 80-byte rows, 32-wide blocks, one warp
  // per wave.
  MoeSpec w16 = odd;
  w16.formats.weight = DType::BF16;
  Sm90GemmLayout staged = plan(w16, StageId::Stage1);
  EXPECT_FALSE(staged.registerWeights);
  EXPECT_EQ(staged.warpsN, 1);
  // A split that leaves no K to a workgroup is refused by name, and planning
  // the rest of the kernel around it stays defined.
  MoeSpec empty = smallSpec();
  empty.stage1.kBatch = 512;
  ScheduleIssues issues;
  GemmPlan p = planGemm(empty, StageId::Stage1, sm90, issues);
  ASSERT_FALSE(issues.empty());
  EXPECT_EQ(issues.front().parameter, "k_batch");
  EXPECT_EQ(p.sm90.prefetch, 1);
  EXPECT_EQ(staged.bRows, 64);
  EXPECT_EQ(staged.stagingBytes, (32 + 64) * Sm90GemmLayout::kRowStride);
}

// A schedule's prefetch replaces the register plan's steps of weights in
// flight, up to kMaxPrefetch and the K-group's steps; a tile that stages its
// weights (bf16 weights, wgmma) or another target refuses it by name.
TEST(Sm90aTarget, SchedulePrefetchReplacesThePlans) {
  const TargetInfo sm90 = *TargetInfo::forChip("sm_90a");
  MoeSpec spec = smallSpec(); // stage 1: K = 256, two 128-wide steps; the plan takes one
  spec.stage1.prefetch = 2;
  EXPECT_EQ(planSm90(spec, StageId::Stage1).sm90.prefetch, 2);
  spec.stage1.prefetch = 0;
  EXPECT_EQ(planSm90(spec, StageId::Stage1).sm90.prefetch, 1);
  // Stage 2's wgmma N loop (80 rows, K = 384: three steps).
  MoeSpec loopN = smallSpec();
  loopN.problem.interDim = 384;
  loopN.stage1.tileM = loopN.stage2.tileM = 80;
  loopN.stage2.prefetch = 3;
  Sm90GemmLayout n = planSm90(loopN, StageId::Stage2).sm90;
  EXPECT_TRUE(n.loopN && n.wgmma);
  EXPECT_EQ(n.prefetch, 3);
  auto refusal = [](const MoeSpec &s, StageId stage, const TargetInfo &t) {
    ScheduleIssues issues;
    planGemm(s, stage, t, issues);
    for (const ScheduleIssue &i : issues)
      if (i.parameter == "prefetch")
        return i.message;
    return std::string();
  };
  MoeSpec deep = smallSpec();
  deep.stage1.prefetch = 3;
  EXPECT_NE(refusal(deep, StageId::Stage1, sm90).find("prefetch=3 exceeds 2"), std::string::npos);
  MoeSpec staged = smallSpec();
  staged.formats.weight = DType::BF16;
  staged.stage1.prefetch = 1;
  EXPECT_NE(refusal(staged, StageId::Stage1, sm90).find("weights are not MXFP4"),
            std::string::npos);
  MoeSpec wgmma = smallSpec();
  wgmma.stage1.tileM = 128;
  wgmma.stage1.tileN = 64;
  wgmma.stage1.prefetch = 1;
  EXPECT_NE(refusal(wgmma, StageId::Stage1, sm90).find("through shared memory"), std::string::npos);
  spec.stage1.prefetch = 2;
  EXPECT_NE(
      refusal(spec, StageId::Stage1, TargetInfo::defaultTarget()).find("gfx950 has no such plan"),
      std::string::npos);
}

TEST(Sm90aTarget, ShortStage2LoopsOverNTilesWithItsARowsStaged) {
  auto plan = planSm90;
  // Kimi-K3's shape (K = 384 in stage 2: three 128-wide steps): each step's
  // A rows in a buffer of their own, 64 rows of 17 16-byte groups each: 52224
  // bytes, beyond the 48 KiB of static shared memory; the SM's two
  // workgroups of 8 warps fit.
  MoeSpec kimi = kimiBf16Spec();
  kimi.stage1.tileM = kimi.stage2.tileM = 64;
  kimi.stage2.tileN = 128;
  // (The arithmetic decoding keeps 64-row tiles on mma.sync.)
  kimi.stage2.weightDecode = WeightDecode::Arithmetic;
  GemmPlan g2 = plan(kimi, StageId::Stage2);
  EXPECT_FALSE(g2.sm90.wgmma);
  EXPECT_TRUE(g2.sm90.loopN);
  EXPECT_EQ(g2.sm90.buffers, 3);
  EXPECT_EQ(g2.sm90.stagingBytes, 64 * 272);
  EXPECT_EQ(g2.sm90.sharedBytes, 3 * 64 * 272);
  EXPECT_TRUE(g2.sm90.dynamicShared);
  EXPECT_EQ(g2.sm90.minBlocksPerSM, 2);
  // With the mixed decoding the N loop runs on wgmma: the rows of each
  // step in the core-matrix layout, 64 rows of 256 bytes, unpadded.
  MoeSpec mixed = kimi;
  mixed.stage2.weightDecode = WeightDecode::Mixed;
  const Sm90GemmLayout onWgmma = plan(mixed, StageId::Stage2).sm90;
  EXPECT_TRUE(onWgmma.wgmma);
  EXPECT_TRUE(onWgmma.loopN);
  EXPECT_EQ(onWgmma.stagingBytes, 64 * 256);
  EXPECT_EQ(onWgmma.sharedBytes, 3 * 64 * 256);
  EXPECT_EQ(onWgmma.minBlocksPerSM, 2);
  // Stage 1 (K = 3584, 28 steps) stages A step by step.
  EXPECT_FALSE(plan(kimi, StageId::Stage1).sm90.loopN);
  // 32-row tiles: 26112 bytes, static.
  MoeSpec small32 = kimi;
  small32.stage1.tileM = small32.stage2.tileM = 32;
  small32.stage2.tileN = 64;
  GemmPlan s32 = plan(small32, StageId::Stage2);
  EXPECT_TRUE(s32.sm90.loopN);
  EXPECT_FALSE(s32.sm90.dynamicShared);
  EXPECT_EQ(s32.sm90.sharedBytes, 3 * 32 * 272);

  // The M tiles expected in use: at 16384 tokens every expert is hit with
  // 292.6 rows, 5.07 blocks of 64; at 1 token 16 experts, one block each.
  EXPECT_EQ(g2.expectedMTiles(16384, 896, 16), 4544);
  EXPECT_EQ(g2.expectedMTiles(1, 896, 16), 16);
  EXPECT_EQ(g2.expectedMTiles(0, 896, 16), 0);
  const int64_t maxWorkgroups = 132 * kPersistentWorkgroupsPerCU;
  // 16384 tokens: two workgroups along N (14 N tiles each) and 264 along M,
  // 19 rounds of M tiles (one along N: 528 along M, 10 rounds of 28).
  EXPECT_EQ(g2.grid(100000, maxWorkgroups, 4543), (std::array<int64_t, 3>{2, 264, 1}));
  // 1 token: 16 M tiles, one round with every N tile a workgroup of its own.
  EXPECT_EQ(g2.grid(100000, maxWorkgroups, 16), (std::array<int64_t, 3>{28, 18, 1}));
  // Unknown: every N tile a workgroup, as without loopN.
  EXPECT_EQ(g2.grid(100000, maxWorkgroups), (std::array<int64_t, 3>{28, 18, 1}));
}

TEST(Sm90aTarget, RegisterWeightsTakeTheirBufferPairInDynamicSharedMemory) {
  auto plan = planSm90;
  // Stage 1 on 96-row mma.sync tiles (K = 3584, 128-wide steps): a buffer is
  // 96 rows of 17 16-byte groups, 26112 bytes; two exceed the static 48 KiB
  // and fit the one workgroup an SM holds, so the pair is dynamic.
  MoeSpec spec = kimiBf16Spec();
  spec.stage1.tileM = spec.stage2.tileM = 96;
  spec.stage1.tileN = 128;
  spec.stage1.kWave = 1;
  GemmPlan g1 = plan(spec, StageId::Stage1);
  EXPECT_TRUE(g1.sm90.registerWeights);
  EXPECT_FALSE(g1.sm90.wgmma);
  EXPECT_EQ(g1.sm90.stagingBytes, 96 * 272);
  EXPECT_EQ(g1.sm90.buffers, 2);
  EXPECT_EQ(g1.sm90.sharedBytes, 2 * 96 * 272);
  EXPECT_TRUE(g1.sm90.dynamicShared);
  EXPECT_EQ(g1.sm90.minBlocksPerSM, 1);
  // 80 rows: the pair fits the static 48 KiB, as before.
  MoeSpec rows80 = spec;
  rows80.stage1.tileM = rows80.stage2.tileM = 80;
  GemmPlan g80 = plan(rows80, StageId::Stage1);
  EXPECT_EQ(g80.sm90.buffers, 2);
  EXPECT_FALSE(g80.sm90.dynamicShared);
  // Four K-groups (DeepSeek-V3's shape, 32x32x256, K-groups of 1792): two
  // buffers each would be 69632 bytes; they keep one static buffer each.
  MoeSpec groups = smallSpec();
  groups.problem.modelDim = 7168;
  groups.problem.interDim = 256;
  groups.problem.experts = 256;
  groups.problem.topk = 8;
  groups.stage1.kWave = 4;
  GemmPlan g4 = plan(groups, StageId::Stage1);
  EXPECT_EQ(g4.sm90.stagingBytes, 32 * 272);
  EXPECT_EQ(g4.sm90.buffers, 1);
  EXPECT_FALSE(g4.sm90.dynamicShared);
}

TEST(Sm90aTarget, TheNLoopGridIsNeverWorseThanOneNTileAWorkgroup) {
  // Random layers, token counts and device sizes: the expected M tiles stay
  // within the sorting's worst case, grid.x divides the N tiles, grid.y is
  // within its bounds, and by the launch's own measure (rounds of M tiles x
  // (N tiles a workgroup + 1)) the choice is at most what one N tile per
  // workgroup (the grid without the N loop) costs.
  std::mt19937_64 rng(12);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  auto ceilDiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  int checked = 0;
  for (int i = 0; i < 400; ++i) {
    MoeSpec spec = smallSpec();
    spec.formats.activation = DType::BF16;
    spec.stage1.fusedQuant = FusedQuant::None;
    spec.problem.experts = pick(1, 4096);
    spec.problem.topk = pick(1, std::min<int64_t>(16, spec.problem.experts));
    spec.problem.modelDim = 128 * pick(1, 64);
    spec.problem.interDim = 128 * pick(1, 3);
    spec.stage1.tileM = spec.stage2.tileM = pick(0, 1) ? 32 : 64;
    spec.stage2.tileN = pick(0, 1) ? 64 : 128;
    ScheduleIssues issues;
    GemmPlan g = planGemm(spec, StageId::Stage2, *TargetInfo::forChip("sm_90a"), issues);
    if (!issues.empty() || !g.sm90.loopN)
      continue;
    ++checked;
    const int64_t tokens = pick(1, 1 << 20), cus = pick(1, 264);
    const int64_t sortBlocks = ceilDiv(tokens * spec.problem.topk, g.sortBlockM) +
                               std::min(tokens * spec.problem.topk, spec.problem.experts);
    const int64_t expected = g.expectedMTiles(tokens, spec.problem.experts, spec.problem.topk);
    SCOPED_TRACE(printMoeSpec(spec) + " tokens " + std::to_string(tokens) + " cus " +
                 std::to_string(cus));
    EXPECT_GE(expected, 1);
    EXPECT_LE(expected, sortBlocks * g.mTilesPerSortBlock);
    const int64_t maxWorkgroups = cus * kPersistentWorkgroupsPerCU;
    std::array<int64_t, 3> grid = g.grid(sortBlocks, maxWorkgroups, expected);
    std::array<int64_t, 3> plain = g.grid(sortBlocks, maxWorkgroups);
    const int64_t nTiles = spec.problem.modelDim / spec.stage2.tileN;
    EXPECT_EQ(plain[0], nTiles);
    ASSERT_GE(grid[0], 1);
    EXPECT_EQ(nTiles % grid[0], 0);
    EXPECT_GE(grid[1], 1);
    EXPECT_LE(grid[1], g.gridM(sortBlocks));
    auto cost = [&](const std::array<int64_t, 3> &gr) {
      int64_t rounds = ceilDiv(expected * 11 / 10, gr[1]);
      return rounds * (nTiles / gr[0] + 1);
    };
    EXPECT_LE(cost(grid), cost(plain));
  }
  EXPECT_GT(checked, 100);
}

TEST(Sm90aTarget, TilesOf128RowsUseWarpgroupMmas) {
  const TargetInfo sm90 = *TargetInfo::forChip("sm_90a");
  auto plan = planSm90;
  MoeSpec spec = smallSpec(); // a4w4
  spec.stage1.fusedQuant = FusedQuant::FP4;
  spec.stage1.tileM = spec.stage2.tileM = 128;
  spec.stage1.tileN = 64;
  // Stage 1: 16 columns per warp, one warpgroup; 64-wide steps (two MX
  // blocks) staged as 8-row core matrices of A rows (no padding) and then
  // the codes of the workgroup's 128 weight rows (32 bytes each), four stages
  // in flight (the scales of three steps ahead in registers) in dynamic
  // shared memory: two workgroups an SM, 82 KiB each.
  GemmPlan p1 = plan(spec, StageId::Stage1);
  const Sm90GemmLayout &s1 = p1.sm90;
  EXPECT_TRUE(s1.wgmma);
  EXPECT_TRUE(s1.swapAB);
  EXPECT_FALSE(s1.carryWeights);
  EXPECT_EQ(s1.warpsN, 4);
  EXPECT_EQ(p1.threads, 128);
  EXPECT_EQ(s1.nPerWarp, 16);
  EXPECT_EQ(s1.accRegs, 128);
  EXPECT_EQ(s1.superK, 64);
  EXPECT_EQ(s1.aRowBytes, 128);
  EXPECT_EQ(s1.stagingBytes, 128 * 128 + 128 * 32);
  EXPECT_EQ(s1.buffers, 4);
  EXPECT_EQ(s1.prefetch, 3);
  EXPECT_TRUE(s1.decodeAhead); // the next block decoded during the wgmmas
  EXPECT_EQ(s1.minBlocksPerSM, 2);
  EXPECT_TRUE(s1.quantPairs); // 32-column MX blocks across two warps
  EXPECT_EQ(s1.sharedBytes, 4 * (128 * 128 + 128 * 32) + 128 * 4 * 4);
  EXPECT_TRUE(s1.dynamicShared);
  // Each launch provides it.
  EXPECT_EQ(gemmKernelSignature("s1", spec, p1).dynamicSharedBytes, s1.sharedBytes);
  // Stage 2 (tile_n 128, K = 128): two warpgroups loop over the N tiles
  // (loopN) with the weights in registers, one 128-wide step ahead and
  // carried, and the M tile's rows staged once for all of K (128 rows of
  // 128 bf16, static shared memory); no staged codes, no stages.
  GemmPlan p2 = plan(spec, StageId::Stage2);
  const Sm90GemmLayout &s2 = p2.sm90;
  EXPECT_TRUE(s2.wgmma);
  EXPECT_TRUE(s2.loopN);
  EXPECT_TRUE(s2.carryWeights);
  EXPECT_EQ(s2.warpsN, 8);
  EXPECT_EQ(s2.accRegs, 64);
  EXPECT_EQ(s2.superK, 128);
  EXPECT_EQ(s2.stagingBytes, 128 * 256);
  EXPECT_EQ(s2.buffers, 1);
  EXPECT_EQ(s2.prefetch, 1);
  EXPECT_FALSE(s2.decodeAhead);
  EXPECT_EQ(s2.minBlocksPerSM, 1);
  EXPECT_EQ(s2.sharedBytes, 128 * 256);
  EXPECT_FALSE(s2.dynamicShared);
  // 256 rows over K = 384: three steps of rows (192 KiB) exceed the shared
  // memory of the two workgroups an SM holds (113 KiB each), so stage 2
  // stages codes and rows step by step, the stages shrunk to what fits.
  MoeSpec tall = spec;
  tall.problem.interDim = 384;
  tall.stage1.tileM = tall.stage2.tileM = 256;
  tall.stage2.tileN = 64;
  const Sm90GemmLayout tallPlan = plan(tall, StageId::Stage2).sm90;
  EXPECT_FALSE(tallPlan.loopN);
  EXPECT_EQ(tallPlan.minBlocksPerSM, 2);
  EXPECT_EQ(tallPlan.buffers, 3);
  EXPECT_TRUE(tallPlan.decodeAhead);
  // At K = 128 the one step of 256 rows (64 KiB) fits: the N loop, in
  // dynamic shared memory.
  tall.problem.interDim = 128;
  const Sm90GemmLayout tallLoop = plan(tall, StageId::Stage2).sm90;
  EXPECT_TRUE(tallLoop.loopN);
  EXPECT_EQ(tallLoop.sharedBytes, 256 * 256);
  EXPECT_TRUE(tallLoop.dynamicShared);
  // mma.sync below 128 rows, with k_wave > 1, or where tile_n is not a
  // whole number of warpgroups.
  MoeSpec rows64 = spec;
  rows64.stage1.tileM = rows64.stage2.tileM = 64;
  EXPECT_FALSE(plan(rows64, StageId::Stage1).sm90.wgmma);
  // Stage 2's N loop is on wgmma from kWgmmaLoopNMinRows (64) rows, with
  // registers for two workgroups an SM unless waves_per_eu says otherwise.
  const Sm90GemmLayout rows64Stage2 = plan(rows64, StageId::Stage2).sm90;
  EXPECT_TRUE(rows64Stage2.wgmma);
  EXPECT_TRUE(rows64Stage2.loopN);
  EXPECT_EQ(rows64Stage2.warpsPerSM, 16);
  EXPECT_EQ(rows64Stage2.minBlocksPerSM, 2);
  EXPECT_EQ(rows64Stage2.accRegs, 32);
  MoeSpec rows64Waves2 = rows64;
  rows64Waves2.stage2.wavesPerEU = 2;
  EXPECT_EQ(plan(rows64Waves2, StageId::Stage2).sm90.minBlocksPerSM, 1);
  // Below it, stage 2's N loop stays on mma.sync.
  MoeSpec rows48 = spec;
  rows48.stage1.tileM = rows48.stage2.tileM = 48;
  const Sm90GemmLayout rows48Stage2 = plan(rows48, StageId::Stage2).sm90;
  EXPECT_FALSE(rows48Stage2.wgmma);
  EXPECT_TRUE(rows48Stage2.loopN);
  // (k_wave 2 at 128 rows: the mma.sync kernel's K-group reduction then
  // exceeds the static shared memory, refused by name.)
  MoeSpec kw = spec;
  kw.stage1.kWave = 2;
  kw.stage1.tileK = 128;
  ScheduleIssues kwIssues;
  EXPECT_FALSE(planGemm(kw, StageId::Stage1, sm90, kwIssues).sm90.wgmma);
  ASSERT_EQ(kwIssues.size(), 1u);
  EXPECT_EQ(kwIssues.front().parameter, "lds");
  MoeSpec n32 = spec;
  n32.stage1.tileN = 32;
  n32.stage1.fusedQuant = FusedQuant::None;
  EXPECT_FALSE(plan(n32, StageId::Stage1).sm90.wgmma);
}

TEST(Sm90aTarget, EpiloguesFrom48RowsTransposeByMovmatrix) {
  auto plan = planSm90;
  MoeSpec spec = smallSpec(); // a4w4, stage 1 quantizing its own output
  spec.stage1.fusedQuant = FusedQuant::FP4;
  // 32-row tiles keep unswapping their accumulators by shuffles.
  spec.stage1.tileM = spec.stage2.tileM = 32;
  EXPECT_TRUE(plan(spec, StageId::Stage2).sm90.swapAB);
  EXPECT_FALSE(plan(spec, StageId::Stage2).sm90.transposedEpilogue);
  // From 48 rows a row-wise epilogue transposes by movmatrix, on mma.sync
  // (48 rows) and on wgmma tiles (128); stage 1's fused quantization needs
  // the f32 values of whole rows (its block amaxes) and keeps the shuffles,
  // as do k_batch partials.
  for (int64_t rows : {48, 128}) {
    spec.stage1.tileM = spec.stage2.tileM = rows;
    EXPECT_TRUE(plan(spec, StageId::Stage2).sm90.transposedEpilogue) << rows;
    EXPECT_FALSE(plan(spec, StageId::Stage1).sm90.transposedEpilogue) << rows;
    MoeSpec bf16 = spec;
    bf16.stage1.fusedQuant = FusedQuant::None;
    EXPECT_TRUE(plan(bf16, StageId::Stage1).sm90.transposedEpilogue) << rows;
    bf16.stage1.kBatch = 2;
    bf16.stage1.tileK = 128;
    EXPECT_FALSE(plan(bf16, StageId::Stage1).sm90.transposedEpilogue) << rows;
  }
}

TEST(Sm90aTarget, MxActivationsAreCarriedDecoded) {
  // sm_90a has no MX MMA: the quantizations write the decoded values as
  // bf16 (no scales), the GEMMs read bf16 A, stage 1's fused quantization
  // writes bf16 rows. gfx950 keeps the packed codes and scales.
  const TargetInfo sm90 = *TargetInfo::forChip("sm_90a");
  const TargetInfo gfx = TargetInfo::defaultTarget();
  MoeSpec spec = smallSpec(); // a4w4
  spec.stage1.fusedQuant = FusedQuant::FP4;
  ASSERT_EQ(spec.formats.activation, DType::MXFP4);
  EXPECT_TRUE(carriesDecodedMx(spec, sm90));
  EXPECT_FALSE(carriesDecodedMx(spec, gfx));
  ScheduleIssues issues;
  GemmPlan s1 = planGemm(spec, StageId::Stage1, sm90, issues);
  GemmPlan s2 = planGemm(spec, StageId::Stage2, sm90, issues);
  GemmPlan g1 = planGemm(spec, StageId::Stage1, gfx, issues);
  std::optional<QuantPlan> q = planInputQuant(spec, sm90, issues);
  std::optional<QuantPlan> gq = planInputQuant(spec, gfx, issues);
  ASSERT_TRUE(issues.empty()) << issues.front().str();
  EXPECT_EQ(s1.aFormat, DType::BF16);
  EXPECT_EQ(s2.aFormat, DType::BF16);
  EXPECT_TRUE(s1.decodedOut);
  EXPECT_FALSE(s2.decodedOut);
  EXPECT_EQ(g1.aFormat, DType::MXFP4);
  EXPECT_FALSE(g1.decodedOut);
  ASSERT_TRUE(q && gq);
  EXPECT_TRUE(q->decoded);
  EXPECT_EQ(q->rowBytes(), 2 * spec.problem.modelDim);
  EXPECT_EQ(q->scaleBytes(37), 0);
  EXPECT_EQ(quantKernelSymbol(*q), "moe_quant_mxfp4_c256_bf16");
  KernelSignature sig = quantKernelSignature(quantKernelSymbol(*q), *q);
  for (const auto &arg : sig.args)
    EXPECT_NE(arg.name, "scales");
  EXPECT_FALSE(gq->decoded);
  EXPECT_EQ(gq->rowBytes(), spec.problem.modelDim / 2);
  EXPECT_GT(gq->scaleBytes(37), 0);
  // fp8 activations alike, and bf16 activations have nothing to carry.
  MoeSpec a8 = spec;
  a8.formats.activation = DType::MXFP8;
  a8.stage1.fusedQuant = FusedQuant::FP8;
  EXPECT_TRUE(carriesDecodedMx(a8, sm90));
  EXPECT_EQ(planInputQuant(a8, sm90, issues)->rowBytes(), 2 * spec.problem.modelDim);
  MoeSpec a16 = spec;
  a16.formats.activation = DType::BF16;
  a16.stage1.fusedQuant = FusedQuant::None;
  EXPECT_FALSE(carriesDecodedMx(a16, sm90));
  // mxfp8 weights with MX activations: bf16 A times decoded e4m3 weights.
  MoeSpec w8 = spec;
  w8.formats.weight = DType::MXFP8;
  EXPECT_TRUE(checkLayer(w8, sm90).empty());
  EXPECT_TRUE(issues.empty());
}

TEST(Sm90aTarget, WavesPerEuPlansTheWarpsPerSM) {
  // waves_per_eu = N asks registers for N warps on each of the SM's 4
  // sub-partitions. Stage 1 of `small` over K = 1024 (8 steps), workgroups of
  // 2 warps, 20 registers a step of weights, 32 accumulators:
  const TargetInfo sm90 = *TargetInfo::forChip("sm_90a");
  MoeSpec spec = smallSpec();
  spec.problem.modelDim = 1024;
  auto plan = [&](int64_t wavesPerEU) {
    MoeSpec s = spec;
    s.stage1.wavesPerEU = wavesPerEU;
    ScheduleIssues issues;
    GemmPlan p = planGemm(s, StageId::Stage1, sm90, issues);
    EXPECT_TRUE(issues.empty()) << (issues.empty() ? "" : issues.front().str());
    return p;
  };
  // 0: the default 16 warps, 128 registers, one step ahead.
  GemmPlan dflt = plan(0);
  EXPECT_EQ(dflt.sm90.warpsPerSM, 16);
  EXPECT_EQ(dflt.sm90.minBlocksPerSM, 8);
  EXPECT_EQ(dflt.sm90.prefetch, 1);
  EXPECT_EQ(plan(4).sm90.minBlocksPerSM, 8);
  EXPECT_EQ(plan(4).sm90.prefetch, 1);
  // 3: 12 warps, 6 workgroups, 170 registers; the main loop keeps 32 + 16 per
  // weight row (4 rows) of them, which leaves one step ahead.
  GemmPlan w3 = plan(3);
  EXPECT_EQ(w3.sm90.warpsPerSM, 12);
  EXPECT_EQ(w3.sm90.minBlocksPerSM, 6);
  EXPECT_EQ(w3.sm90.prefetch, 1);
  // 2: 8 warps, 4 workgroups, 255 registers: three steps ahead.
  GemmPlan w2 = plan(2);
  EXPECT_EQ(w2.sm90.warpsPerSM, 8);
  EXPECT_EQ(w2.sm90.minBlocksPerSM, 4);
  EXPECT_EQ(w2.sm90.prefetch, 3);
  // The persistent grid launches as many workgroups per SM as planned
  // resident (never fewer than 4): 132 x 6 and 132 x 4 over 4 column tiles.
  const int64_t maxWorkgroups = 132 * kPersistentWorkgroupsPerCU;
  EXPECT_EQ(w3.grid(100000, maxWorkgroups)[1], 132 * 6 / 4);
  EXPECT_EQ(w2.grid(100000, maxWorkgroups)[1], 132 * 4 / 4);
  // More warps than a workgroup has still keep one resident.
  MoeSpec wide = spec;
  wide.stage1.kWave = 4;
  wide.stage1.tileK = 512;
  wide.stage1.wavesPerEU = 1; // 4 warps per SM, a workgroup of 8
  ScheduleIssues issues;
  GemmPlan one = planGemm(wide, StageId::Stage1, sm90, issues);
  EXPECT_EQ(one.sm90.minBlocksPerSM, 1) << (issues.empty() ? "" : issues.front().str());
}

} // namespace
