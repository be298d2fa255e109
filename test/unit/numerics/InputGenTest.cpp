//===- InputGenTest.cpp - Generated layer inputs ---------------------------===//

#include "runtime/numerics/InputGen.h"

#include "TestSpecs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using namespace moegen;
using namespace moegen::num;
using moegen::test::unwrap;

namespace {

MoeSpec genSpec(DType weight) {
  MoeSpec spec = test::smallSpec(DType::BF16, weight, FusedQuant::None);
  spec.problem.modelDim = 96;
  spec.problem.interDim = 64;
  spec.problem.experts = 12;
  spec.problem.topk = 3;
  return spec;
}

bool anyNonZero(const std::vector<uint8_t> &bytes) {
  return std::any_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b != 0; });
}

} // namespace

// Every expert is a task of its own: one thread or several give the same
// bytes, with all experts and with the routed ones only (compact or not).
TEST(InputGen, SameBytesForAnyThreadCount) {
  for (DType weight : {DType::MXFP4, DType::MXFP8, DType::BF16})
    for (int mode = 0; mode < 3; ++mode) {
      SCOPED_TRACE(toString(weight).str() + " mode " + std::to_string(mode));
      MoeSpec spec = genSpec(weight);
      GenOptions one;
      one.seed = 7;
      one.onlyRoutedExperts = mode > 0;
      one.compactExperts = mode > 1;
      one.threads = 1;
      GenOptions many = one;
      many.threads = 5;
      LayerInputs a = unwrap(generateInputs(spec, 3, one));
      LayerInputs b = unwrap(generateInputs(spec, 3, many));
      for (auto [x, y] : {std::pair{&a.w1, &b.w1}, std::pair{&a.w2, &b.w2}}) {
        EXPECT_EQ(x->shape, y->shape);
        EXPECT_EQ(x->data, y->data);
        EXPECT_EQ(x->scales, y->scales);
        EXPECT_TRUE(anyNonZero(x->data));
      }
      EXPECT_EQ(a.experts, b.experts);
      EXPECT_EQ(a.topkIds, b.topkIds);
      EXPECT_EQ(a.hidden, b.hidden);
      if (mode > 1)
        EXPECT_EQ(a.w1.shape[0], static_cast<int64_t>(a.experts.size()));
    }
}

// Expert e of a weight is stream (weight, e) of the seed's normals times the
// weight's scale, encoded as one [rows, cols] matrix: generating it row by
// row gives the bytes of encoding it whole.
TEST(InputGen, ExpertIsItsStreamEncodedWhole) {
  for (DType weight : {DType::MXFP4, DType::MXFP8, DType::BF16}) {
    SCOPED_TRACE(toString(weight).str());
    MoeSpec spec = genSpec(weight);
    const int64_t K = spec.problem.modelDim, I = spec.problem.interDim;
    GenOptions opts;
    opts.seed = 11;
    LayerInputs in = unwrap(generateInputs(spec, 2, opts));
    struct Weight {
      const HostTensor *w;
      uint64_t stream;
      int64_t rows, cols;
      double scale;
    };
    for (const Weight &wt :
         {Weight{&in.w1, 3, 2 * I, K, opts.w1Scale}, Weight{&in.w2, 4, K, I, opts.w2Scale}})
      for (int64_t e : {int64_t(0), int64_t(5), spec.problem.experts - 1}) {
        Rng rng(opts.seed * 0x100000001B3ull + (wt.stream << 32) + e);
        std::vector<float> values(wt.rows * wt.cols);
        for (float &v : values)
          v = static_cast<float>(rng.fastNormal() * wt.scale);
        HostTensor want = unwrap(
            convertTo(values, {wt.rows, wt.cols}, elemFormatOf(weight), opts.weightRounding));
        const size_t bytes = want.data.size(), scales = want.scales.size();
        ASSERT_EQ(wt.w->data.size(), bytes * spec.problem.experts);
        EXPECT_TRUE(std::equal(want.data.begin(), want.data.end(), wt.w->data.begin() + e * bytes))
            << "stream " << wt.stream << " expert " << e;
        EXPECT_TRUE(
            std::equal(want.scales.begin(), want.scales.end(), wt.w->scales.begin() + e * scales))
            << "stream " << wt.stream << " expert " << e;
      }
  }
}

// The ziggurat's slow paths (wedge, tail) take a few percent of the draws:
// over many draws they appear, and the sample still looks like N(0, 1).
TEST(InputGen, FastNormalMoments) {
  Rng rng(3);
  const int n = 1 << 20;
  double sum = 0, sq = 0, beyondR = 0;
  for (int i = 0; i < n; ++i) {
    double v = rng.fastNormal();
    sum += v;
    sq += v * v;
    beyondR += std::fabs(v) > 3.442619855899;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.005);
  EXPECT_NEAR(sq / n, 1.0, 0.01);
  EXPECT_GT(beyondR, 0); // tail draws happened (expected ~600)
}

// Bad problems are errors that name the numbers, not crashes.
TEST(InputGen, BadProblemIsAnError) {
  MoeSpec spec = genSpec(DType::MXFP4);
  spec.problem.topk = 13;
  auto r = generateInputs(spec, 2);
  ASSERT_FALSE(!!r);
  std::string msg = llvm::toString(r.takeError());
  EXPECT_NE(msg.find("topk 13"), std::string::npos) << msg;
  spec = genSpec(DType::MXFP4);
  spec.problem.modelDim = 40; // not whole MX blocks
  auto q = generateInputs(spec, 2);
  ASSERT_FALSE(!!q);
  msg = llvm::toString(q.takeError());
  EXPECT_NE(msg.find("multiple of 32"), std::string::npos) << msg;
}

// moegen run / moegen-layer-check --weight-scale multiply the weights'
// standard deviations: at 64, MX blocks get e8m0 scales above 2 (exponent
// 129 and up), which the default magnitudes never reach.
TEST(InputGen, WeightScaleReachesLargeMxScales) {
  MoeSpec spec = genSpec(DType::MXFP4);
  auto largestScale = [](const HostTensor &t) {
    return *std::max_element(t.scales.begin(), t.scales.end());
  };
  GenOptions plain;
  plain.seed = 5;
  LayerInputs a = unwrap(generateInputs(spec, 4, plain));
  EXPECT_LE(largestScale(a.w1), 128);
  EXPECT_LE(largestScale(a.w2), 128);
  GenOptions large = plain;
  large.w1Scale *= 64;
  large.w2Scale *= 64;
  LayerInputs b = unwrap(generateInputs(spec, 4, large));
  EXPECT_GT(largestScale(b.w1), 128);
  EXPECT_GT(largestScale(b.w2), 128);
}
