//===- SortingTest.cpp - moe_sorting reference ----------------------------===//

#include "runtime/numerics/Sorting.h"
#include "runtime/numerics/InputGen.h"

#include <gtest/gtest.h>

#include <set>

using namespace moegen::num;

namespace {

TEST(Sorting, HandExample) {
  // M=2, topk=2, E=4, block 2: token 0 -> {2, 0}, token 1 -> {2, 3}.
  std::vector<int32_t> ids = {2, 0, 2, 3};
  std::vector<float> w = {0.6f, 0.4f, 0.7f, 0.3f};
  auto s = sortMoe(ids, w, 2, 2, 4, 2);
  ASSERT_TRUE(!!s) << llvm::toString(s.takeError());
  const int32_t pad = (2 << 24) | 2;
  EXPECT_EQ(s->paddingEntry(), pad);
  std::vector<int32_t> want = {(1 << 24) | 0, pad, 0, 1, (1 << 24) | 1, pad, pad, pad, pad, pad};
  EXPECT_EQ(s->sortedTokenIds, want); // 2*2 + 4*2 - 2 = 10 entries
  EXPECT_EQ(s->sortedExpertIds, (std::vector<int32_t>{0, 2, 3, -1, -1}));
  EXPECT_EQ(s->numValidIds[0], 6);
  EXPECT_EQ(s->numValidIds[1], 2);
  EXPECT_EQ(s->sortedWeights, (std::vector<float>{0.4f, 0, 0.6f, 0.7f, 0.3f, 0, 0, 0, 0, 0}));
  EXPECT_EQ(s->mIndices, (std::vector<int32_t>{0, 2, 0, 1, 1, 2, 2, 2, 2, 2}));
  EXPECT_EQ(s->reverseSorted, (std::vector<int32_t>{2, 0, 3, 4}));
  EXPECT_TRUE(s->isValidRow(0));
  EXPECT_FALSE(s->isValidRow(1));
  EXPECT_FALSE(s->isValidRow(6));
}

TEST(Sorting, Invariants) {
  const int64_t M = 37, topk = 4, E = 16, block = 8;
  Rng rng(7);
  std::vector<int32_t> ids(M * topk);
  std::vector<float> w(M * topk);
  for (int64_t t = 0; t < M; ++t) {
    std::set<int32_t> used;
    for (int64_t k = 0; k < topk; ++k) {
      int32_t e;
      do
        e = static_cast<int32_t>(rng.next() % 12); // experts 12..15 stay empty
      while (used.count(e));
      used.insert(e);
      ids[t * topk + k] = e;
      w[t * topk + k] = static_cast<float>(rng.uniform());
    }
  }
  auto s = sortMoe(ids, w, M, topk, E, block);
  ASSERT_TRUE(!!s);
  EXPECT_EQ(s->sortedTokenIds.size(), static_cast<size_t>(M * topk + E * block - topk));
  EXPECT_EQ(s->numValidIds[0] % block, 0);
  EXPECT_EQ(s->numValidIds[1], M);
  std::vector<int> seen(M * topk, 0);
  int64_t blocks = s->usedBlocks();
  int64_t expectedRows = 0;
  for (int32_t e = 0; e < E; ++e) {
    int64_t n = std::count(ids.begin(), ids.end(), e);
    expectedRows += (n + block - 1) / block * block;
  }
  EXPECT_EQ(s->numValidIds[0], expectedRows);
  for (int64_t b = 0; b < blocks; ++b) {
    int32_t e = s->sortedExpertIds[b];
    ASSERT_GE(e, 0);
    ASSERT_LT(e, 12) << "empty experts get no block";
    if (b > 0)
      EXPECT_LE(s->sortedExpertIds[b - 1], e) << "experts ascending";
    int64_t prevToken = -1;
    for (int64_t r = b * block; r < (b + 1) * block; ++r) {
      int32_t entry = s->sortedTokenIds[r];
      if (entry == s->paddingEntry()) {
        EXPECT_EQ(s->sortedWeights[r], 0.0f);
        continue;
      }
      int64_t token = MoeSorting::tokenOf(entry), slot = MoeSorting::slotOf(entry);
      ASSERT_LT(token, M);
      ASSERT_LT(slot, topk);
      EXPECT_EQ(ids[token * topk + slot], e);
      EXPECT_EQ(s->sortedWeights[r], w[token * topk + slot]);
      EXPECT_EQ(s->reverseSorted[token * topk + slot], r);
      if (b == 0 || s->sortedExpertIds[b - 1] != e)
        prevToken = -1;
      EXPECT_GT(token, prevToken) << "tokens ascending within an expert";
      prevToken = token;
      ++seen[token * topk + slot];
    }
  }
  for (int64_t b = blocks; b < static_cast<int64_t>(s->sortedExpertIds.size()); ++b)
    EXPECT_EQ(s->sortedExpertIds[b], -1);
  for (int64_t r = s->numValidIds[0]; r < static_cast<int64_t>(s->sortedTokenIds.size()); ++r)
    EXPECT_EQ(s->sortedTokenIds[r], s->paddingEntry());
  for (int c : seen)
    EXPECT_EQ(c, 1) << "every (token, slot) appears exactly once";
}

TEST(Sorting, RejectsBadIds) {
  std::vector<int32_t> ids = {0, 9};
  std::vector<float> w = {0.5f, 0.5f};
  auto s = sortMoe(ids, w, 1, 2, 4, 32);
  ASSERT_FALSE(!!s);
  std::string msg = llvm::toString(s.takeError());
  EXPECT_NE(msg.find("topk id 9 of token 0 slot 1"), std::string::npos) << msg;
  auto s2 = sortMoe(ids, w, 2, 2, 16, 32);
  ASSERT_FALSE(!!s2);
  EXPECT_NE(llvm::toString(s2.takeError()).find("tokens*topk = 4"), std::string::npos);
}

TEST(Sorting, DropsIdsOutsideTheExpertsWhenAsked) {
  // M=3, topk=2, E=4, block 2: token 0 -> {1, -1}, token 1 -> {4, 1},
  // token 2 -> {-1, 4}: only (0, 0) and (1, 1) are placed, both expert 1.
  std::vector<int32_t> ids = {1, -1, 4, 1, -1, 4};
  std::vector<float> w = {0.25f, 0.5f, 0.75f, 1.0f, 1.25f, 1.5f};
  ASSERT_FALSE(!!sortMoe(ids, w, 3, 2, 4, 2)); // Refuse is the default
  auto s = sortMoe(ids, w, 3, 2, 4, 2, OutsideIds::Drop);
  ASSERT_TRUE(!!s) << llvm::toString(s.takeError());
  const int32_t pad = (2 << 24) | 3;
  std::vector<int32_t> want(3 * 2 + 4 * 2 - 2, pad);
  want[0] = 0;             // token 0 slot 0
  want[1] = (1 << 24) | 1; // token 1 slot 1
  EXPECT_EQ(s->sortedTokenIds, want);
  EXPECT_EQ(s->sortedWeights[0], 0.25f);
  EXPECT_EQ(s->sortedWeights[1], 1.0f);
  EXPECT_EQ(s->sortedWeights[2], 0.0f);
  EXPECT_EQ(s->sortedExpertIds, (std::vector<int32_t>{1, -1, -1, -1, -1, -1}));
  EXPECT_EQ(s->numValidIds[0], 2);
  EXPECT_EQ(s->numValidIds[1], 3);
  EXPECT_EQ(s->reverseSorted, (std::vector<int32_t>{0, -1, -1, 1, -1, -1}));
  // Every id dropped: no rows, nothing valid.
  std::vector<int32_t> none = {-1, 4};
  auto e = sortMoe(none, {0.5f, 0.5f}, 1, 2, 4, 2, OutsideIds::Drop);
  ASSERT_TRUE(!!e) << llvm::toString(e.takeError());
  EXPECT_EQ(e->numValidIds[0], 0);
  EXPECT_EQ(e->sortedExpertIds, std::vector<int32_t>(4, -1));
}

} // namespace
