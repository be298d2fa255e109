//===- LdsOpsTest.cpp - ds_read_tr and global->LDS loads ---------------------===//
//
// ds_read_b64_tr_b{16,8,4} (docs/gfx950-facts.md §6.2): within each 16-lane group,
// F = the concatenated 64-bit reads (E = 64/bits elements each); lane d gets
// element r = F[16r + d]. global_load_lds (§6.3): lane l's data lands at
// M0 + imm_offset + l*size.
//
//===----------------------------------------------------------------------===//
#include "EmuTestUtil.h"

#include <random>

using namespace moegen::emu;
using namespace moegen::emu::test;

namespace {
uint64_t expectTr(const std::vector<uint64_t> &In, unsigned Lane, unsigned Bits) {
  unsigned E = 64 / Bits, G = Lane / 16, D = Lane % 16;
  uint64_t Mask = (1ull << Bits) - 1, Out = 0;
  for (unsigned R = 0; R < E; ++R) {
    unsigned Flat = 16 * R + D;
    uint64_t V = (In[16 * G + Flat / E] >> (Bits * (Flat % E))) & Mask;
    Out |= V << (Bits * R);
  }
  return Out;
}
} // namespace

TEST(EmulatorLds, TransposeReadsB16B8B4) {
  Options O;
  O.AllowUncertainLayouts = true;
  auto E = loadKernels("lds_ops.ll", O);
  ASSERT_TRUE(E);
  std::mt19937_64 Rng(31);
  std::vector<uint64_t> In(64);
  for (auto &V : In)
    V = Rng();
  DeviceBuffer<uint64_t> DIn(*E, In), DOut(*E, 3 * 64, 0);
  ASSERT_FALSE(
      bool(launch(*E, "tr_reads", {1, 1, 1}, {64, 1, 1}, Args().add(DIn.Addr).add(DOut.Addr))));
  for (unsigned L = 0; L < 64; ++L) {
    EXPECT_EQ(DOut.Host[3 * L], expectTr(In, L, 16)) << L;
    EXPECT_EQ(DOut.Host[3 * L + 1], expectTr(In, L, 8)) << L;
    EXPECT_EQ(DOut.Host[3 * L + 2], expectTr(In, L, 4)) << L;
  }
  // tr_b16, lane 0 of each group gets element 0 of lanes 0, 4, 8, 12 (§6.2).
  EXPECT_EQ(DOut.Host[0] & 0xFFFF, In[0] & 0xFFFF);
  EXPECT_EQ((DOut.Host[0] >> 16) & 0xFFFF, In[4] & 0xFFFF);
  EXPECT_EQ((DOut.Host[0] >> 48) & 0xFFFF, In[12] & 0xFFFF);
}

TEST(EmulatorLds, UncertainTr4LayoutIsRefusedByDefault) {
  auto E = loadKernels("lds_ops.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<uint64_t> DIn(*E, 64, 1), DOut(*E, 3 * 64, 0);
  expectErrorContains(
      launch(*E, "tr_reads", {1, 1, 1}, {64, 1, 1}, Args().add(DIn.Addr).add(DOut.Addr)),
      {"ds_read_b64_tr_b4", "[U]"});
  EXPECT_FALSE(
      bool(launch(*E, "tr16_only", {1, 1, 1}, {64, 1, 1}, Args().add(DIn.Addr).add(DOut.Addr))));
}

TEST(EmulatorLds, TransposeReadWithAnInactiveGroupIsRefused) {
  auto E = loadKernels("lds_ops.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<uint64_t> DIn(*E, 64, 1), DOut(*E, 64, 0);
  expectErrorContains(
      launch(*E, "tr16_partial", {1, 1, 1}, {64, 1, 1}, Args().add(DIn.Addr).add(DOut.Addr)),
      {"ds_read_tr with inactive lanes", "lane 48", "[U]"});
}

TEST(EmulatorLds, TwelveByteLdsLoadLeavesTheFourthDword) {
  auto E = loadKernels("lds_ops.ll");
  ASSERT_TRUE(E);
  std::vector<uint32_t> Src(3 * 64);
  for (unsigned I = 0; I < Src.size(); ++I)
    Src[I] = I + 1;
  DeviceBuffer<uint32_t> DS(*E, Src), DO(*E, 4 * 64, 0);
  ASSERT_FALSE(bool(
      launch(*E, "global_to_lds_x3", {1, 1, 1}, {64, 1, 1}, Args().add(DS.Addr).add(DO.Addr))));
  for (unsigned L = 0; L < 64; ++L) {
    for (unsigned D = 0; D < 3; ++D)
      EXPECT_EQ(DO.Host[4 * L + D], Src[3 * L + D]) << L;
    EXPECT_EQ(DO.Host[4 * L + 3], 0xDEADBEEFu) << L;
  }
}

TEST(EmulatorLds, GlobalLoadLdsWritesInLaneOrder) {
  auto E = loadKernels("lds_ops.ll");
  ASSERT_TRUE(E);
  std::vector<uint32_t> Src(4 * 65);
  for (unsigned I = 0; I < Src.size(); ++I)
    Src[I] = I * 7 + 1;
  DeviceBuffer<uint32_t> DS(*E, Src), DO(*E, 4 * 64, 0);
  ASSERT_FALSE(
      bool(launch(*E, "global_to_lds", {1, 1, 1}, {64, 1, 1}, Args().add(DS.Addr).add(DO.Addr))));
  // Slot l holds the 16 bytes lane l read: src + 16*(63-l) + 16 (imm offset
  // applies to the global address too), i.e. dwords 4*(64-l) ...
  for (unsigned L = 0; L < 64; ++L)
    for (unsigned D = 0; D < 4; ++D)
      EXPECT_EQ(DO.Host[4 * L + D], Src[4 * (64 - L) + D]) << L;
}

TEST(EmulatorLds, GlobalLoadLdsOutOfBoundsSourceIsReported) {
  auto E = loadKernels("lds_ops.ll");
  ASSERT_TRUE(E);
  // Lane 0 reads src + 16*63 + 16 = one past a 1 KiB buffer.
  DeviceBuffer<uint32_t> DS(*E, 4 * 64, 0), DO(*E, 4 * 64, 0);
  expectErrorContains(
      launch(*E, "global_to_lds", {1, 1, 1}, {64, 1, 1}, Args().add(DS.Addr).add(DO.Addr)),
      {"out-of-bounds global read of 16 bytes", "lane 0", "llvm.amdgcn.global.load.lds"});
}

TEST(EmulatorLds, BufferLoadLdsOutOfRangeLanesWriteZeros) {
  auto E = loadKernels("lds_ops.ll");
  ASSERT_TRUE(E);
  std::vector<uint32_t> Src(64);
  for (unsigned I = 0; I < 64; ++I)
    Src[I] = 1000 + I;
  DeviceBuffer<uint32_t> DS(*E, Src), DO(*E, 64, 7);
  // num_records = 100 bytes: dwords 0..24 in range.
  ASSERT_FALSE(bool(launch(*E, "buffer_to_lds", {1, 1, 1}, {64, 1, 1},
                           Args().add(DS.Addr).add(DO.Addr).add(int32_t(100)))));
  for (unsigned L = 0; L < 64; ++L)
    EXPECT_EQ(DO.Host[L], L < 25 ? 1000 + L : 0u) << L;
}
