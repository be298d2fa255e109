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
  // The same call recorded into a HIP graph: nothing runs until the graph is
  // launched, then the same kernels in the same order.
  auto graph = (*layer)->captureRuns({args});
  ASSERT_TRUE(bool(graph)) << llvm::toString(graph.takeError());
  ASSERT_EQ(fake<int (*)()>("fakeHipLaunchCount")(), n);
  ASSERT_FALSE(bool(hip.launchGraph(*graph)));
  ASSERT_EQ(fake<int (*)()>("fakeHipLaunchCount")(), 2 * n);
  for (int i = 0; i < n; ++i)
    EXPECT_STREQ(name(n + i), name(i));
  ASSERT_FALSE(bool(hip.destroyGraph(*graph)));
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

/// A gfx950 code object with one kernel, for the graph tests: the fake
/// launches nothing, it records the launch and its arguments.
struct HipGraphFixture {
  std::unique_ptr<Backend> b;
  KernelHandle k;
  DevicePtr p = 0;
  explicit HipGraphFixture(HipFake &t) : t(t) {
    auto created = createHipBackend();
    EXPECT_TRUE(bool(created)) << llvm::toString(created.takeError());
    b = std::move(*created);
    const char *src = std::getenv("MOEGEN_SOURCE_DIR");
    auto spec = parseMoeSpecFile(std::string(src ? src : ".") + "/examples/kimi_k3_tp8_a4w4.moe");
    EXPECT_TRUE(bool(spec));
    CompilerOptions o;
    o.diskCache = false;
    auto sort = Compiler(o).getKernel(*spec, Target(), KernelFamily::Sort);
    EXPECT_TRUE(bool(sort)) << llvm::toString(sort.takeError());
    CodeBundle code;
    code.Hsaco = (*sort)->hsaco;
    code.Name = (*sort)->meta.symbol;
    auto m = b->loadCode(code);
    EXPECT_TRUE(bool(m)) << llvm::toString(m.takeError());
    k = llvm::cantFail(b->getKernel(*m, code.Name));
    p = llvm::cantFail(b->allocate(64));
    std::vector<uint8_t> zeros(64, 0);
    llvm::cantFail(b->copyToDevice(p, zeros.data(), 64));
  }
  llvm::Error launch(int32_t tokens) {
    KernargPacker args;
    args.add(uint64_t(p)).add(int32_t(tokens));
    return b->launch(k, {1, 1, 1}, {64, 1, 1}, 0, args.bytes());
  }
  int launchCount() { return t.fake<int (*)()>("fakeHipLaunchCount")(); }
  int liveGraphs() { return t.fake<int (*)()>("fakeHipLiveGraphs")(); }
  int32_t launchedTokens(int i) {
    size_t size = 0;
    const unsigned char *bytes =
        t.fake<const unsigned char *(*)(int, size_t *)>("fakeHipLaunchKernarg")(i, &size);
    int32_t tokens;
    std::memcpy(&tokens, bytes + 8, 4);
    return tokens;
  }
  uint8_t byteAt(size_t i) {
    uint8_t host[64];
    llvm::cantFail(b->copyToHost(host, p, 64));
    return host[i];
  }
  static std::string message(llvm::Error e) { return e ? llvm::toString(std::move(e)) : "success"; }
  HipFake &t;
};

TEST_F(HipFake, GraphsRecordLaunchesAndMemsetsAndReplayThem) {
  HipGraphFixture f(*this);
  const int before = f.launchCount();
  auto g = f.b->captureGraph([&]() -> llvm::Error {
    EXPECT_TRUE(f.b->capturing());
    if (llvm::Error e = f.b->memset(f.p, 0x5A, 8))
      return e;
    return f.launch(37); // the arguments are copied at the launch
  });
  ASSERT_TRUE(bool(g)) << llvm::toString(g.takeError());
  EXPECT_FALSE(f.b->capturing());
  EXPECT_EQ(f.launchCount(), before); // recorded, not run
  EXPECT_EQ(f.byteAt(0), 0);
  // Each launch of the graph runs the memset and the kernel; the fake's
  // clock advances 2 ms per kernel.
  auto start = f.b->createEvent(), end = f.b->createEvent();
  ASSERT_TRUE(start && end);
  ASSERT_FALSE(bool(f.b->recordEvent(*start)));
  ASSERT_FALSE(bool(f.b->launchGraph(*g)));
  ASSERT_FALSE(bool(f.b->launchGraph(*g)));
  ASSERT_FALSE(bool(f.b->recordEvent(*end)));
  EXPECT_EQ(llvm::cantFail(f.b->elapsedMs(*start, *end)), 4.0f);
  ASSERT_EQ(f.launchCount(), before + 2);
  EXPECT_EQ(f.launchedTokens(before), 37);
  EXPECT_EQ(f.launchedTokens(before + 1), 37);
  EXPECT_EQ(f.byteAt(0), 0x5A);
  EXPECT_EQ(f.byteAt(8), 0);
  EXPECT_EQ(fake<size_t (*)()>("fakeHipGraphLaunches")(), 2u);
  EXPECT_EQ(f.liveGraphs(), 1); // the executable graph; the captured one is freed
  EXPECT_EQ(f.message(f.b->destroyGraph(*g)), "success");
  EXPECT_EQ(f.liveGraphs(), 0);
  EXPECT_EQ(f.message(f.b->launchGraph(*g)), "hip backend: graph 0 was destroyed");
  EXPECT_EQ(f.message(f.b->launchGraph(GraphHandle{9})),
            "hip backend: graph 9 is not from this backend");
}

TEST_F(HipFake, ACaptureRefusesWhatAGraphCannotHold) {
  // Each would break the capture in the runtime (the fake's too): the
  // backend refuses them first, so the capture stays valid.
  HipGraphFixture f(*this);
  CodeBundle late;
  late.Hsaco = {0x7f, 'E', 'L', 'F'};
  late.Name = "late";
  GraphHandle g;
  ASSERT_NO_FATAL_FAILURE(expectCaptureRefusesWhatAGraphCannotHold(
      *f.b, f.p, late, "hip", "loading code object 'late'", [&] { return f.launch(5); }, g));
  const int before = f.launchCount();
  ASSERT_FALSE(bool(f.b->launchGraph(g)));
  ASSERT_EQ(f.launchCount(), before + 1);
  EXPECT_EQ(f.launchedTokens(before), 5);
  // A failed recording ends the capture and keeps no graph.
  auto failed = f.b->captureGraph([&]() -> llvm::Error {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "the layer refused");
  });
  ASSERT_FALSE(bool(failed));
  EXPECT_EQ(llvm::toString(failed.takeError()), "the layer refused");
  EXPECT_FALSE(f.b->capturing());
  EXPECT_EQ(f.liveGraphs(), 1); // the first graph only
  uint8_t host[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(f.message(f.b->copyToDevice(f.p, host, 8)), "success");
  EXPECT_EQ(f.byteAt(7), 8);
}

TEST_F(HipFake, GraphCallErrorsCarryHipsNameAndString) {
  HipGraphFixture f(*this);
  auto captureError = [&](const char *fail) {
    ::setenv("FAKE_HIP_FAIL", fail, 1);
    auto g = f.b->captureGraph([&] { return f.launch(1); });
    ::unsetenv("FAKE_HIP_FAIL");
    return g ? std::string("a graph") : llvm::toString(g.takeError());
  };
  EXPECT_EQ(captureError("hipStreamBeginCapture=999"),
            "hip backend: hipStreamBeginCapture failed: hipErrorUnknown (unknown error)");
  EXPECT_EQ(captureError("hipStreamEndCapture=901"),
            "hip backend: hipStreamEndCapture (the recorded work had a call that a graph cannot "
            "hold) failed: hipErrorStreamCaptureInvalidated (operation failed due to a previous "
            "error during capture)");
  EXPECT_EQ(captureError("hipGraphInstantiateWithFlags=2"),
            "hip backend: hipGraphInstantiateWithFlags failed: hipErrorOutOfMemory (out of "
            "memory)");
  EXPECT_EQ(f.liveGraphs(), 0); // nothing left behind by the failures
  auto g = f.b->captureGraph([&] { return f.launch(1); });
  ASSERT_TRUE(bool(g)) << llvm::toString(g.takeError());
  ::setenv("FAKE_HIP_FAIL", "hipGraphLaunch=2", 1);
  EXPECT_EQ(f.message(f.b->launchGraph(*g)),
            "hip backend: hipGraphLaunch(graph 0) failed: hipErrorOutOfMemory (out of memory)");
  ::unsetenv("FAKE_HIP_FAIL");
  EXPECT_EQ(f.message(f.b->launchGraph(*g)), "success");
}

} // namespace
