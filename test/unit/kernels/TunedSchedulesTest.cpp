//===- TunedSchedulesTest.cpp - aiter's tuned Kimi-K3 rows as moegen schedules -===//
//
// Every FlyDSL kernel of aiter's Kimi-K3 (a4w4, a8w4, a16w4) and DeepSeek-V3
// tuned tables
// maps to a moegen schedule, and the layer the row describes passes the
// kernel templates' rules for that row's shape: the runtime can serve each
// tuned tier with its own kernels instead of a fallback. (Kimi-K2's table
// uses the mxmoe port's `_f16in` kernels, which the dispatch reports as
// unmappable rather than guessing.)
//
//===----------------------------------------------------------------------===//

#include "compiler/spec/DslParser.h"
#include "runtime/dispatch/KernelName.h"
#include "runtime/dispatch/TunedTable.h"
#include "templates/LayerRules.h"

#include <gtest/gtest.h>

using namespace moegen;

namespace {

struct TableCase {
  const char *csv;
  const char *example;
};

class TunedSchedules : public ::testing::TestWithParam<TableCase> {};

TEST_P(TunedSchedules, EveryFlyDslRowMapsAndVerifies) {
  const char *src = std::getenv("MOEGEN_SOURCE_DIR");
  ASSERT_NE(src, nullptr);
  std::string root = src;
  auto table = dispatch::TunedTable::load(root + "/data/aiter-configs/" + GetParam().csv);
  ASSERT_TRUE(static_cast<bool>(table)) << llvm::toString(table.takeError());
  auto base = parseMoeSpecFile(root + "/examples/" + GetParam().example);
  ASSERT_TRUE(static_cast<bool>(base)) << llvm::toString(base.takeError());
  auto target = TargetInfo::defaultTarget();
  int flydslStages = 0;
  for (const auto &row : table->rows()) {
    MoeSpec spec = *base;
    spec.problem.modelDim = *row->getInt("model_dim");
    spec.problem.interDim = *row->getInt("inter_dim");
    spec.problem.experts = *row->getInt("expert");
    spec.problem.topk = *row->getInt("topk");
    // The row's block_m is its sorting block, which is moegen's stage-1
    // tile_m. FlyDSL kernels must map; other families (Opus, CK) keep the
    // example's schedule for their stage, sorted in the row's blocks.
    int64_t blockM = *row->getInt("block_m");
    spec.stage1.tileM = blockM;
    for (const char *column : {"kernelName1", "kernelName2"}) {
      std::string name = row->get(column);
      if (!llvm::StringRef(name).starts_with("flydsl_"))
        continue;
      ++flydslStages;
      auto m = dispatch::kernelNameToSchedule(name);
      if (!m) {
        ADD_FAILURE() << row->location() << ": " << name << ": " << llvm::toString(m.takeError());
        continue;
      }
      if (m->stage == StageId::Stage1)
        EXPECT_EQ(m->schedule.tileM, blockM) << row->location() << ": " << name;
      if (m->sortBlockM)
        EXPECT_EQ(*m->sortBlockM, blockM) << row->location() << ": " << name;
      spec.stage(m->stage) = m->schedule;
      if (m->gateUp)
        spec.problem.gateUp = *m->gateUp;
    }
    ScheduleIssues issues = checkLayer(spec, target);
    std::string text;
    for (const ScheduleIssue &issue : issues)
      text += "\n  " + issue.str();
    EXPECT_TRUE(issues.empty()) << row->location() << ": " << row->get("kernelName1") << " + "
                                << row->get("kernelName2") << text;
  }
  EXPECT_GT(flydslStages, 0);
}

INSTANTIATE_TEST_SUITE_P(
    AiterTables, TunedSchedules,
    ::testing::Values(TableCase{"kimik3_a4w4_tuned_fmoe.csv", "kimi_k3_tp8_a4w4.moe"},
                      TableCase{"kimik3_a8w4_tuned_fmoe.csv", "kimi_k3_tp8_a8w4.moe"},
                      TableCase{"kimik3_fp4_tuned_fmoe.csv", "kimi_k3_tp8_a16w4.moe"},
                      TableCase{"dsv3_fp4_tuned_fmoe.csv", "deepseek_v3_tp8_a4w4.moe"}),
    [](const ::testing::TestParamInfo<TableCase> &info) {
      return std::string(llvm::StringRef(info.param.csv).rsplit("_tuned").first);
    });

} // namespace
