//===- DslTest.cpp - The .moe DSL ------------------------------------------===//

#include "compiler/spec/DslParser.h"
#include "test/unit/spec/SpecFixtures.h"

#include <gtest/gtest.h>

using namespace moegen;

namespace {

const char *kKimi = R"(moe kimi {
  model_dim = 3584
  inter_dim = 384
  experts = 896
  topk = 16
  activation_dtype = mxfp4
  activation = situv2(beta = 4.0, linear_beta = 25.0)
  stage1 { tile = 32x32x256; k_wave = 2; waves_per_eu = 4; fused_quant = fp4 }
  stage2 { tile = 32x128x128; reduce = reduce }
}
)";

MoeSpec parseOk(llvm::StringRef text) { return test::parseSpecOrFail(text, "test.moe"); }

std::string parseError(const char *text) {
  auto spec = parseMoeSpec(text, "test.moe");
  if (spec)
    return "";
  return llvm::toString(spec.takeError());
}

TEST(Dsl, ParsesEveryField) {
  MoeSpec s = parseOk(kKimi);
  EXPECT_EQ(s.name, "kimi");
  EXPECT_EQ(s.problem.modelDim, 3584);
  EXPECT_EQ(s.problem.interDim, 384);
  EXPECT_EQ(s.problem.experts, 896);
  EXPECT_EQ(s.problem.topk, 16);
  EXPECT_EQ(s.problem.gateUp, GateUpLayout::Separated);
  EXPECT_FALSE(s.problem.doweightStage1);
  EXPECT_EQ(s.formats.activation, DType::MXFP4);
  EXPECT_EQ(s.formats.weight, DType::MXFP4);
  EXPECT_EQ(s.activation.name, "situv2");
  EXPECT_EQ(s.activation.param("linear_beta"), 25.0);
  EXPECT_EQ(s.stage1.tileM, 32);
  EXPECT_EQ(s.stage1.tileN, 32);
  EXPECT_EQ(s.stage1.tileK, 256);
  EXPECT_EQ(s.stage1.kWave, 2);
  EXPECT_EQ(s.stage1.wavesPerEU, 4);
  EXPECT_EQ(s.stage1.fusedQuant, FusedQuant::FP4);
  EXPECT_EQ(s.stage2.reduce, ReduceMode::Reduce);
  EXPECT_EQ(s.stageK(StageId::Stage1), 3584);
  EXPECT_EQ(s.stageK(StageId::Stage2), 384);
  EXPECT_EQ(precisionTag(s.formats), "a4w4");
}

TEST(Dsl, RecordsSourceLocations) {
  MoeSpec s = parseOk(kKimi);
  ASSERT_TRUE(s.locations.count("stage1.k_wave"));
  EXPECT_EQ(s.locations["stage1.k_wave"].file, "test.moe");
  EXPECT_EQ(s.locations["stage1.k_wave"].line, 8u);
  EXPECT_EQ(s.locations["stage1.k_wave"].col, 30u);
  EXPECT_EQ(s.locations["topk"].line, 5u);
}

TEST(Dsl, PrintParsePrintIsAFixedPoint) {
  MoeSpec s = parseOk(kKimi);
  std::string once = printMoeSpec(s);
  MoeSpec again = parseOk(once.c_str());
  EXPECT_EQ(printMoeSpec(again), once);
  EXPECT_EQ(again.stage1.kWave, 2);
  EXPECT_EQ(again.activation.param("beta"), 4.0);
}

TEST(Dsl, OverridesUseTheSameSyntax) {
  MoeSpec s = parseOk(kKimi);
  ASSERT_FALSE(static_cast<bool>(applySpecOverride(s, "stage1.k_batch=7")));
  EXPECT_EQ(s.stage1.kBatch, 7);
  ASSERT_FALSE(static_cast<bool>(applySpecOverride(s, "stage2.tile = 64x256x128")));
  EXPECT_EQ(s.stage2.tileM, 64);
  ASSERT_FALSE(static_cast<bool>(applySpecOverride(s, "activation=swiglu(limit = 10.0)")));
  EXPECT_EQ(s.activation.param("limit"), 10.0);
  llvm::Error e = applySpecOverride(s, "stage1.k_batch=0");
  ASSERT_TRUE(static_cast<bool>(e));
  EXPECT_NE(llvm::toString(std::move(e)).find("'k_batch' must be positive, got 0"),
            std::string::npos);
  EXPECT_EQ(s.stage1.kBatch, 7); // a failed override changes nothing it rejected
}

TEST(Dsl, ErrorsCarryFileLineColumn) {
  std::string err = parseError("moe l {\n  topk = 2\n  topk = 3\n}\n");
  EXPECT_EQ(err.rfind("test.moe:3:3: error: 'topk' is given twice (first at line 2)", 0), 0u)
      << err;
  err = parseError("moe l {\n  activation = act(g, u) = g * beta\n}\n");
  EXPECT_EQ(err.rfind("test.moe:2:32: error: unknown name 'beta'", 0), 0u) << err;
}

TEST(Dsl, ReadsFiles) {
  auto missing = parseMoeSpecFile("/nonexistent/dir/x.moe");
  ASSERT_FALSE(static_cast<bool>(missing));
  EXPECT_NE(llvm::toString(missing.takeError()).find("cannot read '/nonexistent/dir/x.moe'"),
            std::string::npos);
  const char *src = std::getenv("MOEGEN_SOURCE_DIR");
  ASSERT_NE(src, nullptr);
  auto kimi = parseMoeSpecFile(std::string(src) + "/examples/kimi_k3_tp8_a4w4.moe");
  ASSERT_TRUE(static_cast<bool>(kimi)) << llvm::toString(kimi.takeError());
  EXPECT_EQ(kimi->stage1.kWave, 2);
  EXPECT_EQ(kimi->stage1.wavesPerEU, 4);
}

} // namespace

namespace {

TEST(Spec, StructuralEqualityAndHashIgnoreLocations) {
  MoeSpec a = parseOk(kKimi);
  MoeSpec b = parseOk(printMoeSpec(a).c_str()); // other source locations
  EXPECT_TRUE(sameSpec(a, b));
  EXPECT_EQ(hashSpec(a), hashSpec(b));
  MoeSpec c = b;
  ASSERT_FALSE(static_cast<bool>(applySpecOverride(c, "stage1.k_batch=7")));
  EXPECT_FALSE(sameSpec(a, c));
  EXPECT_NE(hashSpec(a), hashSpec(c));
  MoeSpec d = b;
  ASSERT_FALSE(
      static_cast<bool>(applySpecOverride(d, "activation=situv2(beta = 4.0, linear_beta = 24.0)")));
  EXPECT_FALSE(sameSpec(a, d));
  MoeSpec e = b;
  ASSERT_FALSE(static_cast<bool>(applySpecOverride(
      e, "activation=situv2x(g, u; beta = 4.0, linear_beta = 25.0) = beta * tanh(g / beta) * "
         "sigmoid(g) * (linear_beta * tanh(u / linear_beta))")));
  EXPECT_FALSE(sameSpec(a, e)); // same values, but a user-written activation
}

} // namespace
