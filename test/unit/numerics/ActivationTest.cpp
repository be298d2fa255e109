//===- ActivationTest.cpp - the reference's activation is the spec's ------===//

#include "TestSpecs.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>

using namespace moegen;

namespace {

int64_t ulpDistance(float a, float b) {
  auto key = [](float f) {
    int32_t i = std::bit_cast<int32_t>(f);
    return i < 0 ? static_cast<int64_t>(INT32_MIN) - i : static_cast<int64_t>(i);
  };
  return std::llabs(key(a) - key(b));
}

double situv2Formula(double g, double u, double beta, double lb) {
  double sig = 1.0 / (1.0 + std::exp(-g));
  return beta * std::tanh(g / beta) * sig * (lb * std::tanh(u / lb));
}

TEST(Activation, Situv2MatchesFormulaOnGrid) {
  ActivationExpr act = test::situv2(4.0, 25.0);
  int64_t worstF32 = 0, worstF64 = 0;
  for (int i = -40; i <= 40; ++i)
    for (int j = -40; j <= 40; ++j) {
      float g = static_cast<float>(i) * 0.37f, u = static_cast<float>(j) * 1.13f;
      float exact = static_cast<float>(situv2Formula(g, u, 4.0, 25.0));
      worstF32 = std::max(worstF32, ulpDistance(evalActivationF32(act, g, u), exact));
      float viaF64 = static_cast<float>(evalActivationF64(act, g, u));
      worstF64 = std::max(worstF64, ulpDistance(viaF64, exact));
    }
  EXPECT_LE(worstF32, 1);
  EXPECT_LE(worstF64, 1);
  // Large inputs: both factors saturate, at beta and linear_beta.
  EXPECT_EQ(evalActivationF32(act, 80.0f, 1e4f), 100.0f);
  EXPECT_EQ(evalActivationF32(act, 80.0f, -1e4f), -100.0f);
}

TEST(Activation, ParametersComeFromTheSpec) {
  // Two specs that differ only in beta evaluate differently: the reference
  // reads beta from the spec it is given and from nowhere else.
  ActivationExpr a = test::situv2(4.0, 25.0), b = test::situv2(1.0, 1.0);
  EXPECT_EQ(a.param("beta"), 4.0);
  EXPECT_EQ(b.param("linear_beta"), 1.0);
  EXPECT_NE(evalActivationF32(a, 3.0f, 2.0f), evalActivationF32(b, 3.0f, 2.0f));
}

} // namespace
