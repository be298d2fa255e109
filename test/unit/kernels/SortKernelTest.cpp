//===- SortKernelTest.cpp - The sorting kernels on the emulator -----------===//
//
// sort_count, sort_scan and sort, launched in order as the layer does (only
// sort for a single chunk: the others have empty grids), against
// the reference sorting (runtime/numerics/Sorting.cpp) for experts in {8, 33,
// 257, 896}, topk in {1, 2, 8, 16}, block_m in {16, 32, 48, 64, 80, 96, 128}, token counts
// from 1 to 8193 (one workgroup alone up to SortPlan::singleEntries entries
// and one more; one and several chunks, partial waves and rounds) and
// routings: router top-k, every entry to one expert, a few hot experts with
// repeats inside a token, and the last expert only. Every output row below
// num_valid_ids, every block's expert and the intermediate totals are compared
// exactly, with the emulator's race and bounds checks on; the outputs and the
// intermediate regions start as garbage so that an unwritten row, or a single
// chunk's sort reading them, fails. SortKernelsRandom draws further shapes
// around the token counts where sort's wave 0 stops sorting alone.
//
//===----------------------------------------------------------------------===//

#include "templates/sort/SortKernel.h"
#include "compiler/Compiler.h"
#include "compiler/spec/DslParser.h"
#include "runtime/backend/EmuBackend.h"
#include "runtime/numerics/InputGen.h"
#include "runtime/numerics/Sorting.h"
#include "templates/sort/SortPlan.h"
#include "test/unit/templates/KernelTestUtil.h"

#include "llvm/ADT/STLExtras.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace moegen;

namespace {

struct SortShape {
  int64_t experts, topk, blockM;
};

enum class Routing { Router, OneExpert, HotExperts, LastExpert };

const char *name(Routing r) {
  switch (r) {
  case Routing::Router:
    return "router";
  case Routing::OneExpert:
    return "one expert";
  case Routing::HotExperts:
    return "hot experts";
  case Routing::LastExpert:
    return "last expert";
  }
  return "?";
}

std::vector<int32_t> route(Routing r, int64_t tokens, const SortShape &c, num::Rng &rng,
                           std::vector<float> &weights) {
  std::vector<int32_t> ids(tokens * c.topk);
  weights.resize(ids.size());
  std::vector<float> scores(c.experts);
  for (int64_t t = 0; t < tokens; ++t) {
    for (float &s : scores)
      s = static_cast<float>(rng.normal());
    num::routeTopk(scores, c.topk, &ids[t * c.topk], &weights[t * c.topk]);
    for (int64_t k = 0; k < c.topk; ++k) {
      int32_t &id = ids[t * c.topk + k];
      if (r == Routing::OneExpert)
        id = static_cast<int32_t>(c.experts / 2);
      else if (r == Routing::HotExperts) // repeats inside a token too
        id = static_cast<int32_t>(rng.next() % std::min<int64_t>(3, c.experts));
      else if (r == Routing::LastExpert)
        id = static_cast<int32_t>(c.experts - 1);
    }
  }
  return ids;
}

/// Compiles the three sorting kernels of a layer of `shape` and checks them
/// against the reference, token count by token count.
class SortRig {
public:
  /// With `dynamicLds`, sort takes its LDS as dynamic shared memory in two
  /// waves (the layout sm_90a uses for many experts, SortPlan::dynamicShared),
  /// built from the same template for gfx950 so that the emulator checks it.
  void prepare(const SortShape &shape, bool dynamicLds = false) {
    c = shape;
    // (Stage 2's tile divides the sorting block: 16 rows for 48 or 80.)
    int64_t bm = c.blockM, tm2 = bm % 32 == 0 ? std::min<int64_t>(bm, 32) : 16;
    std::string text =
        "moe s {\n  model_dim = 256\n  inter_dim = 128\n  experts = " + std::to_string(c.experts) +
        "\n  topk = " + std::to_string(c.topk) +
        "\n  activation_dtype = mxfp4\n  activation = silu\n  stage1 { tile = " +
        std::to_string(bm) +
        "x32x256; fused_quant = fp4 }\n  stage2 { tile = " + std::to_string(tm2) +
        "x128x128 }\n}\n";
    auto spec = parseMoeSpec(text, "sort.moe");
    ASSERT_TRUE(static_cast<bool>(spec)) << llvm::toString(spec.takeError());
    ScheduleIssues issues;
    plan = planSort(*spec, TargetInfo::defaultTarget(), issues);
    ASSERT_TRUE(issues.empty());
    CompileOptions options; // the sorting kernels only
    options.families = {KernelFamily::SortCount, KernelFamily::SortScan, KernelFamily::Sort};
    auto layer = compileLayer(*spec, options);
    ASSERT_TRUE(static_cast<bool>(layer)) << llvm::toString(layer.takeError());
    const std::vector<CompiledKernel> &k = layer->kernels;
    ASSERT_EQ(k.size(), 3u);
    ASSERT_EQ(k[0].family, KernelFamily::SortCount);
    ASSERT_EQ(k[1].family, KernelFamily::SortScan);
    ASSERT_EQ(k[2].family, KernelFamily::Sort);
    backend = runtime::createEmuBackend();
    for (int i = 0; i < 3; ++i) {
      load(i, k[i].code, k[i].signature.symbol);
      if (::testing::Test::HasFatalFailure())
        return;
      blockSizes[i] = static_cast<uint32_t>(k[i].signature.blockSize);
    }
    if (dynamicLds)
      loadDynamicLdsSort();
  }

  void loadDynamicLdsSort() {
    plan.threads = 2 * plan.waveSize;
    plan.dynamicShared = true;
    const std::string symbol = sortKernelSymbol(plan) + "_dyn";
    auto built = test::compileKernel(
        symbol, [&](mlir::ImplicitLocOpBuilder &b, mlir::gpu::GPUModuleOp module) {
          buildSortKernel(b, module, symbol, plan, TargetInfo::defaultTarget());
        });
    ASSERT_TRUE(static_cast<bool>(built)) << llvm::toString(built.takeError());
    load(2, built->code, symbol);
    blockSizes[2] = static_cast<uint32_t>(plan.threads);
    dynamicLdsBytes[2] = static_cast<uint32_t>(plan.scatterLdsBytes());
  }

  /// Loads `code` into the backend as kernels[i].
  void load(int i, const CodeObject &code, llvm::StringRef symbol) {
    runtime::CodeBundle bundle;
    bundle.Bitcode.assign(code.bitcode.begin(), code.bitcode.end());
    bundle.Hsaco.assign(code.hsaco.begin(), code.hsaco.end());
    auto module = backend->loadCode(bundle);
    ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
    auto kernel = backend->getKernel(*module, symbol);
    ASSERT_TRUE(static_cast<bool>(kernel)) << llvm::toString(kernel.takeError());
    kernels[i] = *kernel;
  }

  /// Sorts `tokens` tokens routed by `routing` and compares with the reference.
  void check(int64_t tokens, Routing routing) {
    SCOPED_TRACE("experts " + std::to_string(c.experts) + ", top-" + std::to_string(c.topk) +
                 ", block_m " + std::to_string(c.blockM) + ", " + std::to_string(tokens) +
                 " tokens, " + name(routing));
    num::Rng rng(tokens * 1000003 + c.experts * 31 + c.topk * 7 + c.blockM);
    std::vector<float> weights;
    std::vector<int32_t> ids = route(routing, tokens, c, rng, weights);
    auto want = num::sortMoe(ids, weights, tokens, c.topk, c.experts, c.blockM);
    ASSERT_TRUE(static_cast<bool>(want)) << llvm::toString(want.takeError());
    const int64_t rows = plan.maxPaddedRows(tokens), blocks = plan.maxBlocks(tokens);
    ASSERT_EQ(rows, num::maxNumTokensPadded(tokens, c.topk, c.experts, c.blockM));

    std::vector<runtime::DevicePtr> owned;
    auto alloc = [&](size_t bytes) {
      auto p = backend->allocate(bytes);
      EXPECT_TRUE(static_cast<bool>(p));
      runtime::DevicePtr d = p ? *p : 0;
      if (d) {
        owned.push_back(d);
        EXPECT_FALSE(static_cast<bool>(backend->memset(d, 0xa5, bytes))); // garbage
      }
      return d;
    };
    runtime::DevicePtr dIds = alloc(ids.size() * 4), dW = alloc(weights.size() * 4);
    runtime::DevicePtr dCounts = alloc(plan.countsBytes(tokens));
    runtime::DevicePtr dTotals = alloc(plan.totalsBytes());
    runtime::DevicePtr dSorted = alloc(rows * 4), dSortedW = alloc(rows * 4);
    runtime::DevicePtr dExperts = alloc(blocks * 4), dValid = alloc(8);
    ASSERT_FALSE(static_cast<bool>(backend->copyToDevice(dIds, ids.data(), ids.size() * 4)));
    ASSERT_FALSE(static_cast<bool>(backend->copyToDevice(dW, weights.data(), weights.size() * 4)));
    auto launch = [&](int i, std::array<int64_t, 3> grid,
                      std::initializer_list<runtime::DevicePtr> ptrs) {
      if (grid[0] * grid[1] * grid[2] == 0)
        return; // not launched at this size, as in MoeLayer
      runtime::KernargPacker args;
      for (runtime::DevicePtr p : ptrs)
        args.add<uint64_t>(p);
      args.add<int32_t>(static_cast<int32_t>(tokens));
      llvm::Error e =
          backend->launch(kernels[i],
                          {static_cast<uint32_t>(grid[0]), static_cast<uint32_t>(grid[1]),
                           static_cast<uint32_t>(grid[2])},
                          {blockSizes[i], 1, 1}, dynamicLdsBytes[i], args.bytes());
      ASSERT_FALSE(static_cast<bool>(e)) << llvm::toString(std::move(e));
    };
    launch(0, plan.countGrid(tokens), {dIds, dCounts});
    launch(1, plan.scanGrid(tokens), {dCounts, dTotals});
    launch(2, plan.scatterGrid(tokens),
           {dIds, dW, dCounts, dTotals, dSorted, dSortedW, dExperts, dValid});
    ASSERT_FALSE(static_cast<bool>(backend->synchronize()));

    std::vector<int32_t> gotIds(rows), gotExperts(blocks), valid(2), totals(c.experts);
    std::vector<float> gotW(rows);
    ASSERT_FALSE(static_cast<bool>(backend->copyToHost(gotIds.data(), dSorted, rows * 4)));
    ASSERT_FALSE(static_cast<bool>(backend->copyToHost(gotW.data(), dSortedW, rows * 4)));
    ASSERT_FALSE(static_cast<bool>(backend->copyToHost(gotExperts.data(), dExperts, blocks * 4)));
    ASSERT_FALSE(static_cast<bool>(backend->copyToHost(valid.data(), dValid, 8)));
    ASSERT_FALSE(
        static_cast<bool>(backend->copyToHost(totals.data(), dTotals, plan.totalsBytes())));
    for (runtime::DevicePtr p : owned)
      ASSERT_FALSE(static_cast<bool>(backend->free(p)));

    std::vector<int32_t> wantTotals(c.experts, 0);
    for (int32_t id : ids)
      ++wantTotals[id];
    if (!plan.singleChunk(tokens))
      EXPECT_EQ(totals, wantTotals);
    EXPECT_EQ(plan.countGrid(tokens)[0] == 0, plan.singleChunk(tokens));
    EXPECT_EQ(plan.scanGrid(tokens)[0] == 0, plan.singleChunk(tokens));
    ASSERT_EQ(valid[0], want->numValidIds[0]);
    ASSERT_EQ(valid[1], want->numValidIds[1]);
    for (int64_t i = 0; i < want->numValidIds[0]; ++i) {
      ASSERT_EQ(gotIds[i], want->sortedTokenIds[i])
          << "sorted row " << i << ": token " << (gotIds[i] & 0xffffff) << " slot "
          << (uint32_t(gotIds[i]) >> 24) << ", want token " << (want->sortedTokenIds[i] & 0xffffff)
          << " slot " << (uint32_t(want->sortedTokenIds[i]) >> 24);
      ASSERT_EQ(std::memcmp(&gotW[i], &want->sortedWeights[i], 4), 0) << "sorted row " << i;
    }
    for (int64_t blk = 0; blk < want->numValidIds[0] / c.blockM; ++blk)
      ASSERT_EQ(gotExperts[blk], want->sortedExpertIds[blk]) << "block " << blk;
  }

  SortShape c{};
  SortPlan plan;
  std::unique_ptr<runtime::Backend> backend;
  runtime::KernelHandle kernels[3];
  uint32_t blockSizes[3] = {};
  uint32_t dynamicLdsBytes[3] = {};
};

class SortKernels : public ::testing::TestWithParam<SortShape> {
protected:
  void SetUp() override { rig.prepare(GetParam()); }
  void check(int64_t tokens, Routing routing) { rig.check(tokens, routing); }
  SortRig rig;
  const SortPlan &plan = rig.plan;
};

TEST_P(SortKernels, MatchReference) {
  const SortShape c = GetParam();
  std::vector<int64_t> tokenCounts = {1, 2, 7, 63, 64, 65, 255, 1000};
  // Several chunks even for topk = 1 (a chunk holds plan.chunkTokens tokens).
  if (c.topk <= 2 || c.experts == 896)
    tokenCounts.push_back(4097);
  // The most tokens sort sorts alone in one workgroup, and one more (the
  // three kernels); the most whose entries wave 0 sorts in registers, and one
  // more (the workgroup's path).
  const int64_t single = plan.singleEntries / c.topk, tiny = plan.tinyEntries / c.topk;
  for (int64_t t : {single, single + 1, tiny, tiny + 1})
    if (!llvm::is_contained(tokenCounts, t))
      tokenCounts.push_back(t);
  for (int64_t t : tokenCounts)
    for (Routing r :
         {Routing::Router, Routing::OneExpert, Routing::HotExperts, Routing::LastExpert}) {
      if (r != Routing::Router && t > 1000 && c.experts == 896)
        continue; // the router routing covers the large case
      check(t, r);
      if (HasFatalFailure())
        return;
    }
}

std::vector<SortShape> sortShapes() {
  // The last three: sorting blocks that are not powers of two.
  return {{8, 1, 32},    {8, 2, 16},     {8, 8, 128},   {33, 1, 64},   {33, 8, 32},
          {33, 16, 16},  {257, 2, 128},  {257, 16, 64}, {896, 1, 16},  {896, 8, 64},
          {896, 16, 32}, {896, 16, 128}, {33, 8, 48},   {257, 16, 80}, {896, 16, 96}};
}

INSTANTIATE_TEST_SUITE_P(Gfx950, SortKernels, ::testing::ValuesIn(sortShapes()),
                         [](const ::testing::TestParamInfo<SortShape> &info) {
                           const SortShape &c = info.param;
                           return "E" + std::to_string(c.experts) + "_k" + std::to_string(c.topk) +
                                  "_bm" + std::to_string(c.blockM);
                         });

// sort with its LDS as dynamic shared memory in two waves (SortPlan::dynamicShared, sm_90a's
// layout for many experts): expert counts whose buffers are not whole 16-byte units by themselves
// (257 + 1 words a histogram row), one and several chunks.
TEST(SortKernelsDynamicLds, MatchReference) {
  for (SortShape c : {SortShape{257, 16, 64}, SortShape{896, 16, 32}, SortShape{33, 8, 48},
                      SortShape{8, 2, 16}}) {
    SortRig rig;
    rig.prepare(c, /*dynamicLds=*/true);
    if (HasFatalFailure())
      return;
    const int64_t single = rig.plan.singleEntries / c.topk;
    for (int64_t tokens : {int64_t(1), int64_t(7), int64_t(65), single, single + 1})
      for (Routing r : {Routing::Router, Routing::HotExperts}) {
        rig.check(tokens, r);
        if (HasFatalFailure())
          return;
      }
  }
}

// Random shapes (experts 1-1100, a quarter of them 1-40, top-1 to top-16, block_m any multiple of
// 16 up to 128) at token counts around where wave 0 stops sorting alone (SortPlan::tinyEntries) and
// beyond, each with a random routing: 40 draws.
TEST(SortKernelsRandom, ShapesAroundTheLoneWaveMatchTheReference) {
  num::Rng rng(20261205);
  auto pick = [&](int64_t lo, int64_t hi) {
    return lo + int64_t(rng.next() % uint64_t(hi - lo + 1));
  };
  const Routing routings[] = {Routing::Router, Routing::OneExpert, Routing::HotExperts,
                              Routing::LastExpert};
  for (int draw = 0; draw < 40; ++draw) {
    SortShape c;
    c.experts = draw % 4 == 0 ? pick(1, 40) : pick(1, 1100); // a quarter near 32 experts
    c.topk = pick(1, std::min<int64_t>(16, c.experts));
    c.blockM = 16 * pick(1, 8);
    SortRig rig;
    rig.prepare(c);
    if (HasFatalFailure())
      return;
    const int64_t tiny = std::max<int64_t>(1, rig.plan.tinyEntries / c.topk);
    for (int64_t tokens : {tiny, tiny + 1, pick(1, 3 * tiny + 2), pick(1, 700)}) {
      rig.check(tokens, routings[rng.next() % 4]);
      if (HasFatalFailure())
        return;
    }
  }
}

} // namespace
