//===- SortPlanTest.cpp - The sorting kernels' plan per target ------------===//
//
// gfx950 keeps its plan (512 threads in waves of 64); sm_90a plans warps of
// 32 and as many of them (up to 16) as the 48 KiB of static shared memory
// holds, and names that limit and the most experts it allows.
//
//===----------------------------------------------------------------------===//

#include "templates/sort/SortPlan.h"

#include <gtest/gtest.h>

using namespace moegen;

namespace {

MoeSpec layer(int64_t experts, int64_t topk) {
  MoeSpec spec;
  spec.name = "t";
  spec.problem = {3584, 384, experts, topk};
  spec.formats = {DType::MXFP4, DType::MXFP4, DType::BF16};
  spec.stage1 = {32, 128, 256};
  spec.stage2 = {32, 128, 128};
  return spec;
}

const TargetInfo kSm90a = *TargetInfo::forChip(TargetInfo::kHopperChip);

SortPlan plan(int64_t experts, int64_t topk, const TargetInfo &target, ScheduleIssues &issues) {
  return planSort(layer(experts, topk), target, issues);
}

TEST(SortPlan, Gfx950KeepsWave64AndFiveHundredTwelveThreads) {
  ScheduleIssues issues;
  SortPlan p = plan(896, 16, TargetInfo::defaultTarget(), issues);
  EXPECT_TRUE(issues.empty());
  EXPECT_EQ(p.waveSize, 64);
  EXPECT_EQ(p.threads, 512);
  EXPECT_EQ(p.waves(), 8);
  EXPECT_EQ(p.scanThreads, 64);
  EXPECT_EQ(p.chunkTokens, 128);
  EXPECT_EQ(p.singleEntries, 8192); // sort alone up to 512 tokens
  EXPECT_EQ(p.tinyEntries, 32);     // wave 0 alone, in registers, up to 2 tokens
  // At most 32 experts: at most 32 trips of the lone wave's loop for a wave of entries.
  EXPECT_EQ(plan(32, 2, TargetInfo::defaultTarget(), issues).tinyEntries, 64);
  EXPECT_EQ(plan(33, 2, TargetInfo::defaultTarget(), issues).tinyEntries, 32);
  EXPECT_FALSE(p.singleChunk(513));
  EXPECT_EQ(p.partPerLane(), 4); // 2048 entries over 8 waves of 64
  EXPECT_EQ(p.scatterLdsBytes(), 61024);
  EXPECT_EQ(p.maxExperts(TargetInfo::defaultTarget().staticLdsBytes), 2408);
}

TEST(SortPlan, Sm90aPlansWarp32WithinSharedMemory) {
  EXPECT_EQ(kSm90a.staticLdsBytes, 48 * 1024);
  ScheduleIssues issues;
  // Few experts: 16 warps of 32.
  SortPlan small = plan(8, 2, kSm90a, issues);
  EXPECT_EQ(small.waveSize, 32);
  EXPECT_EQ(small.threads, 512);
  EXPECT_EQ(small.waves(), 16);
  EXPECT_EQ(small.scanThreads, 32);
  // Chunks of 512 entries, and sort alone up to one chunk: more chunks
  // (workgroups) sooner than gfx950's 2048 and 8192.
  EXPECT_EQ(small.chunkTokens, 256);
  EXPECT_EQ(small.singleEntries, 512);
  EXPECT_EQ(small.tinyEntries, 32); // warp 0 alone: 8 experts, a whole warp of entries
  EXPECT_TRUE(small.singleChunk(256));
  EXPECT_FALSE(small.singleChunk(257));
  EXPECT_EQ(small.partPerLane(), 1); // 512 entries over 16 warps of 32
  // DeepSeek-V3 (257 experts, top-9): 16 warps still fit.
  SortPlan deepseek = plan(257, 9, kSm90a, issues);
  EXPECT_EQ(deepseek.threads, 512);
  EXPECT_EQ(deepseek.scatterLdsBytes(), 34128);
  EXPECT_FALSE(deepseek.dynamicShared);
  EXPECT_EQ(sortKernelSignature("s", deepseek).dynamicSharedBytes, 0);
  // Kimi (896 experts): 8 warps would need 61024 bytes; 4 need 32304 (16
  // warps in dynamic shared memory measured slower).
  SortPlan kimi = plan(896, 16, kSm90a, issues);
  EXPECT_EQ(kimi.threads, 128);
  EXPECT_EQ(kimi.waves(), 4);
  EXPECT_EQ(kimi.scatterLdsBytes(), 32304);
  EXPECT_FALSE(kimi.dynamicShared);
  EXPECT_EQ(kimi.chunkTokens, 32);
  EXPECT_EQ(kimi.chunks(256), 8);
  EXPECT_EQ(kimi.partPerLane(), 4);
  EXPECT_EQ(kimi.tinyEntries, 16); // warp 0 alone at 1 token
  // Two warps fill the 48 KiB of static shared memory at 2455 experts.
  SortPlan staticMost = plan(2455, 8, kSm90a, issues);
  EXPECT_EQ(staticMost.threads, 64);
  EXPECT_EQ(staticMost.scatterLdsBytes(), 49136);
  EXPECT_FALSE(staticMost.dynamicShared);
  // Beyond, two warps' rows are dynamic shared memory that each launch of
  // sort provides (sort_count keeps its static histogram).
  SortPlan dynamic = plan(2457, 8, kSm90a, issues);
  EXPECT_EQ(dynamic.threads, 64);
  EXPECT_TRUE(dynamic.dynamicShared);
  EXPECT_EQ(sortKernelSignature("s", dynamic).dynamicSharedBytes, 49184);
  EXPECT_EQ(sortCountKernelSignature("c", dynamic).dynamicSharedBytes, 0);
  // The most experts: within the 227 KiB a block may have.
  SortPlan most = plan(11620, 8, kSm90a, issues);
  EXPECT_EQ(most.threads, 64);
  EXPECT_EQ(most.scatterLdsBytes(), 232448);
  EXPECT_LE(most.scatterLdsBytes(), kSm90a.ldsBytes);
  EXPECT_TRUE(issues.empty()) << issues.front().str();
}

TEST(SortPlan, Sm90aSetsStageReadyWhereStage2FollowsStage1) {
  // Stage 1 writes stage 2's rows itself (bf16 activations, or MX ones
  // through its fused quantization): the sort sets each block's counter to
  // stage 1's N tiles (384 / 128), through an argument before tokens.
  ScheduleIssues issues;
  MoeSpec spec = layer(896, 16);
  spec.stage1.fusedQuant = FusedQuant::FP4;
  SortPlan p = planSort(spec, kSm90a, issues);
  EXPECT_TRUE(issues.empty());
  EXPECT_EQ(p.stageReadyCount, 3);
  EXPECT_EQ(sortKernelSymbol(p), "moe_sort_e896_k16_bm32_ready3");
  KernelSignature sig = sortKernelSignature(sortKernelSymbol(p), p);
  ASSERT_GE(sig.args.size(), 2u);
  EXPECT_EQ(sig.args[sig.args.size() - 2].name, "stage_ready");
  EXPECT_EQ(sig.args.back().name, "tokens");
  spec.formats.activation = DType::BF16;
  spec.stage1.fusedQuant = FusedQuant::None;
  EXPECT_EQ(planSort(spec, kSm90a, issues).stageReadyCount, 3);
  // The inter-stage quantization between the stages counts a block down by
  // one more after stage 1.
  spec.formats.activation = DType::MXFP4;
  EXPECT_EQ(planSort(spec, kSm90a, issues).stageReadyCount, 4);
  EXPECT_EQ(sortKernelSymbol(planSort(spec, kSm90a, issues)), "moe_sort_e896_k16_bm32_ready4");
  spec.formats.activation = DType::BF16;
  // Split-K's finish between the stages, stage 2 waiting for the grid, or
  // gfx950: no counters.
  spec.stage1.kBatch = 2;
  EXPECT_EQ(planSort(spec, kSm90a, issues).stageReadyCount, 0);
  spec.stage1.kBatch = 1;
  spec.stage2.wait = Stage2Wait::Grid;
  EXPECT_EQ(planSort(spec, kSm90a, issues).stageReadyCount, 0);
  spec.stage2.wait = Stage2Wait::Rows;
  SortPlan gfx = planSort(spec, TargetInfo::defaultTarget(), issues);
  EXPECT_EQ(gfx.stageReadyCount, 0);
  EXPECT_EQ(sortKernelSymbol(gfx), "moe_sort_e896_k16_bm32");
}

TEST(SortPlan, ExpertsOverTheLimitNameIt) {
  ScheduleIssues issues;
  plan(11621, 8, kSm90a, issues);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].parameter, "lds");
  EXPECT_EQ(issues[0].str(), "sort: experts=11621 need 232464 bytes of LDS, over the 232448-byte "
                             "limit of sm_90a (at most 11620 experts with 64 threads)");
  issues.clear();
  plan(2409, 8, TargetInfo::defaultTarget(), issues);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].str(), "sort: experts=2409 need 163920 bytes of LDS, over the 163840-byte "
                             "limit of gfx950 (at most 2408 experts with 512 threads)");
}

} // namespace
