//===- HipFakeTest.cpp - The HIP backend over a stand-in libamdhip64 ------===//
//
// MOEGEN_HIP_LIB points at FakeHip.cpp's library: the backend's loader,
// symbol table, device selection, module loading, copies and launches run
// for real; the "device" is host memory.
//
//===----------------------------------------------------------------------===//

#include "compiler/spec/DslParser.h"
#include "runtime/api/MoeLayer.h"
#include "runtime/hip/HipBackend.h"
#include "runtime/jit/Compiler.h"
#include "test/unit/runtime/FakeDriverTest.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

using namespace moegen;
using namespace moegen::runtime;
using namespace moegen::test;

namespace {

struct HipFake : ::testing::Test {
  void SetUp() override {
    ::setenv("MOEGEN_HIP_LIB", MOEGEN_FAKE_HIP, 1);
    ::unsetenv("FAKE_HIP_ARCH");
    ::unsetenv("FAKE_HIP_DEVICES");
  }
  template <class F> F fake(const char *name) { return fakeDriverHook<F>(MOEGEN_FAKE_HIP, name); }
};

TEST_F(HipFake, NoGfx950DeviceIsAnErrorListingTheDevices) {
  ::setenv("FAKE_HIP_ARCH", "gfx942:sramecc+:xnack-", 1);
  ::setenv("FAKE_HIP_DEVICES", "2", 1);
  auto b = createHipBackend();
  ASSERT_FALSE(bool(b));
  std::string msg = llvm::toString(b.takeError());
  EXPECT_NE(msg.find("no gfx950 device among the 2 HIP device(s)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("device 1: gfx942:sramecc+:xnack-"), std::string::npos) << msg;
  ::setenv("FAKE_HIP_DEVICES", "0", 1);
  auto none = createHipBackend();
  ASSERT_FALSE(bool(none));
  EXPECT_NE(llvm::toString(none.takeError()).find("no HIP device"), std::string::npos);
}

TEST_F(HipFake, ErrorsCarryHipsNameAndString) {
  auto b = createHipBackend();
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  EXPECT_EQ((*b)->name(), "hip");
  auto big = (*b)->allocate(size_t(1) << 41);
  ASSERT_FALSE(bool(big));
  EXPECT_NE(llvm::toString(big.takeError()).find("hipErrorOutOfMemory (out of memory)"),
            std::string::npos);
  CodeBundle junk;
  junk.Hsaco = {1, 2, 3, 4};
  junk.Name = "junk";
  auto m = (*b)->loadCode(junk);
  ASSERT_FALSE(bool(m));
  std::string msg = llvm::toString(m.takeError());
  EXPECT_NE(msg.find("hipErrorInvalidImage"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'junk'"), std::string::npos) << msg;
}

TEST_F(HipFake, AMoeLayerRunsThroughTheHipBackend) {
  auto b = createHipBackend();
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  Backend &hip = **b;
  const char *src = std::getenv("MOEGEN_SOURCE_DIR");
  auto spec = parseMoeSpecFile(std::string(src ? src : ".") + "/examples/kimi_k3_tp8_a4w4.moe");
  ASSERT_TRUE(bool(spec));
  CompilerOptions o;
  o.diskCache = false;
  auto layer = MoeLayer::create(std::make_shared<Compiler>(o), hip, *spec);
  ASSERT_TRUE(bool(layer)) << llvm::toString(layer.takeError());

  // Device memory round-trips.
  std::vector<int32_t> ids(4 * 16, 3);
  auto idsDev = hip.allocate(ids.size() * 4);
  ASSERT_TRUE(bool(idsDev));
  ASSERT_FALSE(bool(hip.copyToDevice(*idsDev, ids.data(), ids.size() * 4)));
  std::vector<int32_t> back(ids.size());
  ASSERT_FALSE(bool(hip.copyToHost(back.data(), *idsDev, back.size() * 4)));
  EXPECT_EQ(back, ids);

  auto ws = (*layer)->workspaceLayout(4);
  ASSERT_TRUE(bool(ws));
  LayerArgs args;
  args.tokens = 4;
  args.topkIds = *idsDev;
  // The fake runs no kernel: only what the layer clears must be full size.
  for (DevicePtr *p :
       {&args.topkWeights, &args.hidden, &args.w1, &args.w1Scale, &args.w2, &args.w2Scale})
    *p = llvm::cantFail(hip.allocate(4096));
  args.output = llvm::cantFail(hip.allocate(4 * spec->problem.modelDim * 2));
  args.workspace = llvm::cantFail(hip.allocate(ws->total));
  args.workspaceBytes = ws->total;
  // The layer's launches between two events (the fake's clock: 2 ms each).
  auto start = hip.createEvent(), end = hip.createEvent();
  ASSERT_TRUE(start && end);
  ASSERT_FALSE(bool(hip.recordEvent(*start)));
  ASSERT_FALSE(bool((*layer)->run(args)));
  ASSERT_FALSE(bool(hip.recordEvent(*end)));
  ASSERT_FALSE(bool(hip.synchronize()));

  auto d = (*layer)->dispatch(4);
  ASSERT_TRUE(bool(d));
  // 4 tokens are one token chunk: sort_count and sort_scan (the first two
  // kernels) have empty grids and are not launched.
  int n = fake<int (*)()>("fakeHipLaunchCount")();
  ASSERT_EQ(n, int(d->kernels->kernels.size()) - 2);
  auto ms = hip.elapsedMs(*start, *end);
  ASSERT_TRUE(bool(ms)) << llvm::toString(ms.takeError());
  EXPECT_EQ(*ms, 2.0f * n);
  EXPECT_EQ(d->kernels->kernels[0]->meta.symbol, "moe_sort_count_e896_k16");
  EXPECT_EQ(d->kernels->kernels[1]->meta.symbol, "moe_sort_scan_e896");
  auto name = fake<const char *(*)(int)>("fakeHipLaunchName");
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(name(i), d->kernels->kernels[i + 2]->meta.symbol);
  // The sort's arguments are packed in signature order.
  EXPECT_STREQ(name(0), "moe_sort_e896_k16_bm32");
  const unsigned *grid = fake<const unsigned *(*)(int)>("fakeHipLaunchGrid")(0);
  const unsigned *block = fake<const unsigned *(*)(int)>("fakeHipLaunchBlock")(0);
  EXPECT_EQ(grid[0] * grid[1] * grid[2], 1u);
  EXPECT_EQ(block[0], 512u);
  size_t size = 0;
  const unsigned char *k =
      fake<const unsigned char *(*)(int, size_t *)>("fakeHipLaunchKernarg")(0, &size);
  // topk_ids, topk_weights, chunk_counts, expert_totals, sorted_ids,
  // sorted_weights, sorted_experts, num_valid_ids (8 bytes each), tokens (4).
  ASSERT_EQ(size, 8 * 8 + 4u);
  uint64_t p[8];
  std::memcpy(p, k, sizeof(p));
  EXPECT_EQ(p[0], *idsDev);
  EXPECT_EQ(p[1], args.topkWeights);
  EXPECT_EQ(p[2], args.workspace + ws->sortCounts.offset);
  EXPECT_EQ(p[3], args.workspace + ws->sortTotals.offset);
  EXPECT_EQ(p[4], args.workspace + ws->sortedIds.offset);
  EXPECT_EQ(p[5], args.workspace + ws->sortedWeights.offset);
  EXPECT_EQ(p[6], args.workspace + ws->sortedExperts.offset);
  EXPECT_EQ(p[7], args.workspace + ws->numValidIds.offset);
  int32_t tokens;
  std::memcpy(&tokens, k + 64, 4);
  EXPECT_EQ(tokens, 4);
  ASSERT_FALSE(bool(hip.free(*idsDev)));
  llvm::Error twice = hip.free(*idsDev);
  ASSERT_TRUE(bool(twice));
  EXPECT_NE(llvm::toString(std::move(twice)).find("not an allocation"), std::string::npos);
}

TEST_F(HipFake, EventsNeedRecordingAndComeFromTheBackend) {
  auto b = createHipBackend();
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  EventHandle start;
  ASSERT_NO_FATAL_FAILURE(expectUnrecordedEventHasNoTime(**b, "hipEventElapsedTime", start));
  auto foreign = (*b)->recordEvent(EventHandle{99});
  ASSERT_TRUE(bool(foreign));
  EXPECT_NE(llvm::toString(std::move(foreign)).find("event 99 is not from this backend"),
            std::string::npos);
}

TEST_F(HipFake, HasNoGraphsAndSaysSo) {
  auto b = createHipBackend();
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  bool recorded = false;
  auto g = (*b)->captureGraph([&] {
    recorded = true;
    return llvm::Error::success();
  });
  ASSERT_FALSE(bool(g));
  EXPECT_EQ(llvm::toString(g.takeError()),
            "hip backend: device graphs are not supported (the cuda backend has them)");
  EXPECT_FALSE(recorded);
  llvm::Error launched = (*b)->launchGraph(GraphHandle{0});
  ASSERT_TRUE(bool(launched));
  EXPECT_NE(llvm::toString(std::move(launched)).find("hip backend: device graphs"),
            std::string::npos);
}

} // namespace
