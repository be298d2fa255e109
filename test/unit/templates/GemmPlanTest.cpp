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

} // namespace
