//===- ReduceKernelTest.cpp - The stage-2 top-k reduction kernel ---------===//

#include "KernelTestUtil.h"

#include "templates/reduce/ReduceKernel.h"

#include "runtime/numerics/Formats.h"

#include "gtest/gtest.h"

#include <random>

using namespace moegen;
using namespace moegen::test;

namespace {

TargetInfo gfx950() { return TargetInfo::defaultTarget(); }

ReducePlan makePlan(int64_t cols, int64_t topk, int64_t experts) {
  ReducePlan p;
  p.cols = cols;
  p.topk = topk;
  p.experts = experts;
  return p;
}

llvm::Expected<BuiltKernel> compileReduce(const ReducePlan &plan) {
  std::string symbol = reduceKernelSymbol(plan);
  return compileKernel(symbol, [&](mlir::ImplicitLocOpBuilder &b, mlir::gpu::GPUModuleOp m) {
    buildReduceKernel(b, m, symbol, plan);
  });
}

TEST(ReducePlan, OnlyForReduceMode) {
  MoeSpec spec;
  spec.problem = {/*modelDim=*/3584, /*interDim=*/384, /*experts=*/896, /*topk=*/16};
  ScheduleIssues issues;
  EXPECT_FALSE(planReduce(spec, gfx950(), issues)); // atomic by default
  spec.stage2.reduce = ReduceMode::Reduce;
  auto plan = planReduce(spec, gfx950(), issues);
  ASSERT_TRUE(plan);
  EXPECT_TRUE(issues.empty());
  EXPECT_EQ(reduceKernelSymbol(*plan), "moe_reduce_k16_c3584");
  // 448 vectors of 8 columns: two workgroups of 256 threads per token.
  EXPECT_EQ(plan->grid(5), (std::array<int64_t, 3>{2, 5, 1}));

  spec.formats.output = DType::F32;
  spec.problem.modelDim = 3580;
  planReduce(spec, gfx950(), issues);
  ASSERT_EQ(issues.size(), 2u);
  EXPECT_EQ(issues[0].family, KernelFamily::Stage2);
  EXPECT_EQ(issues[0].parameter, "formats");
  EXPECT_EQ(issues[1].parameter, "reduce");
  EXPECT_NE(issues[1].message.find("3580"), std::string::npos);
}

TEST(ReduceKernel, CompilesForGfx950) {
  ReducePlan plan = makePlan(3584, 16, 896);
  auto k = compileReduce(plan);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  const KernelResources &r = k->resources;
  EXPECT_EQ(r.scratchBytes, 0);
  EXPECT_EQ(r.vgprSpills + r.sgprSpills, 0);
  EXPECT_EQ(r.ldsBytes, 0);
  EXPECT_EQ(r.maxFlatWorkgroupSize, 256);
  EXPECT_EQ(r.kernargBytes, 28);
  const std::string &isa = k->code.isa;
  EXPECT_GE(countInstructions(isa, "global_load_dwordx4"), 1);
  EXPECT_EQ(countInstructions(isa, "global_store_dwordx4"), 1);
  EXPECT_GE(countInstructions(isa, "v_cvt_pk_bf16_f32"), 4); // one rounding, 8 columns
  EXPECT_EQ(isa.find("scratch_"), std::string::npos);
  // Nothing atomic: the sum is ordered.
  EXPECT_EQ(isa.find("atomic"), std::string::npos);
}

TEST(ReduceKernel, SumsRoutedSlotsInOrderOnEmulator) {
  const int64_t tokens = 7, topk = 4, experts = 6, cols = 8 * 300; // 2 column groups
  ReducePlan plan = makePlan(cols, topk, experts);
  auto k = compileReduce(plan);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  auto emu = loadOnEmulator(*k);
  ASSERT_TRUE(emu);

  std::mt19937 rng(3);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> expo(-8, 8);
  std::vector<int32_t> ids(tokens * topk);
  for (int64_t i = 0; i < tokens * topk; ++i)
    ids[i] = int32_t(i % experts);
  ids[1] = -1;      // dropped by the router
  ids[6] = experts; // outside [0, experts): not routed
  for (int64_t s = 0; s < topk; ++s)
    ids[5 * topk + s] = -1; // token 5 has no routed slot
  std::vector<uint16_t> rows(tokens * topk * cols);
  for (int64_t r = 0; r < tokens * topk; ++r) {
    bool routed = ids[r] >= 0 && ids[r] < experts;
    for (int64_t c = 0; c < cols; ++c)
      // Unrouted rows hold NaN: reading one would poison the sum.
      rows[r * cols + c] = routed ? num::encodeBf16(std::ldexp(unit(rng), expo(rng))) : 0x7FC0;
  }
  DeviceBuffer<uint16_t> drows(*emu, rows);
  DeviceBuffer<int32_t> dids(*emu, ids);
  DeviceBuffer<uint16_t> dout(*emu, std::vector<uint16_t>((tokens + 1) * cols, 0xBEEF));
  llvm::Error err = Launch()
                        .ptr(drows.addr)
                        .ptr(dids.addr)
                        .ptr(dout.addr)
                        .i32(tokens)
                        .run(*emu, reduceKernelSymbol(plan), plan.grid(tokens), plan.threads);
  ASSERT_FALSE(bool(err)) << llvm::toString(std::move(err));

  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t c = 0; c < cols; ++c) {
      float sum = 0.0f; // f32, slot order, one rounding
      for (int64_t s = 0; s < topk; ++s)
        if (ids[t * topk + s] >= 0 && ids[t * topk + s] < experts)
          sum += num::decodeBf16(rows[(t * topk + s) * cols + c]);
      ASSERT_EQ(dout.host[t * cols + c], num::encodeBf16(sum)) << "token " << t << " col " << c;
    }
  for (int64_t c = 0; c < cols; ++c)
    ASSERT_EQ(dout.host[tokens * cols + c], 0xBEEF) << "past the last token";
}

} // namespace
