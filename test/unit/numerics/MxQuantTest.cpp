//===- MxQuantTest.cpp - e8m0 scale rules and MX quantization -------------===//

#include "runtime/numerics/MxQuant.h"
#include "runtime/numerics/Formats.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>

using namespace moegen::num;

namespace {

constexpr ScaleRounding kModes[] = {ScaleRounding::RoundUp, ScaleRounding::Ocp, ScaleRounding::Even,
                                    ScaleRounding::FusedEpilogue};

std::vector<float> blockWith(float amax, float filler = 0.25f) {
  std::vector<float> b(32, filler);
  b[5] = -amax; // the sign does not matter
  return b;
}

struct Expect {
  float amax;
  uint8_t roundUp, ocp, even, fused;
};

void checkModes(ElemFormat f, const Expect &e) {
  std::vector<float> b = blockWith(e.amax, 0.0f);
  EXPECT_EQ(mxScaleFor(b, f, ScaleRounding::RoundUp), e.roundUp) << "roundup amax=" << e.amax;
  EXPECT_EQ(mxScaleFor(b, f, ScaleRounding::Ocp), e.ocp) << "ocp amax=" << e.amax;
  EXPECT_EQ(mxScaleFor(b, f, ScaleRounding::Even), e.even) << "even amax=" << e.amax;
  EXPECT_EQ(mxScaleFor(b, f, ScaleRounding::FusedEpilogue), e.fused) << "fused amax=" << e.amax;
}

TEST(MxQuant, AllZeroBlock) {
  std::vector<float> zeros(32, 0.0f);
  for (ElemFormat f : {ElemFormat::MXFP4, ElemFormat::MXFP8})
    for (ScaleRounding m : kModes) {
      std::vector<uint8_t> codes(32, 0xAA);
      EXPECT_EQ(quantizeMxBlock(zeros, f, m, codes), 0) << toString(m).str();
      for (uint8_t c : codes)
        EXPECT_EQ(c, 0);
    }
}

TEST(MxQuant, Fp4ScaleRules) {
  float six = 6.0f;
  // amax on a power of two.
  checkModes(ElemFormat::MXFP4, {4.0f, 127, 127, 127, 127});
  checkModes(ElemFormat::MXFP4, {8.0f, 128, 128, 128, 128});
  checkModes(ElemFormat::MXFP4, {0.5f, 124, 124, 124, 124});
  // amax = 6 * 2^k and one ulp either side (k = 0 and k = 3).
  checkModes(ElemFormat::MXFP4, {six, 127, 127, 127, 128});
  checkModes(ElemFormat::MXFP4, {std::nextafter(six, 7.0f), 128, 127, 127, 128});
  checkModes(ElemFormat::MXFP4, {std::nextafter(six, 5.0f), 127, 127, 127, 127});
  checkModes(ElemFormat::MXFP4, {48.0f, 130, 130, 130, 131});
  checkModes(ElemFormat::MXFP4, {std::nextafter(48.0f, 49.0f), 131, 130, 130, 131});
  checkModes(ElemFormat::MXFP4, {std::nextafter(48.0f, 47.0f), 130, 130, 130, 130});
  // Even rounds the mantissa at 1.75: 7 -> 8.
  checkModes(ElemFormat::MXFP4, {7.0f, 128, 127, 128, 128});
  checkModes(ElemFormat::MXFP4, {std::nextafter(7.0f, 6.0f), 128, 127, 127, 128});
  // Tiny blocks clamp to byte 0 (the fused rule's floor is byte 0 too).
  checkModes(ElemFormat::MXFP4, {1e-39f, 0, 0, 0, 0});
}

TEST(MxQuant, Fp8ScaleRules) {
  checkModes(ElemFormat::MXFP8, {448.0f, 127, 127, 128, 128});
  checkModes(ElemFormat::MXFP8, {std::nextafter(448.0f, 500.0f), 128, 127, 128, 128});
  checkModes(ElemFormat::MXFP8, {256.0f, 127, 127, 127, 127});
  checkModes(ElemFormat::MXFP8, {1.0f, 119, 119, 119, 119});
}

TEST(MxQuant, NonFiniteBlockGetsNaNScale) {
  for (ElemFormat f : {ElemFormat::MXFP4, ElemFormat::MXFP8})
    for (ScaleRounding m : kModes) {
      std::vector<float> b = blockWith(3.0f);
      b[17] = NAN;
      EXPECT_EQ(mxScaleFor(b, f, m), kE8M0NaN);
      b[17] = -INFINITY;
      EXPECT_EQ(mxScaleFor(b, f, m), kE8M0NaN);
    }
  // The NaN poisons only its own block.
  std::vector<float> v(64, 1.0f);
  v[40] = NAN;
  auto t = quantizeMx(v, {1, 64}, ElemFormat::MXFP4, ScaleRounding::RoundUp);
  ASSERT_TRUE(!!t);
  std::vector<float> d = decode(*t);
  EXPECT_EQ(d[0], 1.0f);
  EXPECT_EQ(d[31], 1.0f);
  for (int i = 32; i < 64; ++i)
    EXPECT_TRUE(std::isnan(d[i])) << i;
}

TEST(MxQuant, ElementCodes) {
  // OCP worked example: amax 5 -> scale 2^0; 5 -> 4 (tie to even), 7 -> 6.
  std::vector<float> b(32, 0.0f);
  b[0] = 5.0f;
  b[1] = 0.75f;
  std::vector<uint8_t> codes(32);
  EXPECT_EQ(quantizeMxBlock(b, ElemFormat::MXFP4, ScaleRounding::Ocp, codes), 127);
  EXPECT_EQ(codes[0], 0x6);
  EXPECT_EQ(codes[1], 0x2);
  b[0] = -7.0f;
  EXPECT_EQ(quantizeMxBlock(b, ElemFormat::MXFP4, ScaleRounding::Ocp, codes), 127);
  EXPECT_EQ(codes[0], 0xF); // saturated -6
  // RoundUp never saturates: amax 7 -> scale 2, 7/2 = 3.5 -> 4 (tie to even).
  EXPECT_EQ(quantizeMxBlock(b, ElemFormat::MXFP4, ScaleRounding::RoundUp, codes), 128);
  EXPECT_EQ(codes[0], 0xE);
  EXPECT_EQ(codes[1], 0x1); // 0.375 -> 0.5
  // MXFP8 OCP: amax 500 -> scale 2^0, 500 saturates to 448.
  b.assign(32, 0.0f);
  b[3] = 500.0f;
  b[4] = -1.0f;
  EXPECT_EQ(quantizeMxBlock(b, ElemFormat::MXFP8, ScaleRounding::Ocp, codes), 127);
  EXPECT_EQ(codes[3], 0x7E);
  EXPECT_EQ(codes[4], 0xB8);
}

// The block quantizer encodes fp4 in f32; every code must be the one the f64
// encoder gives the exactly scaled value, over magnitudes from subnormal to
// huge, at each threshold and its neighbours, with signed zeros, inf and NaN.
TEST(MxQuant, Fp4BlockCodesMatchTheF64Encoder) {
  std::vector<float> pool = {0.0f,   -0.0f,   INFINITY, -INFINITY, NAN,
                             1e-45f, -1e-45f, 1e-38f,   3e38f,     -3e38f};
  for (float t : {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, 6.0f})
    for (int k = -130; k <= 120; k += 25)
      for (float v : {t, std::nextafter(t, 0.0f), std::nextafter(t, 10.0f)})
        pool.push_back(std::ldexp(v, k) * (k % 2 ? -1.0f : 1.0f));
  uint64_t x = 0x9E3779B97F4A7C15ull;
  std::vector<float> b(32);
  std::vector<uint8_t> codes(32);
  for (int trial = 0; trial < 4000; ++trial) {
    for (float &v : b) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      // Mostly pool values (to hit the edges), else random bit patterns.
      v = (x >> 60) < 12 ? pool[(x >> 32) % pool.size()] : std::bit_cast<float>(uint32_t(x >> 16));
    }
    if (trial % 3 == 0) // some blocks without inf/NaN, so the scale is finite
      for (float &v : b)
        if (!std::isfinite(v))
          v = 1.0f;
    for (ScaleRounding m : kModes) {
      uint8_t e = quantizeMxBlock(b, ElemFormat::MXFP4, m, codes);
      double factor = e == kE8M0NaN ? 1.0 : std::ldexp(1.0, 127 - int(e));
      for (int i = 0; i < 32; ++i)
        ASSERT_EQ(codes[i], encodeF4E2M1(double(b[i]) * factor))
            << "value " << b[i] << " scale byte " << int(e) << " mode " << toString(m).str();
    }
  }
}

TEST(MxQuant, TensorLayoutAndRoundTrip) {
  std::vector<float> v(2 * 64);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = decodeF4E2M1(static_cast<uint8_t>(i % 16)) * 0.5f; // e2m1 values x 2^-1
  auto t = quantizeMx(v, {2, 64}, ElemFormat::MXFP4, ScaleRounding::RoundUp);
  ASSERT_TRUE(!!t);
  EXPECT_EQ(t->data.size(), 64u);
  EXPECT_EQ(t->scales.size(), 4u);
  // Every block's amax is 3: RoundUp picks 2^-1 and every value is exact.
  for (uint8_t s : t->scales)
    EXPECT_EQ(s, 126);
  EXPECT_EQ(decode(*t), v);
  auto bad = quantizeMx(std::vector<float>(48), {1, 48}, ElemFormat::MXFP4, ScaleRounding::RoundUp);
  ASSERT_FALSE(!!bad);
  EXPECT_NE(llvm::toString(bad.takeError()).find("not a multiple of 32"), std::string::npos);
}

} // namespace
