//===- CheckerTest.cpp - One deliberately broken kernel per checker class --===//
#include "EmuTestUtil.h"

using namespace moegen::emu;
using namespace moegen::emu::test;

namespace {
llvm::Error run(Emulator &E, const char *Kernel, unsigned Threads, uint64_t Out) {
  return launch(E, Kernel, {2, 1, 1}, {Threads, 1, 1}, Args().add(Out));
}
} // namespace

TEST(EmulatorChecks, MissingBarrierIsARace) {
  auto E = loadKernels("broken.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<int32_t> Out(*E, 256, 0);
  expectErrorContains(run(*E, "missing_barrier", 128, Out.Addr),
                      {"kernel 'missing_barrier'", "LDS race", "workgroup (0, 0, 0)", "wave 1",
                       "lane 0", "address", "load i32, ptr addrspace(3)"});
}

TEST(EmulatorChecks, OutOfBoundsGlobalStore) {
  auto E = loadKernels("broken.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<int32_t> Out(*E, 64, 0);
  expectErrorContains(run(*E, "oob_store", 64, Out.Addr), {"out-of-bounds global write of 4 bytes",
                                                           "wave 0", "lane 63", "store i32 %tid"});
}

TEST(EmulatorChecks, UninitializedLdsRead) {
  auto E = loadKernels("broken.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<int32_t> Out(*E, 64, 0);
  expectErrorContains(run(*E, "uninit_lds", 64, Out.Addr),
                      {"never-written LDS", "lane 63", "address 0x0000000000000100"});
}

TEST(EmulatorChecks, DivergentBarrierInsideAWave) {
  auto E = loadKernels("broken.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<int32_t> Out(*E, 64, 0);
  expectErrorContains(run(*E, "divergent_barrier", 64, Out.Addr),
                      {"divergent barrier", "s.barrier"});
}

TEST(EmulatorChecks, BarrierNotReachedByAllWaves) {
  auto E = loadKernels("broken.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<int32_t> Out(*E, 64, 0);
  expectErrorContains(run(*E, "barrier_deadlock", 128, Out.Addr),
                      {"barrier deadlock", "wave 1 exited", "wave 0"});
}

TEST(EmulatorChecks, BarrierWithoutReleaseFence) {
  auto E = loadKernels("broken.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<int32_t> Out(*E, 256, 0);
  expectErrorContains(run(*E, "barrier_no_fence", 128, Out.Addr),
                      {"without a workgroup release fence"});
}

TEST(EmulatorChecks, BarrierWithoutAcquireFence) {
  auto E = loadKernels("broken.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<int32_t> Out(*E, 256, 0);
  expectErrorContains(run(*E, "barrier_no_acquire", 128, Out.Addr),
                      {"without a workgroup acquire fence"});
}

TEST(EmulatorChecks, FenceCheckCanBeDisabled) {
  Options O;
  O.CheckBarrierFences = false;
  auto E = loadKernels("broken.ll", O);
  ASSERT_TRUE(E);
  DeviceBuffer<int32_t> Out(*E, 256, 0);
  EXPECT_FALSE(bool(run(*E, "barrier_no_fence", 128, Out.Addr)));
  EXPECT_EQ(Out.Host[0], 64);
  EXPECT_EQ(Out.Host[64], 0);
}

TEST(EmulatorChecks, OutOfBoundsLds) {
  auto E = loadKernels("broken.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<int32_t> Out(*E, 64, 0);
  expectErrorContains(run(*E, "oob_lds", 64, Out.Addr),
                      {"out-of-bounds LDS write", "lane 56", "LDS size 1024"});
}

TEST(EmulatorChecks, OutOfRangeBufferAtomicIsRefused) {
  auto E = loadKernels("broken.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<int32_t> Out(*E, 64, 0);
  // num_records = 128 bytes: lane 32 is the first out of range.
  expectErrorContains(run(*E, "oob_buffer_atomic", 64, Out.Addr),
                      {"out-of-range buffer atomic", "lane 32", "refused"});
  EXPECT_EQ(Out.Host[0], 1); // lanes before the refusal ran
}
