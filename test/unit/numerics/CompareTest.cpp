//===- CompareTest.cpp - decode-first metrics -----------------------------===//

#include "runtime/numerics/Compare.h"
#include "runtime/numerics/MxQuant.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace moegen::num;

namespace {

TEST(Compare, HandComputedMetrics) {
  std::vector<double> x = {1, 2, 3}, y = {1, 2, 4};
  CompareOptions o;
  o.rtol = 0;
  o.atol = 0.5;
  o.maxMismatch = 0.5;
  CompareResult r = compareValues(x, y, 3, {}, o);
  EXPECT_EQ(r.compared, 3);
  EXPECT_DOUBLE_EQ(r.cosineDiff, 1.0 / 35.0); // 1 - 2*17/35
  EXPECT_DOUBLE_EQ(r.relFrobenius, 1.0 / std::sqrt(14.0));
  EXPECT_DOUBLE_EQ(r.maxAbs, 1.0);
  EXPECT_EQ(r.maxAbsIndex, 2);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_TRUE(r.passed);
  o.maxMismatch = 0.2;
  EXPECT_FALSE(compareValues(x, y, 3, {}, o).passed);
  // rtol counts relative to the reference.
  o.atol = 0;
  o.rtol = 0.34;
  EXPECT_EQ(compareValues(x, y, 3, {}, o).mismatches, 0);
}

TEST(Compare, NonFiniteAlwaysFails) {
  std::vector<double> x = {1, 2, 3, 4}, y = {1, 2, NAN, 4};
  CompareOptions o;
  o.maxMismatch = 1.0;
  CompareResult r = compareValues(x, y, 2, {}, o);
  EXPECT_EQ(r.nonFinite, 1);
  EXPECT_FALSE(r.passed);
  y[2] = INFINITY;
  EXPECT_FALSE(compareValues(x, y, 2, {}, o).passed);
  // NaN in the reference fails as well.
  EXPECT_FALSE(compareValues(y, x, 2, {}, o).passed);
}

TEST(Compare, PaddingRowsExcluded) {
  // Row 1 is padding: garbage there is ignored, not counted as a match.
  std::vector<double> x = {1, 2, 9, 9, 3, 4}, y = {1, 2, NAN, -5, 3, 4};
  std::vector<bool> mask = {true, false, true};
  CompareOptions o;
  o.maxMismatch = 0;
  CompareResult r = compareValues(x, y, 2, mask, o);
  EXPECT_TRUE(r.passed) << r.summary();
  EXPECT_EQ(r.compared, 4);
  EXPECT_EQ(r.excludedRows, 1);
  EXPECT_EQ(r.cosineDiff, 0.0);
}

TEST(Compare, AcrossFormats) {
  std::vector<float> v(64);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = std::sin(static_cast<float>(i));
  auto q = quantizeMx(v, {2, 32}, ElemFormat::MXFP4, ScaleRounding::RoundUp);
  ASSERT_TRUE(!!q);
  // The decoded values in f32 compare equal to the packed tensor.
  HostTensor f = makeF32({2, 32}, decode(*q));
  auto same = compareTensors(*q, f, {}, CompareOptions{});
  ASSERT_TRUE(!!same);
  EXPECT_EQ(same->maxAbs, 0.0);
  EXPECT_TRUE(same->passed);
  // Against the unquantized values: fp4 error is visible but small.
  auto vs = compareTensors(makeF32({2, 32}, v), *q, {}, CompareOptions{});
  ASSERT_TRUE(!!vs);
  EXPECT_GT(vs->cosineDiff, 0.0);
  EXPECT_LT(vs->cosineDiff, 0.02);
  auto bad = compareTensors(makeF32({2, 32}, v), makeF32({4, 16}, v), {}, CompareOptions{});
  ASSERT_FALSE(!!bad);
  EXPECT_NE(llvm::toString(bad.takeError()).find("rows of 32"), std::string::npos);
}

} // namespace
