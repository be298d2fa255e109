//===- CudaFakeTest.cpp - The cuda backend over a stand-in libcuda --------===//
//
// The backend's own logic without a GPU: device selection by compute
// capability, PTX loading with the driver's log in errors, symbol lookup,
// memory, launches with the packed parameter buffer (cuLaunchKernelEx with
// programmatic stream serialization), and graphs (stream capture,
// instantiation, launches, what a capture refuses). A program of its own:
// the driver library, once loaded, stays for the process.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaBackend.h"
#include "test/unit/runtime/FakeDriverTest.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

using namespace moegen::runtime;
using namespace moegen::test;

namespace {

const char *kPtx = R"(.version 8.1
.target sm_90a
.address_size 64
.visible .entry moe_quant_mxfp4_c256(
  .param .u64 p0, .param .u64 p1, .param .u64 p2, .param .u32 p3)
{ ret; }
)";

/// PTX text as a code bundle (without the NUL: the backend adds it).
CodeBundle ptxCode(llvm::StringRef ptx, const char *name) {
  CodeBundle code;
  code.Hsaco.assign(ptx.begin(), ptx.end());
  code.Name = name;
  return code;
}

/// kPtx's kernel, loaded on `b`.
llvm::Expected<KernelHandle> quantKernel(Backend &b) {
  auto m = b.loadCode(ptxCode(kPtx, "quant"));
  if (!m)
    return m.takeError();
  return b.getKernel(*m, "moe_quant_mxfp4_c256");
}

struct FakeDriver {
  FakeDriver() { ::setenv("MOEGEN_CUDA_LIB", MOEGEN_FAKE_CUDA, 1); }
  ~FakeDriver() {
    ::unsetenv("MOEGEN_CUDA_LIB");
    ::unsetenv("FAKE_CUDA_CC");
    ::unsetenv("FAKE_CUDA_FAIL");
    ::unsetenv("FAKE_CUDA_RESOURCES");
  }
  template <class F> F fn(const char *name) { return fakeDriverHook<F>(MOEGEN_FAKE_CUDA, name); }
};

TEST(CudaFake, LoadsLaunchesAndCopiesThroughTheDriverApi) {
  FakeDriver fake;
  auto b = createCudaBackend();
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  EXPECT_EQ((*b)->name(), "cuda");
  auto m = (*b)->loadCode(ptxCode(kPtx, "quant"));
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  auto k = (*b)->getKernel(*m, "moe_quant_mxfp4_c256");
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  auto missing = (*b)->getKernel(*m, "moe_sort");
  ASSERT_FALSE(bool(missing));
  EXPECT_NE(llvm::toString(missing.takeError())
                .find("cuModuleGetFunction('moe_sort') failed: "
                      "CUDA_ERROR_NOT_FOUND"),
            std::string::npos);

  auto p = (*b)->allocate(64);
  ASSERT_TRUE(bool(p));
  uint8_t in[64], out[64];
  for (int i = 0; i < 64; ++i)
    in[i] = uint8_t(i * 7);
  ASSERT_FALSE(bool((*b)->copyToDevice(*p, in, 64)));
  ASSERT_FALSE(bool((*b)->memset(*p, 0xA5, 8)));
  ASSERT_FALSE(bool((*b)->copyToHost(out, *p, 64)));
  EXPECT_EQ(out[0], 0xA5);
  EXPECT_EQ(out[7], 0xA5);
  EXPECT_EQ(out[8], uint8_t(8 * 7));

  KernargPacker args;
  args.add(uint64_t(*p)).add(uint64_t(2)).add(uint64_t(3)).add(int32_t(37));
  auto start = (*b)->createEvent(), end = (*b)->createEvent();
  ASSERT_TRUE(start && end);
  ASSERT_FALSE(bool((*b)->recordEvent(*start)));
  ASSERT_FALSE(bool((*b)->launch(*k, {5, 1, 1}, {256, 1, 1}, 0, args.bytes())));
  ASSERT_FALSE(bool((*b)->recordEvent(*end)));
  ASSERT_FALSE(bool((*b)->synchronize()));
  auto count = fake.fn<size_t (*)()>("fakeCudaLaunchCount");
  ASSERT_NE(count, nullptr);
  ASSERT_EQ(count(), 1u);
  // The fake's clock advances 1.5 ms per launch: one launch between the events.
  auto ms = (*b)->elapsedMs(*start, *end);
  ASSERT_TRUE(bool(ms)) << llvm::toString(ms.takeError());
  EXPECT_EQ(*ms, 1.5f);
  auto reversed = (*b)->elapsedMs(*end, *start);
  ASSERT_TRUE(bool(reversed));
  EXPECT_EQ(*reversed, -1.5f);
  EXPECT_STREQ(fake.fn<const char *(*)(size_t)>("fakeCudaLaunchName")(0), "moe_quant_mxfp4_c256");
  EXPECT_EQ(fake.fn<const unsigned *(*)(size_t)>("fakeCudaLaunchGrid")(0)[0], 5u);
  EXPECT_EQ(fake.fn<const unsigned *(*)(size_t)>("fakeCudaLaunchBlock")(0)[0], 256u);
  // This PTX does not wait for its predecessors: launched after them.
  EXPECT_EQ(fake.fn<int (*)(size_t)>("fakeCudaLaunchProgrammatic")(0), 0);
  const unsigned char *bytes = nullptr;
  size_t n = fake.fn<size_t (*)(size_t, const unsigned char **)>("fakeCudaLaunchParams")(0, &bytes);
  ASSERT_EQ(n, 28u); // three 8-byte pointers and an i32, in order
  int32_t tokens;
  std::memcpy(&tokens, bytes + 24, 4);
  EXPECT_EQ(tokens, 37);

  auto bad = (*b)->free(*p + 1);
  ASSERT_TRUE(bool(bad));
  EXPECT_NE(llvm::toString(std::move(bad)).find("not an allocation"), std::string::npos);
  EXPECT_FALSE(bool((*b)->free(*p)));
}

TEST(CudaFake, KernelsThatWaitForTheirPredecessorsLaunchProgrammatically) {
  // moegen's kernels start with griddepcontrol.wait: launched with
  // programmatic stream serialization; a kernel of the same module without
  // it is not.
  const char *ptx = R"(.version 8.1
.target sm_90a
.address_size 64
.visible .entry moe_sort_e8_k2_bm32(.param .u64 p0)
{
  griddepcontrol.wait;
  ret;
}
.visible .entry other(.param .u64 p0)
{ ret; }
)";
  FakeDriver fake;
  auto b = createCudaBackend();
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  auto m = (*b)->loadCode(ptxCode(ptx, "sort"));
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  auto waits = (*b)->getKernel(*m, "moe_sort_e8_k2_bm32");
  auto other = (*b)->getKernel(*m, "other");
  ASSERT_TRUE(waits && other);
  KernargPacker args;
  args.add(uint64_t(0));
  auto count = fake.fn<size_t (*)()>("fakeCudaLaunchCount");
  auto programmatic = fake.fn<int (*)(size_t)>("fakeCudaLaunchProgrammatic");
  size_t first = count();
  ASSERT_FALSE(bool((*b)->launch(*waits, {1, 1, 1}, {32, 1, 1}, 0, args.bytes())));
  ASSERT_FALSE(bool((*b)->launch(*other, {1, 1, 1}, {32, 1, 1}, 0, args.bytes())));
  ASSERT_FALSE(bool((*b)->synchronize()));
  ASSERT_EQ(count(), first + 2);
  EXPECT_EQ(programmatic(first), 1);
  EXPECT_EQ(programmatic(first + 1), 0);
}

TEST(CudaFake, KernelsOptInToDynamicSharedMemoryAbove48KiB) {
  FakeDriver fake;
  auto b = createCudaBackend();
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  auto k = quantKernel(**b);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  KernargPacker args;
  args.add(uint64_t(1)).add(uint64_t(2)).add(uint64_t(3)).add(int32_t(4));
  auto count = fake.fn<size_t (*)()>("fakeCudaLaunchCount");
  auto shared = fake.fn<unsigned (*)(size_t)>("fakeCudaLaunchShared");
  size_t before = count();
  // (The fake refuses a launch above 48 KiB without the opt-in, as the
  // driver does.)
  for (uint32_t bytes : {0u, 48u * 1024, 96u * 1024, 96u * 1024, 200u * 1024})
    ASSERT_FALSE(bool((*b)->launch(*k, {1, 1, 1}, {128, 1, 1}, bytes, args.bytes()))) << bytes;
  ASSERT_EQ(count(), before + 5);
  EXPECT_EQ(shared(before + 2), 96u * 1024);
  EXPECT_EQ(shared(before + 4), 200u * 1024);
  // Above what any Hopper workgroup may have: the driver's refusal, named.
  auto tooMuch = (*b)->launch(*k, {1, 1, 1}, {128, 1, 1}, 228 * 1024, args.bytes());
  ASSERT_TRUE(bool(tooMuch));
  std::string text = llvm::toString(std::move(tooMuch));
  EXPECT_NE(text.find("allowing 'moe_quant_mxfp4_c256' 233472 bytes of dynamic shared memory "
                      "(cuFuncSetAttribute) failed"),
            std::string::npos)
      << text;
}

TEST(CudaFake, KernelResourcesAreTheDriversFigures) {
  FakeDriver fake;
  ::setenv("FAKE_CUDA_RESOURCES", "stage1=200:8,quant=128:40", 1);
  auto b = createCudaBackend();
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  auto k = quantKernel(**b);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  auto r = (*b)->kernelResources(*k);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->registers, 128);
  EXPECT_EQ(r->localBytes, 40);
  EXPECT_EQ(r->staticSharedBytes, 0);
  EXPECT_EQ(r->maxThreadsPerBlock, 512); // 64K registers / 128
  // A handle the backend did not give, and the driver's error, are named.
  KernelHandle stranger = *k;
  stranger.Module = 77;
  auto unknown = (*b)->kernelResources(stranger);
  ASSERT_FALSE(bool(unknown));
  llvm::consumeError(unknown.takeError());
  ::setenv("FAKE_CUDA_FAIL", "cuFuncGetAttribute=2", 1);
  auto failed = (*b)->kernelResources(*k);
  ASSERT_FALSE(bool(failed));
  std::string text = llvm::toString(failed.takeError());
  EXPECT_NE(text.find("cuFuncGetAttribute(4) of 'moe_quant_mxfp4_c256' failed: "
                      "CUDA_ERROR_OUT_OF_MEMORY"),
            std::string::npos)
      << text;
}

TEST(CudaFake, PtxTheDriverRejectsCarriesItsLog) {
  FakeDriver fake;
  auto b = createCudaBackend();
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  std::string ptx = ".version 8.1\n.target sm_80\n";
  auto m = (*b)->loadCode(ptxCode(ptx, "old"));
  ASSERT_FALSE(bool(m));
  std::string msg = llvm::toString(m.takeError());
  EXPECT_NE(msg.find("loading PTX 'old'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("CUDA_ERROR_INVALID_IMAGE"), std::string::npos) << msg;
  EXPECT_NE(msg.find("driver log:\nptxas fatal: not sm_90a PTX"), std::string::npos) << msg;
}

TEST(CudaFake, EventsNeedRecordingAndComeFromTheBackend) {
  FakeDriver fake;
  auto b = createCudaBackend();
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  EventHandle start;
  ASSERT_NO_FATAL_FAILURE(expectUnrecordedEventHasNoTime(**b, "cuEventElapsedTime", start));
  auto foreign = (*b)->elapsedMs(start, EventHandle{7});
  ASSERT_FALSE(bool(foreign));
  EXPECT_NE(llvm::toString(foreign.takeError()).find("event 7 is not from this backend"),
            std::string::npos);
}

TEST(CudaFake, OnlyComputeCapability90RunsSm90a) {
  FakeDriver fake;
  ::setenv("FAKE_CUDA_CC", "80", 1);
  auto b = createCudaBackend();
  ASSERT_FALSE(bool(b));
  std::string msg = llvm::toString(b.takeError());
  EXPECT_NE(msg.find("no device runs sm_90a among the 1 CUDA device(s)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("device 0: Fake H200 (sm_80)"), std::string::npos) << msg;
}

/// A backend with the quantization kernel loaded and a 64-byte buffer.
struct GraphFixture {
  FakeDriver fake;
  std::unique_ptr<Backend> b;
  KernelHandle k;
  DevicePtr p = 0;
  GraphFixture() {
    auto created = createCudaBackend();
    EXPECT_TRUE(bool(created)) << llvm::toString(created.takeError());
    b = std::move(*created);
    auto m = b->loadCode(ptxCode(kPtx, "quant"));
    EXPECT_TRUE(bool(m));
    k = llvm::cantFail(b->getKernel(*m, "moe_quant_mxfp4_c256"));
    p = llvm::cantFail(b->allocate(64));
    std::vector<uint8_t> zeros(64, 0);
    llvm::cantFail(b->copyToDevice(p, zeros.data(), 64));
  }
  size_t launchCount() { return fake.fn<size_t (*)()>("fakeCudaLaunchCount")(); }
  int liveGraphs() { return fake.fn<int (*)()>("fakeCudaLiveGraphs")(); }
  int32_t launchedTokens(size_t i) {
    const unsigned char *bytes = nullptr;
    fake.fn<size_t (*)(size_t, const unsigned char **)>("fakeCudaLaunchParams")(i, &bytes);
    int32_t tokens;
    std::memcpy(&tokens, bytes + 24, 4);
    return tokens;
  }
  uint8_t byteAt(size_t i) {
    uint8_t host[64];
    llvm::cantFail(b->copyToHost(host, p, 64));
    return host[i];
  }
  std::string message(llvm::Error e) { return e ? llvm::toString(std::move(e)) : "success"; }
};

TEST(CudaFakeGraph, RecordedWorkRunsOnlyWhenTheGraphIsLaunched) {
  GraphFixture f;
  const size_t before = f.launchCount();
  auto g = f.b->captureGraph([&]() -> llvm::Error {
    EXPECT_TRUE(f.b->capturing());
    if (llvm::Error e = f.b->memset(f.p, 0x5A, 8))
      return e;
    KernargPacker args;
    args.add(uint64_t(f.p)).add(uint64_t(2)).add(uint64_t(3)).add(int32_t(37));
    // The arguments are recorded at the launch: the packer dies with this scope.
    return f.b->launch(f.k, {5, 1, 1}, {256, 1, 1}, 0, args.bytes());
  });
  ASSERT_TRUE(bool(g)) << llvm::toString(g.takeError());
  EXPECT_FALSE(f.b->capturing());
  EXPECT_EQ(f.launchCount(), before); // recorded, not run
  EXPECT_EQ(f.byteAt(0), 0);

  // Each launch of the graph runs the memset and the kernel; the fake's clock
  // advances 1.5 ms per kernel.
  auto start = f.b->createEvent(), end = f.b->createEvent();
  ASSERT_TRUE(start && end);
  ASSERT_FALSE(bool(f.b->recordEvent(*start)));
  ASSERT_FALSE(bool(f.b->launchGraph(*g)));
  ASSERT_FALSE(bool(f.b->launchGraph(*g)));
  ASSERT_FALSE(bool(f.b->recordEvent(*end)));
  EXPECT_EQ(llvm::cantFail(f.b->elapsedMs(*start, *end)), 3.0f);
  ASSERT_EQ(f.launchCount(), before + 2);
  EXPECT_EQ(f.launchedTokens(before), 37);
  EXPECT_EQ(f.launchedTokens(before + 1), 37);
  EXPECT_EQ(f.byteAt(0), 0x5A);
  EXPECT_EQ(f.byteAt(8), 0);
  EXPECT_EQ(f.fake.fn<size_t (*)()>("fakeCudaGraphLaunches")(), 2u);

  EXPECT_EQ(f.liveGraphs(), 1); // the executable graph; the captured one is freed
  EXPECT_EQ(f.message(f.b->destroyGraph(*g)), "success");
  EXPECT_EQ(f.liveGraphs(), 0);
  EXPECT_EQ(f.message(f.b->launchGraph(*g)), "cuda backend: graph 0 was destroyed");
  EXPECT_EQ(f.message(f.b->destroyGraph(*g)), "cuda backend: graph 0 was destroyed");
  EXPECT_EQ(f.message(f.b->launchGraph(GraphHandle{9})),
            "cuda backend: graph 9 is not from this backend");
  EXPECT_EQ(f.launchCount(), before + 2);
}

TEST(CudaFakeGraph, ACaptureRefusesCopiesWaitsAllocationsAndLoads) {
  // Each of these would invalidate the capture in the driver (the fake's
  // too): the backend refuses them first, so the capture stays valid.
  GraphFixture f;
  CodeBundle late;
  late.Hsaco.assign(kPtx, kPtx + std::strlen(kPtx));
  late.Name = "late";
  GraphHandle g;
  ASSERT_NO_FATAL_FAILURE(expectCaptureRefusesWhatAGraphCannotHold(
      *f.b, f.p, late, "cuda", "loading PTX 'late'",
      [&] {
        KernargPacker args;
        args.add(uint64_t(f.p)).add(uint64_t(2)).add(uint64_t(3)).add(int32_t(5));
        return f.b->launch(f.k, {1, 1, 1}, {256, 1, 1}, 0, args.bytes());
      },
      g));
  const size_t before = f.launchCount();
  ASSERT_FALSE(bool(f.b->launchGraph(g)));
  ASSERT_EQ(f.launchCount(), before + 1);
  EXPECT_EQ(f.launchedTokens(before), 5);
  // After the capture, the same calls work again.
  uint8_t host[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(f.message(f.b->copyToDevice(f.p, host, 8)), "success");
  EXPECT_EQ(f.byteAt(7), 8);
}

TEST(CudaFakeGraph, AFailedRecordingEndsTheCaptureAndKeepsNoGraph) {
  GraphFixture f;
  auto g = f.b->captureGraph([&]() -> llvm::Error {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "the layer refused");
  });
  ASSERT_FALSE(bool(g));
  EXPECT_EQ(llvm::toString(g.takeError()), "the layer refused");
  EXPECT_FALSE(f.b->capturing());
  EXPECT_EQ(f.liveGraphs(), 0);
  // The stream is no longer capturing: a launch runs at once.
  const size_t before = f.launchCount();
  KernargPacker args;
  args.add(uint64_t(f.p)).add(uint64_t(2)).add(uint64_t(3)).add(int32_t(1));
  ASSERT_FALSE(bool(f.b->launch(f.k, {1, 1, 1}, {256, 1, 1}, 0, args.bytes())));
  EXPECT_EQ(f.launchCount(), before + 1);
}

TEST(CudaFakeGraph, DriverErrorsOfEachGraphCallAreReported) {
  GraphFixture f;
  auto record = [&]() -> llvm::Error {
    KernargPacker args;
    args.add(uint64_t(f.p)).add(uint64_t(2)).add(uint64_t(3)).add(int32_t(1));
    return f.b->launch(f.k, {1, 1, 1}, {256, 1, 1}, 0, args.bytes());
  };
  auto captureError = [&](const char *fail) {
    ::setenv("FAKE_CUDA_FAIL", fail, 1);
    auto g = f.b->captureGraph(record);
    ::unsetenv("FAKE_CUDA_FAIL");
    return g ? std::string("a graph") : llvm::toString(g.takeError());
  };
  bool called = false;
  ::setenv("FAKE_CUDA_FAIL", "cuStreamBeginCapture_v2=999", 1);
  auto notBegun = f.b->captureGraph([&] {
    called = true;
    return llvm::Error::success();
  });
  ::unsetenv("FAKE_CUDA_FAIL");
  ASSERT_FALSE(bool(notBegun));
  EXPECT_EQ(llvm::toString(notBegun.takeError()),
            "cuda backend: cuStreamBeginCapture failed: CUDA_ERROR_UNKNOWN (unknown error)");
  EXPECT_FALSE(called);
  EXPECT_EQ(captureError("cuStreamEndCapture=901"),
            "cuda backend: cuStreamEndCapture (the recorded work had a call that a graph cannot "
            "hold) failed: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED (operation failed due to a "
            "previous error during capture)");
  EXPECT_EQ(captureError("cuGraphInstantiateWithFlags=999"),
            "cuda backend: cuGraphInstantiateWithFlags failed: CUDA_ERROR_UNKNOWN (unknown error)");
  EXPECT_EQ(f.liveGraphs(), 0); // nothing left behind by the failures
  auto g = f.b->captureGraph(record);
  ASSERT_TRUE(bool(g)) << llvm::toString(g.takeError());
  ::setenv("FAKE_CUDA_FAIL", "cuGraphLaunch=2", 1);
  EXPECT_EQ(
      f.message(f.b->launchGraph(*g)),
      "cuda backend: cuGraphLaunch(graph 0) failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  ::unsetenv("FAKE_CUDA_FAIL");
  EXPECT_EQ(f.message(f.b->launchGraph(*g)), "success");
}

} // namespace
