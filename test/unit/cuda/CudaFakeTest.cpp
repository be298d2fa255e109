//===- CudaFakeTest.cpp - The cuda backend over a stand-in libcuda --------===//
//
// The backend's own logic without a GPU: device selection by compute
// capability, PTX loading with the driver's log in errors, symbol lookup,
// memory, and launches with the packed parameter buffer. A program of its
// own: the driver library, once loaded, stays for the process.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaBackend.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

using namespace moegen::runtime;

namespace {

const char *kPtx = R"(.version 8.0
.target sm_90a
.address_size 64
.visible .entry moe_quant_mxfp4_c256(
  .param .u64 p0, .param .u64 p1, .param .u64 p2, .param .u32 p3)
{ ret; }
)";

struct FakeDriver {
  FakeDriver() { ::setenv("MOEGEN_CUDA_LIB", MOEGEN_FAKE_CUDA, 1); }
  ~FakeDriver() {
    ::unsetenv("MOEGEN_CUDA_LIB");
    ::unsetenv("FAKE_CUDA_CC");
  }
  template <class F> F fn(const char *name) {
    void *h = dlopen(MOEGEN_FAKE_CUDA, RTLD_NOW | RTLD_NOLOAD);
    return h ? reinterpret_cast<F>(dlsym(h, name)) : nullptr;
  }
};

TEST(CudaFake, LoadsLaunchesAndCopiesThroughTheDriverApi) {
  FakeDriver fake;
  auto b = createCudaBackend();
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  EXPECT_EQ((*b)->name(), "cuda");
  CodeBundle code;
  code.Hsaco.assign(kPtx, kPtx + std::strlen(kPtx)); // without the NUL: the backend adds it
  code.Name = "quant";
  auto m = (*b)->loadCode(code);
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

TEST(CudaFake, PtxTheDriverRejectsCarriesItsLog) {
  FakeDriver fake;
  auto b = createCudaBackend();
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  std::string ptx = ".version 8.0\n.target sm_80\n";
  CodeBundle code;
  code.Hsaco.assign(ptx.begin(), ptx.end());
  code.Name = "old";
  auto m = (*b)->loadCode(code);
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
  auto start = (*b)->createEvent(), end = (*b)->createEvent();
  ASSERT_TRUE(start && end);
  ASSERT_FALSE(bool((*b)->recordEvent(*start)));
  auto unrecorded = (*b)->elapsedMs(*start, *end);
  ASSERT_FALSE(bool(unrecorded));
  EXPECT_NE(llvm::toString(unrecorded.takeError()).find("cuEventElapsedTime failed"),
            std::string::npos);
  auto foreign = (*b)->elapsedMs(*start, EventHandle{7});
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

} // namespace
