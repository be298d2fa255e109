//===- CheckerTest.cpp - One deliberately broken kernel per checker class --===//
#include "EmuTestUtil.h"

using namespace moegen::emu;
using namespace moegen::emu::test;

namespace {
llvm::Error run(Emulator &E, const char *Kernel, unsigned Threads, uint64_t Out) {
  return launch(E, Kernel, {2, 1, 1}, {Threads, 1, 1}, Args().add(Out));
}

/// Runs broken.ll's `Kernel` on `Threads` threads with `OutInts` int32s of
/// output: the run fails with every one of `Frags` in its error.
void expectBrokenKernelFails(const char *Kernel, unsigned Threads, size_t OutInts,
                             std::initializer_list<const char *> Frags) {
  auto E = loadKernels("broken.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<int32_t> Out(*E, OutInts, 0);
  expectErrorContains(run(*E, Kernel, Threads, Out.Addr), Frags);
}
} // namespace

TEST(EmulatorChecks, MissingBarrierIsARace) {
  expectBrokenKernelFails("missing_barrier", 128, 256,
                          {"kernel 'missing_barrier'", "LDS race", "workgroup (0, 0, 0)", "wave 1",
                           "lane 0", "address", "load i32, ptr addrspace(3)"});
}

TEST(EmulatorChecks, OutOfBoundsGlobalStore) {
  expectBrokenKernelFails(
      "oob_store", 64, 64,
      {"out-of-bounds global write of 4 bytes", "wave 0", "lane 63", "store i32 %tid"});
}

TEST(EmulatorChecks, UninitializedLdsRead) {
  expectBrokenKernelFails("uninit_lds", 64, 64,
                          {"never-written LDS", "lane 63", "address 0x0000000000000100"});
}

TEST(EmulatorChecks, DivergentBarrierInsideAWave) {
  expectBrokenKernelFails("divergent_barrier", 64, 64, {"divergent barrier", "s.barrier"});
}

TEST(EmulatorChecks, BarrierNotReachedByAllWaves) {
  expectBrokenKernelFails("barrier_deadlock", 128, 64,
                          {"barrier deadlock", "wave 1 exited", "wave 0"});
}

TEST(EmulatorChecks, BarrierWithoutReleaseFence) {
  expectBrokenKernelFails("barrier_no_fence", 128, 256, {"without a workgroup release fence"});
}

TEST(EmulatorChecks, BarrierWithoutAcquireFence) {
  expectBrokenKernelFails("barrier_no_acquire", 128, 256, {"without a workgroup acquire fence"});
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
  expectBrokenKernelFails("oob_lds", 64, 64,
                          {"out-of-bounds LDS write", "lane 56", "LDS size 1024"});
}

TEST(EmulatorChecks, MisalignedLdsVectorStore) {
  expectBrokenKernelFails("misaligned_lds_vector", 64, 64,
                          {"misaligned 16-byte access", "promises 16-byte alignment", "lane 3",
                           "address 0x0000000000000034", "store <4 x i32>"});
}

TEST(EmulatorChecks, MisalignedGlobalLoad) {
  expectBrokenKernelFails(
      "misaligned_global_load", 64, 64,
      {"misaligned 8-byte access", "promises 8-byte alignment", "lane 0", "load i64"});
}

TEST(EmulatorChecks, MisalignedGlobalAtomic) {
  expectBrokenKernelFails(
      "misaligned_global_atomic", 64, 64,
      {"misaligned 4-byte access", "promises 4-byte alignment", "atomicrmw add"});
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
