//===- ReferenceTest.cpp - reference stages and the whole layer -----------===//

#include "TestSpecs.h"

#include "runtime/numerics/Compare.h"
#include "runtime/numerics/Formats.h"
#include "runtime/numerics/InputGen.h"
#include "runtime/numerics/Reference.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace moegen;
using namespace moegen::num;
using moegen::test::unwrap;

namespace {

TEST(Reference, HandComputedBf16) {
  // a16 x bf16, silu, one token routed to expert 1 with weight 0.75.
  auto silu = makeBuiltinActivation("silu", {});
  ASSERT_TRUE(silu.has_value());
  MoeSpec spec = test::smallSpec(DType::BF16, DType::BF16, FusedQuant::None, *silu);
  spec.problem.modelDim = 32;
  spec.problem.interDim = 32;
  spec.problem.topk = 1;
  spec.problem.experts = 2;
  const int64_t K = 32, I = 32;
  std::vector<float> x(K, 0.5f), w1(2 * 2 * I * K, 0.0f), w2(2 * K * I, 0.0f);
  for (int64_t n = 0; n < I; ++n)
    for (int64_t k = 0; k < K; ++k) {
      w1[(2 * I + n) * K + k] = static_cast<float>(n + 1) / 64.0f; // gate: g_n = (n+1)/4
      w1[(2 * I + I + n) * K + k] = 1.0f / 32.0f;                  // up: u = 0.5
    }
  for (int64_t m = 0; m < K; ++m)
    for (int64_t n = 0; n < I; ++n)
      w2[(K + m) * I + n] = (m % 2 ? 1.0f : -1.0f) / 64.0f;
  HostTensor a1 = makeBf16({1, K}, x);
  HostTensor t1 = makeBf16({2, 2 * I, K}, w1), t2 = makeBf16({2, K, I}, w2);
  std::vector<int32_t> ids = {1};
  std::vector<float> tw = {0.75f};
  LayerResult r = unwrap(referenceLayer(spec, a1, ids, tw, t1, t2));
  std::vector<float> h = decode(r.stage1.out);
  double sum = 0;
  for (int64_t n = 0; n < I; ++n) {
    double g = (n + 1) / 4.0;
    double want = g / (1 + std::exp(-g)) * 0.5;
    EXPECT_NEAR(r.stage1.preRound.data.empty() ? 0 : decode(r.stage1.preRound)[n], want,
                want * 1e-6);
    EXPECT_EQ(h[n], roundToBf16(decode(r.stage1.preRound)[n]));
    sum += h[n];
  }
  std::vector<float> out = decode(r.stage2.out);
  for (int64_t m = 0; m < K; ++m) {
    double want = (m % 2 ? 1 : -1) * sum / 64.0 * 0.75;
    EXPECT_NEAR(out[m], want, std::fabs(want) * 4e-3) << m;
  }
}

TEST(Reference, A4W4LayerAgainstF64) {
  MoeSpec spec = test::smallSpec(DType::MXFP4, DType::MXFP4, FusedQuant::FP4);
  LayerInputs in = unwrap(generateInputs(spec, 5, GenOptions{42}));
  RefOptions f32, f64;
  f64.accum = Accum::F64;
  LayerResult a =
      unwrap(referenceLayer(spec, in.a1, in.topkIds, in.topkWeights, in.w1, in.w2, f32));
  LayerResult b =
      unwrap(referenceLayer(spec, in.a1, in.topkIds, in.topkWeights, in.w1, in.w2, f64));
  EXPECT_EQ(a.stage1.out.format, ElemFormat::MXFP4);
  // Fused quant scales by sorted position are the per-row scales.
  const int64_t sc = a.stage1.out.scaleCols();
  for (int64_t pair = 0; pair < 5 * 2; ++pair) {
    int64_t pos = a.sorting.reverseSorted[pair];
    for (int64_t c = 0; c < sc; ++c)
      EXPECT_EQ(a.stage1.sortedScales[pos * sc + c], a.stage1.out.scales[pair * sc + c]);
  }
  CompareOptions loose;
  loose.maxMismatch = 1.0;
  auto accum = unwrap(compareTensors(b.stage2.out, a.stage2.out, {}, loose));
  EXPECT_LT(accum.cosineDiff, 1e-3) << accum.summary();
  // The quantized pipeline against the exact unquantized layer.
  std::vector<double> x(in.hidden.begin(), in.hidden.end());
  std::vector<double> ideal =
      unwrap(referenceLayerF64(spec, x, in.topkIds, in.topkWeights, in.w1, in.w2));
  std::vector<double> got = decodeF64(a.stage2.out);
  CompareResult vsIdeal = compareValues(ideal, got, 64, {}, loose);
  EXPECT_LT(vsIdeal.cosineDiff, 0.05) << vsIdeal.summary();
  EXPECT_GT(vsIdeal.cosineDiff, 0.0);
}

TEST(Reference, EveryFormatPath) {
  struct Case {
    DType a, w;
    FusedQuant fq;
    ElemFormat a2;
  } cases[] = {{DType::BF16, DType::MXFP4, FusedQuant::None, ElemFormat::BF16},
               {DType::MXFP8, DType::MXFP4, FusedQuant::None, ElemFormat::MXFP8},
               {DType::MXFP8, DType::MXFP4, FusedQuant::FP8, ElemFormat::MXFP8},
               {DType::MXFP4, DType::MXFP4, FusedQuant::None, ElemFormat::MXFP4},
               {DType::BF16, DType::BF16, FusedQuant::None, ElemFormat::BF16}};
  for (const Case &c : cases) {
    MoeSpec spec = test::smallSpec(c.a, c.w, c.fq);
    LayerInputs in = unwrap(generateInputs(spec, 3, GenOptions{1}));
    LayerResult r = unwrap(referenceLayer(spec, in.a1, in.topkIds, in.topkWeights, in.w1, in.w2));
    EXPECT_EQ(r.a2.format, c.a2);
    std::vector<double> x(in.hidden.begin(), in.hidden.end());
    std::vector<double> ideal =
        unwrap(referenceLayerF64(spec, x, in.topkIds, in.topkWeights, in.w1, in.w2));
    CompareOptions loose;
    loose.maxMismatch = 1.0;
    CompareResult cr = compareValues(ideal, decodeF64(r.stage2.out), 64, {}, loose);
    EXPECT_LT(cr.cosineDiff, 0.05) << toString(c.a).str() << ": " << cr.summary();
    EXPECT_EQ(cr.nonFinite, 0);
  }
}

TEST(Reference, DoweightAndStage2Sum) {
  MoeSpec spec = test::smallSpec(DType::BF16, DType::MXFP4, FusedQuant::None);
  LayerInputs in = unwrap(generateInputs(spec, 4, GenOptions{9}));
  MoeSpec dw = spec;
  dw.problem.doweightStage1 = true;
  LayerResult a = unwrap(referenceLayer(spec, in.a1, in.topkIds, in.topkWeights, in.w1, in.w2));
  LayerResult b = unwrap(referenceLayer(dw, in.a1, in.topkIds, in.topkWeights, in.w1, in.w2));
  std::vector<float> pa = decode(a.stage1.preRound), pb = decode(b.stage1.preRound);
  const int64_t I = 64, K = 64, topk = 2;
  for (int64_t pair = 0; pair < 4 * topk; ++pair)
    for (int64_t n = 0; n < I; ++n)
      EXPECT_EQ(pb[pair * I + n], pa[pair * I + n] * in.topkWeights[pair]);
  // Stage 2 sums the weighted slot rows in slot order.
  std::vector<float> slots = decode(a.stage2.perSlot), sums = decode(a.stage2.preRound);
  for (int64_t t = 0; t < 4; ++t)
    for (int64_t n = 0; n < K; ++n) {
      float s = 0;
      for (int64_t k = 0; k < topk; ++k)
        s += slots[(t * topk + k) * K + n];
      EXPECT_EQ(sums[t * K + n], s);
    }
  // bf16 atomics differ from one rounding by at most a few bf16 ulps.
  RefOptions atomic;
  atomic.sum = Stage2Sum::Bf16Atomic;
  LayerResult c =
      unwrap(referenceLayer(spec, in.a1, in.topkIds, in.topkWeights, in.w1, in.w2, atomic));
  std::vector<float> oa = decode(a.stage2.out), oc = decode(c.stage2.out);
  for (size_t i = 0; i < oa.size(); ++i)
    EXPECT_NEAR(oa[i], oc[i], std::fabs(oa[i]) * 0.02 + 1e-3);
  // Per-slot bf16 rows (reduce=reduce): each slot rounded, summed in f32.
  RefOptions rows;
  rows.sum = Stage2Sum::Bf16SlotRows;
  LayerResult d =
      unwrap(referenceLayer(spec, in.a1, in.topkIds, in.topkWeights, in.w1, in.w2, rows));
  std::vector<float> rowSums = decode(d.stage2.preRound);
  int64_t differs = 0;
  for (int64_t t = 0; t < 4; ++t)
    for (int64_t n = 0; n < K; ++n) {
      float s = 0;
      for (int64_t k = 0; k < topk; ++k)
        s += roundToBf16(slots[(t * topk + k) * K + n]);
      EXPECT_EQ(rowSums[t * K + n], s);
      differs += rowSums[t * K + n] != sums[t * K + n];
    }
  EXPECT_GT(differs, 0); // the rounding of the slot rows is visible
}

TEST(Reference, ActivationOnlyFromSpec) {
  MoeSpec spec = test::smallSpec(DType::BF16, DType::BF16, FusedQuant::None);
  LayerInputs in = unwrap(generateInputs(spec, 2, GenOptions{5}));
  MoeSpec other = spec;
  other.activation = test::situv2(1.0, 1.0);
  auto sorting = unwrap(sortMoe(in.topkIds, in.topkWeights, 2, 2, 4, 32));
  Stage1Result a = unwrap(referenceStage1(spec, in.a1, sorting, in.w1));
  Stage1Result b = unwrap(referenceStage1(other, in.a1, sorting, in.w1));
  EXPECT_NE(decode(a.preRound), decode(b.preRound));
  // Element (token 0, slot 0, n 3) recomputed by hand through the spec.
  const int64_t K = 64, I = 64, n = 3;
  std::vector<float> x = decode(in.a1), w = decode(in.w1);
  int64_t e = in.topkIds[0];
  float g = 0, u = 0;
  for (int64_t k = 0; k < K; ++k) {
    g += x[k] * w[(e * 2 * I + n) * K + k];
    u += x[k] * w[(e * 2 * I + I + n) * K + k];
  }
  EXPECT_EQ(decode(a.preRound)[n], evalActivationF32(spec.activation, g, u));
}

TEST(Reference, BadInputsAreReported) {
  MoeSpec spec = test::smallSpec(DType::MXFP4, DType::MXFP4, FusedQuant::FP4);
  LayerInputs in = unwrap(generateInputs(spec, 2, GenOptions{5}));
  HostTensor wrong = makeBf16({2, 64}, in.hidden);
  auto r = referenceLayer(spec, wrong, in.topkIds, in.topkWeights, in.w1, in.w2);
  ASSERT_FALSE(!!r);
  std::string msg = llvm::toString(r.takeError());
  EXPECT_NE(msg.find("expected format mxfp4, got bf16"), std::string::npos) << msg;
  HostTensor w1 = in.w1;
  w1.shape[1] = 32;
  auto r2 = referenceLayer(spec, in.a1, in.topkIds, in.topkWeights, w1, in.w2);
  ASSERT_FALSE(!!r2);
  msg = llvm::toString(r2.takeError());
  EXPECT_NE(msg.find("expected shape [4, 128, 64], got [4, 32, 64]"), std::string::npos) << msg;
}

TEST(Reference, CorruptSortingIsReported) {
  MoeSpec spec = test::smallSpec(DType::BF16, DType::MXFP4, FusedQuant::None);
  LayerInputs in = unwrap(generateInputs(spec, 2, GenOptions{5}));
  auto sorting = unwrap(sortMoe(in.topkIds, in.topkWeights, 2, 2, 4, 32));
  sorting.sortedExpertIds[0] = 7;
  auto r = referenceStage1(spec, in.a1, sorting, in.w1);
  ASSERT_FALSE(!!r);
  std::string msg = llvm::toString(r.takeError());
  EXPECT_NE(msg.find("sorted_expert_ids[0] = 7 is outside [0, 4)"), std::string::npos) << msg;
  auto three = unwrap(sortMoe({0, 1, 2, 3, 0, 1}, {1, 1, 1, 1, 1, 1}, 3, 2, 4, 32));
  auto r2 = referenceStage1(spec, in.a1, three, in.w1);
  ASSERT_FALSE(!!r2);
  EXPECT_NE(llvm::toString(r2.takeError()).find("sorting has 3 tokens"), std::string::npos);
}

TEST(InputGen, Deterministic) {
  MoeSpec spec = test::smallSpec(DType::MXFP4, DType::MXFP4, FusedQuant::FP4);
  LayerInputs a = unwrap(generateInputs(spec, 3, GenOptions{11}));
  LayerInputs b = unwrap(generateInputs(spec, 3, GenOptions{11}));
  LayerInputs c = unwrap(generateInputs(spec, 3, GenOptions{12}));
  EXPECT_EQ(a.a1.data, b.a1.data);
  EXPECT_EQ(a.w1.data, b.w1.data);
  EXPECT_EQ(a.w2.scales, b.w2.scales);
  EXPECT_EQ(a.topkIds, b.topkIds);
  EXPECT_NE(a.w1.data, c.w1.data);
  for (int64_t t = 0; t < 3; ++t) {
    EXPECT_NE(a.topkIds[2 * t], a.topkIds[2 * t + 1]);
    EXPECT_NEAR(a.topkWeights[2 * t] + a.topkWeights[2 * t + 1], 1.0f, 1e-6);
    EXPECT_GE(a.topkWeights[2 * t], a.topkWeights[2 * t + 1]);
  }
}

} // namespace
