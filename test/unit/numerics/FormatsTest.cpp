//===- FormatsTest.cpp - bf16, e4m3fn, e2m1, e8m0 and fp4x2 ---------------===//

#include "runtime/numerics/Formats.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

using namespace moegen::num;

namespace {

constexpr float kE2M1[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                             -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

TEST(Formats, E2M1FullTable) {
  for (int c = 0; c < 16; ++c) {
    float v = decodeF4E2M1(static_cast<uint8_t>(c));
    EXPECT_EQ(std::bit_cast<uint32_t>(v), std::bit_cast<uint32_t>(kE2M1[c])) << "code " << c;
    EXPECT_EQ(encodeF4E2M1(kE2M1[c]), c) << "value " << kE2M1[c];
  }
  // Only the low nibble counts when decoding.
  EXPECT_EQ(decodeF4E2M1(0xF7), 6.0f);
}

TEST(Formats, E2M1RoundsToNearestEven) {
  // Ties between neighbours go to the even code.
  EXPECT_EQ(encodeF4E2M1(0.25), 0x0); // 0 | 0.5
  EXPECT_EQ(encodeF4E2M1(0.75), 0x2); // 0.5 | 1
  EXPECT_EQ(encodeF4E2M1(1.25), 0x2); // 1 | 1.5
  EXPECT_EQ(encodeF4E2M1(1.75), 0x4); // 1.5 | 2
  EXPECT_EQ(encodeF4E2M1(2.5), 0x4);  // 2 | 3
  EXPECT_EQ(encodeF4E2M1(3.5), 0x6);  // 3 | 4
  EXPECT_EQ(encodeF4E2M1(5.0), 0x6);  // 4 | 6
  EXPECT_EQ(encodeF4E2M1(-5.0), 0xE);
  // Just past a tie rounds away from the even code.
  EXPECT_EQ(encodeF4E2M1(std::nextafter(0.25f, 1.0f)), 0x1);
  EXPECT_EQ(encodeF4E2M1(std::nextafter(5.0f, 6.0f)), 0x7);
  EXPECT_EQ(encodeF4E2M1(std::nextafter(2.5f, 0.0f)), 0x4);
  EXPECT_EQ(encodeF4E2M1(std::nextafter(2.5f, 3.0f)), 0x5);
}

TEST(Formats, E2M1Saturates) {
  EXPECT_EQ(encodeF4E2M1(6.5), 0x7);
  EXPECT_EQ(encodeF4E2M1(7.0), 0x7);
  EXPECT_EQ(encodeF4E2M1(1e30), 0x7);
  EXPECT_EQ(encodeF4E2M1(INFINITY), 0x7);
  EXPECT_EQ(encodeF4E2M1(-INFINITY), 0xF);
  EXPECT_EQ(encodeF4E2M1(NAN), 0x7);
  EXPECT_EQ(encodeF4E2M1(-1e-30), 0x8); // sign kept
}

TEST(Formats, E8M0FullTable) {
  for (int e = 0; e < 255; ++e)
    EXPECT_EQ(decodeE8M0(static_cast<uint8_t>(e)), std::ldexp(1.0f, e - 127)) << e;
  EXPECT_TRUE(std::isnan(decodeE8M0(0xFF)));
  EXPECT_EQ(std::bit_cast<uint32_t>(decodeE8M0(0)), 0x00400000u); // 2^-127
  EXPECT_EQ(decodeE8M0(127), 1.0f);
  EXPECT_EQ(e8m0FromExponent(0), 127);
  EXPECT_EQ(e8m0FromExponent(-127), 0);
  EXPECT_EQ(e8m0FromExponent(-200), 0);
  EXPECT_EQ(e8m0FromExponent(127), 254);
  EXPECT_EQ(e8m0FromExponent(128), 0xFF);
  // The hardware reads only the exponent field of an f32 scale.
  EXPECT_EQ(encodeE8M0(1.0f), 127);
  EXPECT_EQ(encodeE8M0(1.75f), 127);
  EXPECT_EQ(encodeE8M0(-0.5f), 126);
  EXPECT_EQ(encodeE8M0(INFINITY), 0xFF);
  EXPECT_EQ(encodeE8M0(NAN), 0xFF);
  EXPECT_EQ(encodeE8M0(0.0f), 0);
}

TEST(Formats, E4M3Edges) {
  EXPECT_EQ(encodeF8E4M3(448.0), 0x7E);
  EXPECT_EQ(decodeF8E4M3(0x7E), 448.0f);
  EXPECT_EQ(decodeF8E4M3(0xFE), -448.0f);
  // 464 is the tie between 448 and the NaN pattern: even -> 448.
  EXPECT_EQ(encodeF8E4M3(464.0, Overflow::Saturate), 0x7E);
  EXPECT_EQ(encodeF8E4M3(464.0, Overflow::NonSaturate), 0x7E);
  EXPECT_EQ(encodeF8E4M3(465.0, Overflow::Saturate), 0x7E);
  EXPECT_EQ(encodeF8E4M3(465.0, Overflow::NonSaturate), 0x7F);
  EXPECT_EQ(encodeF8E4M3(-466.0, Overflow::NonSaturate), 0xFF);
  EXPECT_EQ(encodeF8E4M3(-1e9, Overflow::Saturate), 0xFE);
  EXPECT_EQ(encodeF8E4M3(INFINITY, Overflow::Saturate), 0x7E);
  EXPECT_EQ(encodeF8E4M3(INFINITY, Overflow::NonSaturate), 0x7F);
  EXPECT_EQ(encodeF8E4M3(NAN), 0x7F);
  EXPECT_EQ(encodeF8E4M3(-NAN), 0xFF);
  EXPECT_TRUE(std::isnan(decodeF8E4M3(0x7F)));
  EXPECT_TRUE(std::isnan(decodeF8E4M3(0xFF)));
  // Subnormals: m * 2^-9; the smallest normal is 2^-6.
  EXPECT_EQ(decodeF8E4M3(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(decodeF8E4M3(0x07), 7 * std::ldexp(1.0f, -9));
  EXPECT_EQ(decodeF8E4M3(0x08), std::ldexp(1.0f, -6));
  EXPECT_EQ(encodeF8E4M3(std::ldexp(1.0, -10)), 0x00);      // tie 0 | 2^-9
  EXPECT_EQ(encodeF8E4M3(3 * std::ldexp(1.0, -10)), 0x02);  // tie 1 | 2 (x2^-9)
  EXPECT_EQ(encodeF8E4M3(15 * std::ldexp(1.0, -10)), 0x08); // 7.5 -> 8: carry to normal
  // Normal ties: 1 + 1/16 lies between 1 and 1.125 -> 1; 1 + 3/16 -> 1.25.
  EXPECT_EQ(encodeF8E4M3(1.0625), 0x38);
  EXPECT_EQ(encodeF8E4M3(1.1875), 0x3A);
  EXPECT_EQ(encodeF8E4M3(-0.0), 0x80);
}

TEST(Formats, E4M3RoundTripsEveryFiniteCode) {
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7F) == 0x7F)
      continue;
    float v = decodeF8E4M3(static_cast<uint8_t>(c));
    EXPECT_EQ(encodeF8E4M3(v, Overflow::NonSaturate), c) << "code " << c;
  }
}

TEST(Formats, Bf16) {
  EXPECT_EQ(encodeBf16(1.0f), 0x3F80);
  EXPECT_EQ(decodeBf16(0x3F80), 1.0f);
  // Ties to even: 1 + 2^-8 -> 1.0; 1 + 3*2^-8 -> 1 + 2^-6.
  EXPECT_EQ(encodeBf16(std::bit_cast<float>(0x3F808000u)), 0x3F80);
  EXPECT_EQ(encodeBf16(std::bit_cast<float>(0x3F818000u)), 0x3F82);
  EXPECT_EQ(encodeBf16(std::bit_cast<float>(0x3F808001u)), 0x3F81);
  EXPECT_EQ(encodeBf16(std::numeric_limits<float>::max()), 0x7F80); // rounds to inf
  EXPECT_EQ(encodeBf16(-INFINITY), 0xFF80);
  uint16_t n = encodeBf16(std::bit_cast<float>(0x7F800001u)); // signalling NaN payload
  EXPECT_TRUE(std::isnan(decodeBf16(n)));
  EXPECT_EQ(encodeBf16(-NAN) & 0x8000, 0x8000);
}

TEST(Formats, Fp4x2NibbleOrder) {
  std::vector<uint8_t> codes = {0x1, 0x2, 0x3, 0xF, 0x7};
  std::vector<uint8_t> packed = packFp4x2(codes);
  ASSERT_EQ(packed.size(), 3u);
  EXPECT_EQ(packed[0], 0x21); // element 0 low, element 1 high
  EXPECT_EQ(packed[1], 0xF3);
  EXPECT_EQ(packed[2], 0x07);
  EXPECT_EQ(fp4CodeAt(packed, 3), 0xF);
  EXPECT_EQ(unpackFp4x2(packed, 5), codes);
}

} // namespace
