//===- SortKernelTest.cpp - The sorting kernel on the emulator ------------===//
//
// The compiled sorting kernel against the reference sorting for M in
// {1, 3, 64, 1000}, E in {8, 896}, topk in {1, 8, 16}: every output compared
// exactly, with the emulator's race and bounds checks on.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compiler.h"
#include "compiler/spec/DslParser.h"
#include "runtime/backend/EmuBackend.h"
#include "runtime/numerics/InputGen.h"
#include "runtime/numerics/Sorting.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace moegen;

namespace {

struct SortCase {
  int64_t tokens, experts, topk;
};

void PrintTo(const SortCase &c, std::ostream *os) {
  *os << "M" << c.tokens << "_E" << c.experts << "_k" << c.topk;
}

class SortKernel : public ::testing::TestWithParam<SortCase> {};

TEST_P(SortKernel, MatchesReference) {
  const SortCase c = GetParam();
  std::string text =
      "moe s {\n  model_dim = 256\n  inter_dim = 128\n  experts = " + std::to_string(c.experts) +
      "\n  topk = " + std::to_string(c.topk) +
      "\n  activation_dtype = mxfp4\n  activation = silu\n"
      "  stage1 { tile = 32x32x256; fused_quant = fp4 }\n  stage2 { tile = 32x128x128 }\n}\n";
  auto spec = parseMoeSpec(text, "sort.moe");
  ASSERT_TRUE(static_cast<bool>(spec)) << llvm::toString(spec.takeError());
  auto layer = compileLayer(*spec, CompileOptions());
  ASSERT_TRUE(static_cast<bool>(layer)) << llvm::toString(layer.takeError());
  const CompiledKernel &sort = layer->kernels.front();
  ASSERT_EQ(sort.family, KernelFamily::Sort);

  // Routing: top-k of random scores, as a router produces.
  num::Rng rng(c.tokens * 1000003 + c.experts * 31 + c.topk);
  std::vector<int32_t> ids(c.tokens * c.topk);
  std::vector<float> weights(c.tokens * c.topk);
  std::vector<float> scores(c.experts);
  for (int64_t t = 0; t < c.tokens; ++t) {
    for (float &s : scores)
      s = static_cast<float>(rng.normal());
    num::routeTopk(scores, c.topk, &ids[t * c.topk], &weights[t * c.topk]);
  }
  const int64_t bm = 32;
  auto want = num::sortMoe(ids, weights, c.tokens, c.topk, c.experts, bm);
  ASSERT_TRUE(static_cast<bool>(want)) << llvm::toString(want.takeError());
  const int64_t rows = num::maxNumTokensPadded(c.tokens, c.topk, c.experts, bm);
  const int64_t blocks = num::maxNumMBlocks(c.tokens, c.topk, c.experts, bm);

  std::unique_ptr<runtime::Backend> backend = runtime::createEmuBackend();
  auto alloc = [&](size_t bytes) {
    auto p = backend->allocate(bytes);
    EXPECT_TRUE(static_cast<bool>(p));
    return p ? *p : 0;
  };
  runtime::DevicePtr dIds = alloc(ids.size() * 4), dW = alloc(weights.size() * 4);
  runtime::DevicePtr dSorted = alloc(rows * 4), dSortedW = alloc(rows * 4);
  runtime::DevicePtr dExperts = alloc(blocks * 4), dValid = alloc(8);
  ASSERT_FALSE(static_cast<bool>(backend->copyToDevice(dIds, ids.data(), ids.size() * 4)));
  ASSERT_FALSE(static_cast<bool>(backend->copyToDevice(dW, weights.data(), weights.size() * 4)));
  runtime::CodeBundle bundle;
  bundle.Bitcode.assign(sort.code.bitcode.begin(), sort.code.bitcode.end());
  bundle.Hsaco.assign(sort.code.hsaco.begin(), sort.code.hsaco.end());
  auto module = backend->loadCode(bundle);
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  auto kernel = backend->getKernel(*module, sort.signature.symbol);
  ASSERT_TRUE(static_cast<bool>(kernel)) << llvm::toString(kernel.takeError());
  runtime::KernargPacker args;
  for (runtime::DevicePtr p : {dIds, dW, dSorted, dSortedW, dExperts, dValid})
    args.add<uint64_t>(p);
  args.add<int32_t>(static_cast<int32_t>(c.tokens));
  llvm::Error e = backend->launch(
      *kernel, {1, 1, 1}, {static_cast<uint32_t>(sort.signature.blockSize), 1, 1}, 0, args.bytes());
  ASSERT_FALSE(static_cast<bool>(e)) << llvm::toString(std::move(e));
  ASSERT_FALSE(static_cast<bool>(backend->synchronize()));

  std::vector<int32_t> gotIds(rows), gotExperts(blocks), valid(2);
  std::vector<float> gotW(rows);
  ASSERT_FALSE(static_cast<bool>(backend->copyToHost(gotIds.data(), dSorted, rows * 4)));
  ASSERT_FALSE(static_cast<bool>(backend->copyToHost(gotW.data(), dSortedW, rows * 4)));
  ASSERT_FALSE(static_cast<bool>(backend->copyToHost(gotExperts.data(), dExperts, blocks * 4)));
  ASSERT_FALSE(static_cast<bool>(backend->copyToHost(valid.data(), dValid, 8)));
  EXPECT_EQ(valid[0], want->numValidIds[0]);
  EXPECT_EQ(valid[1], want->numValidIds[1]);
  for (int64_t i = 0; i < want->numValidIds[0]; ++i) {
    ASSERT_EQ(gotIds[i], want->sortedTokenIds[i]) << "sorted row " << i;
    ASSERT_EQ(std::memcmp(&gotW[i], &want->sortedWeights[i], 4), 0) << "sorted row " << i;
  }
  for (int64_t blk = 0; blk < want->numValidIds[0] / bm; ++blk)
    ASSERT_EQ(gotExperts[blk], want->sortedExpertIds[blk]) << "block " << blk;
}

std::vector<SortCase> sortCases() {
  std::vector<SortCase> cases;
  for (int64_t m : {1, 3, 64, 1000})
    for (int64_t e : {8, 896})
      for (int64_t k : {1, 8, 16})
        if (k <= e)
          cases.push_back({m, e, k});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Gfx950, SortKernel, ::testing::ValuesIn(sortCases()),
                         [](const ::testing::TestParamInfo<SortCase> &info) {
                           const SortCase &c = info.param;
                           return "M" + std::to_string(c.tokens) + "_E" +
                                  std::to_string(c.experts) + "_k" + std::to_string(c.topk);
                         });

} // namespace
