//===- E2m1TableTest.cpp - The sm_90a e2m1 table decoding, modelled -------===//
//
// The register-weight GEMM's e2m1 decoding (templates/sm90/E2m1Table.h,
// Sm90GemmKernel's e2m1Table and dequantWord) modelled on the host with the
// same constants and PTX's prmt and mul.rn.bf16x2 semantics, against
// runtime/numerics' decoding: every code in every position of a word, for
// every e8m0 scale (subnormal 2^-127 and NaN included), gives the bf16 of
// code x scale; so does the arithmetic route (dequantWordArith: placed bits
// and two bf16 products), and weight_decode = arithmetic's (one product up to
// scale 2, the two products of the K loop's second run above).
//
//===----------------------------------------------------------------------===//

#include "templates/sm90/E2m1Table.h"
#include "runtime/numerics/Formats.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <random>

using namespace moegen;
using namespace moegen::sm90;

namespace {

/// PTX prmt.b32 in its default mode: selector nibble i picks result byte i
/// from bytes 0-3 of a and 4-7 of b; nibble bit 3 replicates that byte's
/// sign bit.
uint32_t prmt(uint32_t a, uint32_t b, uint32_t selector) {
  uint64_t pool = uint64_t(a) | (uint64_t(b) << 32);
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) {
    uint32_t nibble = (selector >> (4 * i)) & 0xF;
    uint32_t byte = (pool >> (8 * (nibble & 7))) & 0xFF;
    if (nibble & 8)
      byte = (byte & 0x80) ? 0xFF : 0x00;
    r |= byte << (8 * i);
  }
  return r;
}

/// mul.rn.bf16x2: each half's product rounded once to bf16 (the product of
/// two bf16 is exact in f32).
uint32_t mulBf16x2(uint32_t x, uint32_t y) {
  uint32_t r = 0;
  for (int h = 0; h < 2; ++h) {
    float p = num::decodeBf16(uint16_t(x >> (16 * h))) * num::decodeBf16(uint16_t(y >> (16 * h)));
    r |= uint32_t(num::encodeBf16(p)) << (16 * h);
  }
  return r;
}

/// The scale operand the kernel builds from the e8m0 byte (e8m0ToBf16x2):
/// 2^(e - 127) in both halves, e = 0 the bf16 subnormal 2^-127, e = 255 NaN.
uint32_t scaleBf16x2(uint32_t e) {
  uint32_t h = e == 0 ? 0x40u : e == 255 ? 0x7FC0u : e << 7;
  return h | (h << 16);
}

/// e2m1Table and dequantWord, on the host.
std::array<uint32_t, 4> decodeWord(uint32_t word, uint32_t e) {
  uint32_t scale2 = scaleBf16x2(e);
  uint32_t w[4];
  for (int i = 0; i < 4; ++i)
    w[i] = mulBf16x2(kE2m1MagnitudePairs[i], scale2);
  uint32_t hi0 = prmt(w[0], w[1], kHighBytesOfPairs), hi1 = prmt(w[2], w[3], kHighBytesOfPairs);
  uint32_t lo0 = prmt(w[0], w[1], kLowBytesOfPairs), lo1 = prmt(w[2], w[3], kLowBytesOfPairs);
  uint32_t shifted = word << 4;
  uint32_t magnitudes = word & kMagnitudeSelect;
  std::array<uint32_t, 4> out;
  for (int h = 0; h < 2; ++h) {
    uint32_t select = h == 0 ? magnitudes : magnitudes >> 16;
    uint32_t hi = prmt(hi0, hi1, select), lo = prmt(lo0, lo1, select);
    uint32_t signs = prmt(shifted, word, h == 0 ? kInterleaveBytes01 : kInterleaveBytes23);
    hi |= signs & kByteSignBits;
    out[2 * h] = prmt(lo, hi, kInterleaveBytes01);
    out[2 * h + 1] = prmt(lo, hi, kInterleaveBytes23);
  }
  return out;
}

/// The arithmetic route's placed bits of fragment word p: codes 2p and 2p + 1
/// as bf16s 2^-126 x their values.
uint32_t placedBits(uint32_t word, uint32_t p) {
  return (prmt(word << 4, word, arithmeticSelect(p)) << 2) & kE2m1PlacedBits;
}

/// dequantWordArith, on the host.
std::array<uint32_t, 4> decodeWordArith(uint32_t word, uint32_t e) {
  uint32_t scale2 = scaleBf16x2(e);
  std::array<uint32_t, 4> out;
  for (uint32_t p = 0; p < 4; ++p) {
    uint32_t bits = placedBits(word, p);
    out[p] = mulBf16x2(mulBf16x2(bits, kBf16x2Two126), scale2);
  }
  return out;
}

/// Sm90GemmKernel's oneProductMultiplier: 2^126 x the scale (2^(e - 1)) as
/// bf16x2 for e up to kE2m1OneProductMaxScale, else 0.
uint32_t oneProductMultiplier(uint32_t e) {
  return e > kE2m1OneProductMaxScale ? 0u : e * 0x00800080u + kBf16x2OneProductBias;
}

/// weight_decode = arithmetic, on the host: the main loop's one product,
/// where the scale is at most 2; above, that product is zero and the K loop's
/// second run (StepRows::LargeScalesOnly) adds the two products.
std::array<uint32_t, 4> decodeWordOneProduct(uint32_t word, uint32_t e) {
  if (e > kE2m1OneProductMaxScale)
    return decodeWordArith(word, e);
  std::array<uint32_t, 4> out;
  for (uint32_t p = 0; p < 4; ++p)
    out[p] = mulBf16x2(placedBits(word, p), oneProductMultiplier(e));
  return out;
}

using WordDecoder = std::array<uint32_t, 4> (*)(uint32_t, uint32_t);

class E2m1Route : public ::testing::TestWithParam<WordDecoder> {};

TEST_P(E2m1Route, EveryCodeAtEveryPositionForEveryScale) {
  WordDecoder decodeWord = GetParam();
  std::mt19937 rng(7);
  int64_t checked = 0;
  for (uint32_t e = 0; e < 256; ++e)
    for (int position = 0; position < 8; ++position)
      for (uint32_t code = 0; code < 16; ++code) {
        // The other codes random: a decoding must not mix positions.
        uint32_t word = rng() & ~(0xFu << (4 * position));
        word |= code << (4 * position);
        std::array<uint32_t, 4> frags = decodeWord(word, e);
        for (int i = 0; i < 8; ++i) {
          uint8_t c = (word >> (4 * i)) & 0xF;
          uint16_t got = uint16_t(frags[i / 2] >> (16 * (i % 2)));
          float want = num::decodeF4E2M1(c) * num::decodeE8M0(uint8_t(e));
          uint16_t wantBits = num::encodeBf16(want);
          if (std::isnan(want)) {
            EXPECT_TRUE(std::isnan(num::decodeBf16(got))) << "e=" << e << " code=" << int(c);
          } else {
            ASSERT_EQ(got, wantBits) << "e=" << e << " code=" << int(c) << " position=" << i
                                     << " word=0x" << std::hex << word;
          }
          ++checked;
        }
      }
  EXPECT_EQ(checked, 256 * 8 * 16 * 8);
}

INSTANTIATE_TEST_SUITE_P(TableAndArithmetic, E2m1Route,
                         ::testing::Values(&decodeWord, &decodeWordArith, &decodeWordOneProduct));

// The main loop's products of a block with a scale above 2 are zeros (so
// that the second run's products are the block's whole contribution), and
// the one-product multiplier is exactly 2^126 x the scale below.
TEST(E2m1Table, OneProductMultiplier) {
  for (uint32_t e = 0; e < 256; ++e) {
    uint32_t m = oneProductMultiplier(e);
    EXPECT_EQ(m >> 16, m & 0xFFFFu) << "e=" << e;
    if (e > kE2m1OneProductMaxScale) {
      EXPECT_EQ(m, 0u) << "e=" << e;
      continue;
    }
    EXPECT_EQ(num::decodeBf16(uint16_t(m)), std::ldexp(num::decodeE8M0(uint8_t(e)), 126))
        << "e=" << e;
  }
}

TEST(E2m1Table, PrmtModelFollowsThePtxDefinition) {
  // Selector 0x3210 is the identity on a, 0x7654 on b; bit 3 replicates the sign.
  EXPECT_EQ(prmt(0x44332211u, 0x88776655u, 0x3210u), 0x44332211u);
  EXPECT_EQ(prmt(0x44332211u, 0x88776655u, 0x7654u), 0x88776655u);
  EXPECT_EQ(prmt(0x44332211u, 0x88776655u, 0x000Fu), 0x111111FFu);
  EXPECT_EQ(prmt(0x44332211u, 0x88776655u, kInterleaveBytes01), 0x66225511u);
  EXPECT_EQ(prmt(0x44332211u, 0x88776655u, kInterleaveBytes23), 0x88447733u);
}

} // namespace
