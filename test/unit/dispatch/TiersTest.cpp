//===- TiersTest.cpp - get_padded_M and tier fallback ---------------------===//

#include "runtime/dispatch/Tiers.h"

#include <gtest/gtest.h>

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

} // namespace
