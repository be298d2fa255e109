//===- GemmPlanTest.cpp - The GEMM plan's launch contract -----------------===//

#include "templates/gemm/GemmPlan.h"

#include <gtest/gtest.h>

using namespace moegen;

namespace {

MoeSpec kimiLike() {
  MoeSpec spec;
  spec.name = "t";
  spec.problem = {3584, 384, 896, 16};
  spec.formats = {DType::MXFP4, DType::MXFP4, DType::BF16};
  spec.stage1 = {32, 128, 256};
  spec.stage2 = {32, 128, 128};
  return spec;
}

TEST(GemmPlan, PersistentGridIsCappedAndNeverEmpty) {
  MoeSpec spec = kimiLike();
  ScheduleIssues issues;
  GemmPlan p = planGemm(spec, StageId::Stage2, TargetInfo::defaultTarget(), issues);
  ASSERT_TRUE(issues.empty()) << issues.front().str();
  // 1 token: 896 sorted blocks, 28 column tiles; 256 CUs x 4 allow 1024
  // workgroups: 36 rows instead of 896.
  EXPECT_EQ(p.grid(896, 1024), (std::array<int64_t, 3>{28, 36, 1}));
  // Fewer blocks than the cap allows: one row each.
  EXPECT_EQ(p.grid(10, 1024), (std::array<int64_t, 3>{28, 10, 1}));
  // A cap below one row still launches one row (it loops over every tile).
  EXPECT_EQ(p.grid(896, 4), (std::array<int64_t, 3>{28, 1, 1}));
  spec.stage2.kBatch = 2;
  GemmPlan split = planGemm(spec, StageId::Stage2, TargetInfo::defaultTarget(), issues);
  EXPECT_EQ(split.grid(896, 1024), (std::array<int64_t, 3>{28, 18, 2}));
}

TEST(GemmPlan, WavesPerEuPadsLdsInsteadOfBudgetingRegisters) {
  TargetInfo t = TargetInfo::defaultTarget();
  // 4-wave workgroups (one wave per SIMD): 4 waves per SIMD = 4 workgroups.
  int64_t pad = occupancyCapLdsBytes(4, 4, t);
  EXPECT_EQ(t.ldsBytes / pad, 4);
  EXPECT_EQ(pad, 163840 / 5 + 1);
  // 8-wave workgroups: 2 of them give 4 waves per SIMD.
  EXPECT_EQ(t.ldsBytes / occupancyCapLdsBytes(4, 8, t), 2);
  // More waves per workgroup than the cap allows: one workgroup.
  EXPECT_EQ(t.ldsBytes / occupancyCapLdsBytes(1, 16, t), 1);
  EXPECT_EQ(occupancyCapLdsBytes(0, 4, t), 0);

  MoeSpec spec = kimiLike();
  spec.stage1.wavesPerEU = 4;
  ScheduleIssues issues;
  GemmPlan p = planGemm(spec, StageId::Stage1, t, issues);
  ASSERT_TRUE(issues.empty());
  EXPECT_LT(p.ldsBytes, pad); // the tiles need less than the cap's padding
  EXPECT_EQ(p.ldsAllocBytes, occupancyCapLdsBytes(4, p.waves, t));
  spec.stage1.wavesPerEU = 0;
  EXPECT_EQ(planGemm(spec, StageId::Stage1, t, issues).ldsAllocBytes, p.ldsBytes);
}

TEST(GemmPlan, WavesSplitTileMWhenAccumulatorsExceedTheBudget) {
  TargetInfo t = TargetInfo::defaultTarget();
  // Kimi-K3 a8w4 at inter_dim 512, aiter's t128x256x256 stage 1: four
  // N-waves would each hold 128x64 gate and up accumulators (256 registers
  // per lane); two M-waves halve that.
  MoeSpec spec = kimiLike();
  spec.problem.interDim = 512;
  spec.formats = {DType::MXFP8, DType::MXFP4, DType::BF16};
  spec.stage1 = {128, 256, 256};
  spec.stage1.fusedQuant = FusedQuant::FP8;
  spec.stage1.wavesPerEU = 2;
  ScheduleIssues issues;
  GemmPlan p = planGemm(spec, StageId::Stage1, t, issues);
  ASSERT_TRUE(issues.empty()) << issues.front().str();
  EXPECT_EQ(p.nWaves, 4);
  EXPECT_EQ(p.mWaves, 2);
  EXPECT_EQ(p.mPerWave, 64);
  EXPECT_EQ(p.waves, 8);
  EXPECT_EQ(p.threads, 512);
  EXPECT_EQ(p.mfma.kind, MfmaKind::ScaledF8F6F4_32x32x64); // 64x64 per wave
  EXPECT_EQ(p.ldsAllocBytes, occupancyCapLdsBytes(2, 8, t));

  // k_wave=2 still fits 1024 threads (the k_wave scratch, every wave's 64x64
  // gate and up, then exceeds the LDS); k_wave=4 leaves no room for M-waves.
  spec.stage1.kWave = 2;
  p = planGemm(spec, StageId::Stage1, t, issues);
  EXPECT_EQ(p.mWaves, 2);
  EXPECT_EQ(p.threads, 1024);
  EXPECT_EQ(p.ldsReduction, 16 * 64 * 64 * 2 * 4);
  spec.stage1.kWave = 4;
  spec.problem.modelDim = 4096;
  p = planGemm(spec, StageId::Stage1, t, issues);
  EXPECT_EQ(p.mWaves, 1);
  EXPECT_EQ(p.threads, 1024);
  spec.stage1.kWave = 1;
  issues.clear();

  // A 256-row tile splits as far as it must: 4 M-waves of 64 rows.
  spec.stage1 = {256, 256, 256};
  p = planGemm(spec, StageId::Stage1, t, issues);
  EXPECT_EQ(p.mWaves, 4);
  EXPECT_EQ(p.threads, 1024);
  // Stage 2 (no up half) splits only past 128x64 per wave.
  spec.stage2 = {256, 256, 256};
  EXPECT_EQ(planGemm(spec, StageId::Stage2, t, issues).mWaves, 2);
  spec.stage2 = {128, 256, 256};
  EXPECT_EQ(planGemm(spec, StageId::Stage2, t, issues).mWaves, 1);
  ASSERT_TRUE(issues.empty()) << issues.front().str();

  // Tiles at or under the budget keep one M-wave: the aiter tables' others.
  for (auto [m, n] : {std::pair<int64_t, int64_t>{32, 128}, {64, 128}, {128, 128}, {128, 64}}) {
    spec.stage1 = {m, n, 256};
    p = planGemm(spec, StageId::Stage1, t, issues);
    EXPECT_EQ(p.mWaves, 1) << m << "x" << n;
    EXPECT_EQ(p.mPerWave, m);
    EXPECT_EQ(p.waves, p.nWaves);
  }

  // sm_90a keeps its own warp layout.
  spec.stage1 = {128, 256, 256};
  std::optional<TargetInfo> sm90 = TargetInfo::forChip(TargetInfo::kHopperChip);
  ASSERT_TRUE(sm90.has_value());
  EXPECT_EQ(planGemm(spec, StageId::Stage1, *sm90, issues).mWaves, 1);
}

} // namespace

namespace {

TEST(GemmPlan, XcdSwizzleGivesEachResidueAConsecutiveRun) {
  for (int64_t groups = 1; groups <= 8; ++groups)
    for (int64_t count = 1; count <= 300; ++count) {
      std::vector<int> hits(count, 0);
      for (int64_t g = 0; g < groups; ++g) {
        int64_t previous = -1;
        for (int64_t id = g; id < count; id += groups) {
          int64_t t = xcdSwizzledId(id, count, groups);
          ASSERT_GE(t, 0);
          ASSERT_LT(t, count);
          ++hits[t];
          // One XCD's workgroups (one residue) compute consecutive tiles.
          if (previous >= 0)
            EXPECT_EQ(t, previous + 1) << count << " workgroups, " << groups << " groups";
          previous = t;
        }
      }
      for (int64_t t = 0; t < count; ++t)
        ASSERT_EQ(hits[t], 1) << "tile " << t << " of " << count << ", " << groups << " groups";
    }
  EXPECT_EQ(xcdSwizzledId(5, 16, 1), 5); // one group: the dispatch order
}

TEST(GemmPlan, XcdSwizzleIsForGfx950Only) {
  MoeSpec spec = kimiLike();
  spec.stage2.xcdSwizzle = 4;
  ScheduleIssues issues;
  planGemm(spec, StageId::Stage2, TargetInfo::defaultTarget(), issues);
  EXPECT_TRUE(issues.empty()) << issues.front().str();
  spec.formats.activation = DType::BF16;
  planGemm(spec, StageId::Stage2, *TargetInfo::get("sm_90a"), issues);
  ASSERT_FALSE(issues.empty());
  EXPECT_EQ(issues.back().parameter, "xcd_swizzle");
  EXPECT_NE(issues.back().message.find("xcd_swizzle=4 regroups workgroups over gfx950's XCDs"),
            std::string::npos)
      << issues.back().message;
}

} // namespace
