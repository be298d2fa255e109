//===- LimitsTest.cpp - Spec limits, nesting, numbers and overrides -------===//

#include "compiler/spec/DslParser.h"
#include "compiler/spec/SpecLimits.h"
#include "test/unit/spec/SpecFixtures.h"

#include <gtest/gtest.h>

using namespace moegen;
using moegen::test::smallSpec;

namespace {

std::string errorOf(llvm::Error e) { return e ? llvm::toString(std::move(e)) : ""; }

std::string activationError(const std::string &text) {
  auto act = parseActivation(text);
  return act ? "" : llvm::toString(act.takeError());
}

std::string repeat(llvm::StringRef s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i)
    out += s;
  return out;
}

TEST(SpecLimits, NestingDeeperThanTheLimitIsAnErrorAtItsLocation) {
  // Parentheses, unary minus and a long left-leaning chain; 100000 deep must
  // neither overflow the stack nor be accepted.
  for (int n : {300, 100000}) {
    std::string parens = "act(g, u) = " + repeat("(", n) + "g" + repeat(")", n) + " * u";
    std::string negs = "act(g, u) = " + repeat("-", n) + "g * u";
    std::string chain = "act(g, u) = g" + repeat(" + g", n) + " * u";
    for (const std::string &text : {parens, negs, chain}) {
      std::string err = activationError(text);
      EXPECT_NE(err.find("error: expression nested deeper than 256 levels"), std::string::npos)
          << text.substr(0, 40) << ": " << err.substr(0, 200);
    }
  }
  EXPECT_EQ(activationError("act(g, u) = " + repeat("(", 200) + "g" + repeat(")", 200) + " * u"),
            "");
  // The location is where the limit is crossed: parenthesis 256 of the input.
  std::string err = activationError("act(g, u) = " + repeat("(", 300) + "g" + repeat(")", 300));
  EXPECT_EQ(err.substr(0, err.find(" error")), "activation:1:269:");
}

TEST(SpecLimits, NonFiniteNumbersAreRejectedWhereWritten) {
  EXPECT_NE(activationError("situv2(beta = 1e999)")
                .find("activation:1:15: error: number '1e999' is out of the range of a double"),
            std::string::npos);
  EXPECT_NE(activationError("act(g, u; b = 1e400) = g * b * u").find("activation:1:15: error"),
            std::string::npos);
  EXPECT_NE(activationError("act(g, u) = g * 1e999 * u").find("activation:1:17: error"),
            std::string::npos);
}

TEST(SpecLimits, ParametersCannotTakeThePrintedArgumentNames) {
  // act(x, y; g = 2) would print as act(g, u; g = 2.0) = g * g * u.
  EXPECT_NE(activationError("act(x, y; g = 2.0) = x * g * y")
                .find("activation:1:11: error: parameter name 'g' is reserved"),
            std::string::npos);
  EXPECT_NE(activationError("act(x, y; u = 2.0) = x * u * y").find("parameter name 'u'"),
            std::string::npos);
  // A spec built in C++ is checked too.
  MoeSpec s = smallSpec();
  auto act = parseActivation("act(x, y; b = 2.0) = x * b * y");
  ASSERT_TRUE(static_cast<bool>(act));
  s.activation = *act;
  s.activation.params[0].name = "g";
  EXPECT_NE(errorOf(checkSpecLimits(s)).find("activation parameter 'g' clashes"),
            std::string::npos);
}

TEST(SpecLimits, PrintedSpecParsesBackToTheSameSpec) {
  for (double v : {0.1, 1e-7, 25.000000000000004, 0.00012345678901234567, 1.2345678901234567e300,
                   123456789012345.67, 5e-324, 0.30000000000000004, 1.0 / 3.0}) {
    MoeSpec s = smallSpec();
    auto act = parseActivation("act(g, u; b = 1.0) = g * b * u - 2.5");
    ASSERT_TRUE(static_cast<bool>(act));
    s.activation = *act;
    s.activation.params[0].value = v;
    std::string text = printMoeSpec(s);
    auto back = parseMoeSpec(text, "printed.moe");
    ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
    EXPECT_TRUE(sameSpec(*back, s)) << v << " printed as\n" << text;
    EXPECT_EQ(back->activation.params[0].value, v);
    EXPECT_EQ(printMoeSpec(*back), text);
    // Built-in parameters too.
    if (v > 0) {
      auto builtin =
          parseActivation(printActivation(*makeBuiltinActivation("situv2", {{"beta", v}})));
      ASSERT_TRUE(static_cast<bool>(builtin));
      EXPECT_EQ(builtin->param("beta"), v);
    }
  }
}

TEST(SpecLimits, SetAppliesEveryStatementOrNone) {
  MoeSpec s = smallSpec();
  ASSERT_FALSE(applySpecOverride(s, "topk=4; experts=32"));
  EXPECT_EQ(s.problem.topk, 4);
  EXPECT_EQ(s.problem.experts, 32);
  ASSERT_FALSE(applySpecOverride(s, "stage1.k_batch=2;stage2.reduce=reduce"));
  EXPECT_EQ(s.stage1.kBatch, 2);
  EXPECT_EQ(s.stage2.reduce, ReduceMode::Reduce);
  // A ';' inside an activation's signature is not a statement separator.
  ASSERT_FALSE(applySpecOverride(s, "activation=act(g, u; b = 2.0) = g * b * u; topk=3"));
  EXPECT_EQ(s.activation.param("b"), 2.0);
  EXPECT_EQ(s.problem.topk, 3);
  // One bad statement: an error naming it, and nothing applied.
  std::string err = errorOf(applySpecOverride(s, "topk=8; expert=2"));
  EXPECT_NE(err.find("--set expert=2:1:1: error: unknown key 'expert'"), std::string::npos) << err;
  EXPECT_EQ(s.problem.topk, 3);
}

TEST(SpecLimits, OutOfRangeValuesNameTheKeyAndBounds) {
  struct Case {
    const char *set, *message;
  } cases[] = {
      {"experts=4611686018427387904", "experts=4611686018427387904 is out of range; it must be in "
                                      "[1, 65536]"},
      {"model_dim=4294967296", "model_dim=4294967296 is out of range; it must be in [1, 65536]"},
      {"inter_dim=2147483648", "inter_dim=2147483648 is out of range; it must be in [1, 65536]"},
      {"topk=9", "topk=9 is out of range; it must be in [1, 8]"},
      {"topk=256; experts=1024", "topk=256 is out of range; it must be in [1, 255]"},
      {"stage1.tile=32x32x4611686018427387904",
       "stage1.tile_k=4611686018427387904 is out of range; it must be in [1, 4096]"},
      {"stage2.k_wave=4611686018427387904",
       "stage2.k_wave=4611686018427387904 is out of range; it must be in [1, 16]"},
      {"stage1.k_batch=65537", "stage1.k_batch=65537 is out of range; it must be in [1, 65536]"},
  };
  for (const Case &c : cases) {
    MoeSpec s = smallSpec();
    ASSERT_FALSE(applySpecOverride(s, c.set)) << c.set;
    std::string err = errorOf(checkSpecLimits(s));
    EXPECT_NE(err.find(c.message), std::string::npos) << c.set << ": " << err;
    EXPECT_NE(err.find("--set "), std::string::npos) << c.set << ": " << err;
  }
  // A value from the file points at its line.
  MoeSpec s = smallSpec();
  s.problem.experts = int64_t(1) << 62;
  EXPECT_EQ(errorOf(checkSpecLimits(s)),
            "small.moe:4:3: error: experts=4611686018427387904 is out of range; it must be in "
            "[1, 65536]");
  EXPECT_EQ(errorOf(checkSpecLimits(smallSpec())), "");
}

TEST(SpecLimits, TokenCounts) {
  EXPECT_EQ(errorOf(checkTokenCount(1, "--tokens")), "");
  EXPECT_EQ(errorOf(checkTokenCount(limits::kMaxTokens, "--tokens")), "");
  EXPECT_EQ(errorOf(checkTokenCount(1000000000000, "--tokens")),
            "--tokens: 1000000000000 tokens is out of range; it must be in [1, 16777215]");
  EXPECT_NE(errorOf(checkTokenCount(0, "--tokens")), "");
}

TEST(SpecLimits, HostMemoryIsCheckedBeforeAllocating) {
  MoeSpec s = smallSpec();
  EXPECT_EQ(errorOf(checkHostMemory(s, 16, uint64_t(1) << 30)), "");
  s.problem.experts = s.problem.modelDim = s.problem.interDim = limits::kMaxDim;
  std::string err = errorOf(checkHostMemory(s, limits::kMaxTokens, uint64_t(64) << 30));
  EXPECT_TRUE(llvm::StringRef(err).starts_with(
      "the layer's inputs and reference for 16777215 tokens need about "))
      << err;
  EXPECT_TRUE(llvm::StringRef(err).ends_with(
      " GiB of host memory (experts=65536, model_dim=65536, inter_dim=65536), more than the 64 "
      "GiB this machine has"))
      << err;
}

} // namespace
