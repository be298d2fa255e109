//===- TiersTest.cpp - get_padded_M and tier fallback ---------------------===//

#include "runtime/dispatch/Tiers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

using namespace moegen::dispatch;

namespace {

TEST(Tiers, PaddedMBoundaries) {
  EXPECT_EQ(paddedM(0), 1);
  EXPECT_EQ(paddedM(1), 1);
  EXPECT_EQ(paddedM(2), 2);
  EXPECT_EQ(paddedM(3), 4);
  EXPECT_EQ(paddedM(5), 8);
  EXPECT_EQ(paddedM(16384), 16384);
  EXPECT_EQ(paddedM(16385), 32768);
  EXPECT_EQ(paddedM(32767), 32768);
  EXPECT_EQ(paddedM(32768), 32768);
  EXPECT_EQ(paddedM(65536), 32768);
  EXPECT_EQ(paddedM(131071), 32768);
  EXPECT_EQ(paddedM(131072), 131072);
  EXPECT_EQ(paddedM(10000000), 131072);
}

TEST(Tiers, FallbackOrder) {
  EXPECT_EQ(tierFallbackOrder(1), (std::vector<int64_t>{1}));
  EXPECT_EQ(tierFallbackOrder(3), (std::vector<int64_t>{4}));
  EXPECT_EQ(tierFallbackOrder(20000), (std::vector<int64_t>{32768}));
  EXPECT_EQ(tierFallbackOrder(131071), (std::vector<int64_t>{32768}));
  EXPECT_EQ(tierFallbackOrder(131072), (std::vector<int64_t>{131072, 32768}));
  EXPECT_EQ(tierFallbackOrder(200000), (std::vector<int64_t>{131072, 32768}));
}

TEST(Tiers, FloorIsTheLeastTokenCountOfTheTier) {
  EXPECT_EQ(tierFloor(1), 1);
  EXPECT_EQ(tierFloor(2), 2);
  EXPECT_EQ(tierFloor(4), 3);
  EXPECT_EQ(tierFloor(32), 17);
  EXPECT_EQ(tierFloor(16384), 8193);
  EXPECT_EQ(tierFloor(32768), 16385);
  EXPECT_EQ(tierFloor(131072), 131072);
  // No token count pads to these.
  EXPECT_EQ(tierFloor(0), std::nullopt);
  EXPECT_EQ(tierFloor(3), std::nullopt);
  EXPECT_EQ(tierFloor(65536), std::nullopt);
  // Every floor pads to its key and the count below it does not.
  for (int64_t key = 2; key <= 16384; key *= 2) {
    EXPECT_EQ(paddedM(*tierFloor(key)), key);
    EXPECT_NE(paddedM(*tierFloor(key) - 1), key);
  }
}

TEST(Tiers, TokensSpreadOverTheTier) {
  EXPECT_EQ(tierTokens(32, 1), (std::vector<int64_t>{32}));
  EXPECT_EQ(tierTokens(32, 2), (std::vector<int64_t>{17, 32}));
  EXPECT_EQ(tierTokens(32, 3), (std::vector<int64_t>{17, 25, 32}));
  EXPECT_EQ(tierTokens(1024, 4), (std::vector<int64_t>{513, 683, 854, 1024}));
  EXPECT_EQ(tierTokens(32768, 2), (std::vector<int64_t>{16385, 32768}));
  // A tier of fewer counts than asked gives each once.
  EXPECT_EQ(tierTokens(4, 5), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(tierTokens(2, 3), (std::vector<int64_t>{2}));
  EXPECT_EQ(tierTokens(131072, 3), (std::vector<int64_t>{131072}));
  // A row that is no tier is measured at its own count.
  EXPECT_EQ(tierTokens(3, 3), (std::vector<int64_t>{3}));
  EXPECT_EQ(tierTokens(64, size_t(-1)).size(), 32u);
}

TEST(Tiers, EveryTiersTokensPadToItAndSpanIt) {
  std::vector<int64_t> keys = {1, 32768, 131072};
  for (int64_t k = 2; k <= 16384; k *= 2)
    keys.push_back(k);
  for (int64_t key : keys)
    for (size_t count = 1; count <= 20; ++count) {
      std::vector<int64_t> points = tierTokens(key, count);
      const int64_t span = key - *tierFloor(key);
      SCOPED_TRACE(std::to_string(key) + " x " + std::to_string(count));
      ASSERT_EQ(points.size(), std::min<size_t>(count, size_t(span) + 1));
      EXPECT_EQ(points.back(), key);
      if (points.size() > 1)
        EXPECT_EQ(points.front(), *tierFloor(key));
      for (size_t i = 0; i < points.size(); ++i) {
        EXPECT_EQ(paddedM(points[i]), key);
        if (i)
          EXPECT_LT(points[i - 1], points[i]);
      }
    }
}

} // namespace
