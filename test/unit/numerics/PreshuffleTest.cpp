//===- PreshuffleTest.cpp - weight and scale layouts ----------------------===//

#include "runtime/numerics/Preshuffle.h"
#include "runtime/numerics/InputGen.h"

#include <gtest/gtest.h>

using namespace moegen::num;

namespace {

std::vector<uint8_t> randomBytes(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<uint8_t> v(n);
  for (auto &b : v)
    b = static_cast<uint8_t>(rng.next());
  return v;
}

TEST(Preshuffle, WeightOffsets) {
  // One expert, 32 rows of 64 bytes; byte value = its linear index mod 256
  // is ambiguous, so tag each byte with (row, byte) in a 16-bit lookup.
  const int64_t N = 32, Kb = 64;
  std::vector<uint8_t> src(N * Kb);
  for (int64_t i = 0; i < N * Kb; ++i)
    src[i] = static_cast<uint8_t>(i * 7 + (i >> 8));
  auto dst = shuffleWeight16x16(src, 1, N, Kb);
  ASSERT_TRUE(!!dst);
  auto at = [&](int64_t n, int64_t kb) { return src[n * Kb + kb]; };
  // n0*(16*Kb) + kc*256 + nl*16 + kp
  EXPECT_EQ((*dst)[0], at(0, 0));
  EXPECT_EQ((*dst)[16], at(1, 0));
  EXPECT_EQ((*dst)[256], at(0, 16));
  EXPECT_EQ((*dst)[272], at(1, 16));
  EXPECT_EQ((*dst)[16 * Kb + 3 * 256 + 5 * 16 + 9], at(21, 57));
}

TEST(Preshuffle, WeightRoundTrips) {
  for (bool gu : {false, true}) {
    const int64_t E = 3, N = 64, Kb = 96;
    std::vector<uint8_t> src = randomBytes(E * N * Kb, gu ? 2 : 1);
    auto shuf = shuffleWeight16x16(src, E, N, Kb, gu);
    ASSERT_TRUE(!!shuf);
    EXPECT_NE(*shuf, src);
    auto back = unshuffleWeight16x16(*shuf, E, N, Kb, gu);
    ASSERT_TRUE(!!back);
    EXPECT_EQ(*back, src);
  }
}

TEST(Preshuffle, GateUpInterleave) {
  // 2I = 64 rows of 32 bytes; row r filled with r.
  const int64_t rows = 64, Kb = 32;
  std::vector<uint8_t> src(rows * Kb);
  for (int64_t r = 0; r < rows; ++r)
    std::fill_n(src.begin() + r * Kb, Kb, static_cast<uint8_t>(r));
  auto gugu = interleaveGateUp(src, 1, rows, Kb);
  ASSERT_TRUE(!!gugu);
  auto rowOf = [&](int64_t r) { return (*gugu)[r * Kb]; };
  EXPECT_EQ(rowOf(0), 0); // gate group 0
  EXPECT_EQ(rowOf(15), 15);
  EXPECT_EQ(rowOf(16), 32); // up group 0
  EXPECT_EQ(rowOf(31), 47);
  EXPECT_EQ(rowOf(32), 16); // gate group 1
  EXPECT_EQ(rowOf(48), 48); // up group 1
  // The interleaved shuffle is the plain shuffle of the GUGU rows.
  auto a = shuffleWeight16x16(src, 1, rows, Kb, true);
  auto b = shuffleWeight16x16(*gugu, 1, rows, Kb, false);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, *b);
}

TEST(Preshuffle, WeightShapeErrors) {
  std::vector<uint8_t> src(24 * 32);
  auto r = shuffleWeight16x16(src, 1, 24, 32);
  ASSERT_FALSE(!!r);
  EXPECT_NE(llvm::toString(r.takeError()).find("24 rows x 32 bytes"), std::string::npos);
  auto r2 = shuffleWeight16x16(src, 2, 24, 32);
  ASSERT_FALSE(!!r2);
  EXPECT_NE(llvm::toString(r2.takeError()).find("768 bytes"), std::string::npos);
}

TEST(Preshuffle, E8m0Shuffle) {
  const int64_t R = 40, C = 10;
  std::vector<uint8_t> src = randomBytes(R * C, 3);
  for (auto &b : src)
    b |= 1; // never 0, so padding is recognisable
  std::vector<uint8_t> dst = e8m0Shuffle(src, R, C);
  ASSERT_EQ(dst.size(), 256u * 16u);
  // r = 17 (r0 0, r1 1, r2 1), c = 5 (c0 0, c1 1, c2 1): 64 + 4 + 2 + 1.
  EXPECT_EQ(e8m0ShuffleOffset(17, 5, 16), 71);
  EXPECT_EQ(dst[71], src[17 * C + 5]);
  // r = 33 (r0 1), c = 9 (c0 1, c1 0, c2 1): 32*16 + 256 + 64 + 4.
  EXPECT_EQ(e8m0ShuffleOffset(33, 9, 16), 512 + 256 + 64 + 4);
  int64_t zeros = std::count(dst.begin(), dst.end(), 0);
  EXPECT_EQ(zeros, 256 * 16 - R * C);
  auto back = e8m0Unshuffle(dst, R, C);
  ASSERT_TRUE(!!back);
  EXPECT_EQ(*back, src);
  auto bad = e8m0Unshuffle(llvm::ArrayRef(dst).take_front(100), R, C);
  EXPECT_FALSE(!!bad);
  llvm::consumeError(bad.takeError());
}

// The sm_90a register-weight GEMM adds a step's column part to row parts
// computed once, and moves carried loads to rows 32 d further by d x 32 x
// paddedCols (templates/KernelBuilder.h emitE8m0RowOffset): both hold for
// any row, column and whole number of 32-row groups.
TEST(Preshuffle, E8m0OffsetIsARowPartPlusAColumnPart) {
  Rng rng(11);
  for (int i = 0; i < 2000; ++i) {
    int64_t paddedCols = 8 * static_cast<int64_t>(1 + rng.next() % 64);
    int64_t r = static_cast<int64_t>(rng.next() % 100000);
    int64_t c = static_cast<int64_t>(rng.next() % static_cast<uint64_t>(paddedCols));
    int64_t d = static_cast<int64_t>(rng.next() % 1000);
    SCOPED_TRACE(testing::Message() << "r " << r << " c " << c << " d " << d << " cols "
                                    << paddedCols);
    int64_t offset = e8m0ShuffleOffset(r, c, paddedCols);
    EXPECT_EQ(offset, e8m0ShuffleOffset(r, 0, paddedCols) + e8m0ShuffleOffset(0, c, paddedCols));
    EXPECT_EQ(e8m0ShuffleOffset(r + 32 * d, c, paddedCols), offset + d * 32 * paddedCols);
  }
}

TEST(Preshuffle, ExpertScalesMatchTheSevenDimView) {
  // The gate/up variant read as aiter's view: src [E, 2(gate/up), N1, 16,
  // K1, 2, 4] permuted to [E, N1, K1, 4, 16, 2, 2(gate/up)].
  const int64_t E = 2, rows = 64, cols = 16, N1 = rows / 32, K1 = cols / 8;
  std::vector<uint8_t> src = randomBytes(E * rows * cols, 4);
  auto gu = shuffleExpertScales(src, E, rows, cols, true);
  ASSERT_TRUE(!!gu);
  for (int64_t e = 0; e < E; ++e)
    for (int64_t half = 0; half < 2; ++half)
      for (int64_t n1 = 0; n1 < N1; ++n1)
        for (int64_t nl = 0; nl < 16; ++nl)
          for (int64_t k1 = 0; k1 < K1; ++k1)
            for (int64_t kp = 0; kp < 2; ++kp)
              for (int64_t kl = 0; kl < 4; ++kl) {
                int64_t r = half * (rows / 2) + n1 * 16 + nl, c = k1 * 8 + kp * 4 + kl;
                int64_t dst =
                    e * rows * cols + ((((n1 * K1 + k1) * 4 + kl) * 16 + nl) * 2 + kp) * 2 + half;
                ASSERT_EQ((*gu)[dst], src[e * rows * cols + r * cols + c]);
              }
  // Without gate/up it is the prefix of e8m0_shuffle.
  auto plain = shuffleExpertScales(src, E, rows, cols, false);
  ASSERT_TRUE(!!plain);
  std::vector<uint8_t> full = e8m0Shuffle(src, E * rows, cols);
  EXPECT_TRUE(std::equal(plain->begin(), plain->end(), full.begin()));
  for (bool g : {false, true}) {
    auto s = shuffleExpertScales(src, E, rows, cols, g);
    ASSERT_TRUE(!!s);
    auto back = unshuffleExpertScales(*s, E, rows, cols, g);
    ASSERT_TRUE(!!back);
    EXPECT_EQ(*back, src);
  }
  auto bad = shuffleExpertScales(std::vector<uint8_t>(48 * 16), 1, 48, 16, false);
  ASSERT_FALSE(!!bad);
  EXPECT_NE(llvm::toString(bad.takeError()).find("48 x 16"), std::string::npos);
}

} // namespace
