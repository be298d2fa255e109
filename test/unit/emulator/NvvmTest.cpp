//===- NvvmTest.cpp - The emulator on NVPTX (sm_90a) kernels ---------------===//
//
// kernels/nvvm.ll, hand-written: warp-local shuffles and votes, prmt,
// mma.sync fragments, wgmma with A in registers or shared memory, cp.async
// groups, named and reduction barriers and arrivals, inline PTX, and the
// checks that refuse what the hardware would not do.
//
//===----------------------------------------------------------------------===//
#include "EmuTestUtil.h"

#include "emulator/Formats.h"

#include <bit>
#include <cmath>
#include <random>

using namespace moegen::emu;
using namespace moegen::emu::test;

namespace {

uint32_t bf16Bits(float F) { return std::bit_cast<uint32_t>(F) >> 16; } // exact for small ints
uint32_t packBf16(float Lo, float Hi) { return bf16Bits(Lo) | bf16Bits(Hi) << 16; }

/// The 4 A-fragment registers of lane t of a quad whose rows are Lo (g) and
/// Hi (g + 8), as mma.sync m16n8k16 (and each warp of wgmma) takes them.
void packAFragment(const float *Lo, const float *Hi, unsigned T, uint32_t *F) {
  F[0] = packBf16(Lo[2 * T], Lo[2 * T + 1]);
  F[1] = packBf16(Hi[2 * T], Hi[2 * T + 1]);
  F[2] = packBf16(Lo[2 * T + 8], Lo[2 * T + 9]);
  F[3] = packBf16(Hi[2 * T + 8], Hi[2 * T + 9]);
}

/// Small integers in [-8, 8], divided by Div: exact in bf16 and in f32 sums.
template <size_t R, size_t C> void fillSmall(std::mt19937 &Rng, float (&M)[R][C], float Div = 1) {
  std::uniform_int_distribution<int> Small(-8, 8);
  for (auto &Row : M)
    for (float &V : Row)
      V = float(Small(Rng)) / Div;
}

TEST(EmulatorNvvm, WarpsAreThirtyTwoLanes) {
  auto E = loadKernels("nvvm.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<uint32_t> Out(*E, 64 * 8, 0);
  ASSERT_FALSE(bool(launch(*E, "warps", {1, 1, 1}, {64, 1, 1}, Args().add(Out.Addr))));
  for (uint32_t T = 0; T < 64; ++T) {
    const uint32_t *R = &Out.Host[T * 8];
    uint32_t Lane = T % 32, Warp0 = T - Lane;
    EXPECT_EQ(R[0], Lane) << T;
    EXPECT_EQ(R[1], 100 * (Warp0 + 31 - Lane)) << T;     // idx
    EXPECT_EQ(R[2], 100 * (Lane >= 3 ? T - 3 : T)) << T; // up 3
    EXPECT_EQ(R[3], Lane >= 3 ? 1u : 0u) << T;           // its predicate
    EXPECT_EQ(R[4], 100 * (Warp0 + (Lane ^ 5))) << T;    // bfly 5
    uint32_t SegEnd = (Lane & 24) | 7;                   // down 4 in 8-lane segments
    EXPECT_EQ(R[5], 100 * (Lane + 4 <= SegEnd ? T + 4 : T)) << T;
    EXPECT_EQ(R[6], 0x11111111u) << T; // ballot of lane % 4 == 0, per warp
    EXPECT_EQ(R[7], 64u) << T;         // ntid.x
  }
}

TEST(EmulatorNvvm, Prmt) {
  // (a, b, selector, expected): bytes 0-3 of a and 4-7 of b; bit 3 of a
  // selector nibble replicates the chosen byte's sign; bits above 15 ignored.
  const uint32_t Cases[][4] = {
      {0x33221100, 0x77665544, 0x7531, 0x77553311},
      {0x33221100, 0x77665544, 0x0123, 0x00112233},
      {0x00800001, 0, 0x000A, 0x010101FF},
      {0x7F80FF01, 0, 0xBA98, 0x00FFFF00},
      {0x33221100, 0x77665544, 0xFFFF7531, 0x77553311},
  };
  auto E = loadKernels("nvvm.ll");
  ASSERT_TRUE(E);
  std::vector<uint32_t> In;
  for (const auto &C : Cases)
    In.insert(In.end(), {C[0], C[1], C[2]});
  DeviceBuffer<uint32_t> InB(*E, In);
  DeviceBuffer<uint32_t> Out(*E, 32, 0);
  const uint32_t N = std::size(Cases);
  ASSERT_FALSE(bool(launch(*E, "prmt", {1, 1, 1}, {N, 1, 1}, Args().add(InB.Addr).add(Out.Addr))));
  for (uint32_t I = 0; I < N; ++I)
    EXPECT_EQ(Out.Host[I], Cases[I][3]) << "case " << I;
}

// The fragments as the PTX ISA lays them out for m16n8k16 with bf16 A/B and
// f32 C/D (g = lane / 4, t = lane % 4), built here from whole matrices.
TEST(EmulatorNvvm, MmaM16n8k16Bf16Fragments) {
  std::mt19937 Rng(7);
  float A[16][16], B[16][8], C[16][8];
  fillSmall(Rng, A);
  fillSmall(Rng, B);
  fillSmall(Rng, C, 4);
  std::vector<uint32_t> Frag(32 * 10);
  for (unsigned L = 0; L < 32; ++L) {
    unsigned G = L / 4, T = L % 4;
    uint32_t *F = &Frag[L * 10];
    packAFragment(A[G], A[G + 8], T, F);
    F[4] = packBf16(B[2 * T][G], B[2 * T + 1][G]);
    F[5] = packBf16(B[2 * T + 8][G], B[2 * T + 9][G]);
    F[6] = std::bit_cast<uint32_t>(C[G][2 * T]);
    F[7] = std::bit_cast<uint32_t>(C[G][2 * T + 1]);
    F[8] = std::bit_cast<uint32_t>(C[G + 8][2 * T]);
    F[9] = std::bit_cast<uint32_t>(C[G + 8][2 * T + 1]);
  }
  auto E = loadKernels("nvvm.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<uint32_t> FragB(*E, Frag);
  DeviceBuffer<float> D(*E, 32 * 4, 0.f);
  ASSERT_FALSE(bool(launch(*E, "mma", {1, 1, 1}, {32, 1, 1}, Args().add(FragB.Addr).add(D.Addr))));
  for (unsigned L = 0; L < 32; ++L) {
    unsigned G = L / 4, T = L % 4;
    for (unsigned El = 0; El < 4; ++El) {
      unsigned Row = G + 8 * (El >> 1), Col = 2 * T + (El & 1);
      float Want = C[Row][Col];
      for (unsigned K = 0; K < 16; ++K)
        Want += A[Row][K] * B[K][Col];
      EXPECT_EQ(D.Host[L * 4 + El], Want) << "lane " << L << " element " << El;
    }
  }
  // mma.sync is warp-wide: a partial warp is refused.
  expectErrorContains(launch(*E, "mma", {1, 1, 1}, {16, 1, 1}, Args().add(FragB.Addr).add(D.Addr)),
                      {"mma.sync executed by a partially active warp"});
}

TEST(EmulatorNvvm, WgmmaM64nNk16Bf16FromRegistersAndDescriptor) {
  // D (64 x 16) = C + A (64 x 16) x B (16 x 16), B in four core matrices at
  // shared byte 512: K-adjacent ones 256 bytes apart, N-adjacent 128.
  std::mt19937 Rng(11);
  float A[64][16], B[16][16], C[64][16];
  fillSmall(Rng, A);
  fillSmall(Rng, B);
  fillSmall(Rng, C, 4);
  std::vector<uint16_t> Bytes(256, 0);
  for (unsigned K = 0; K < 16; ++K)
    for (unsigned N = 0; N < 16; ++N)
      Bytes[((N / 8) * 128 + (K / 8) * 256 + (N % 8) * 16 + (K % 8) * 2) / 2] =
          uint16_t(bf16Bits(B[K][N]));
  std::vector<uint32_t> BWords(128);
  std::memcpy(BWords.data(), Bytes.data(), 512);
  std::vector<uint32_t> Frag(128 * 12);
  for (unsigned Th = 0; Th < 128; ++Th) {
    unsigned W = Th / 32, G = Th % 32 / 4, T = Th % 4, R0 = 16 * W + G;
    uint32_t *F = &Frag[Th * 12];
    packAFragment(A[R0], A[R0 + 8], T, F);
    for (unsigned El = 0; El < 8; ++El)
      F[4 + El] =
          std::bit_cast<uint32_t>(C[R0 + 8 * (El >> 1 & 1)][8 * (El >> 2) + 2 * T + El % 2]);
  }
  auto E = loadKernels("nvvm.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<uint32_t> FragB(*E, Frag), BB(*E, BWords);
  DeviceBuffer<float> D(*E, 128 * 8, 0.f);
  auto run = [&](uint32_t Scaled, uint32_t Mode, unsigned Threads = 128) {
    return launch(*E, "wgmma", {1, 1, 1}, {Threads, 1, 1},
                  Args().add(FragB.Addr).add(BB.Addr).add(D.Addr).add(Scaled).add(Mode));
  };
  for (uint32_t Scaled : {1u, 0u}) {
    if (llvm::Error Err = run(Scaled, 0))
      FAIL() << llvm::toString(std::move(Err));
    for (unsigned Th = 0; Th < 128; ++Th) {
      unsigned W = Th / 32, G = Th % 32 / 4, T = Th % 4;
      for (unsigned El = 0; El < 8; ++El) {
        unsigned Row = 16 * W + G + 8 * (El >> 1 & 1), Col = 8 * (El >> 2) + 2 * T + El % 2;
        float Want = Scaled ? C[Row][Col] : 0.f;
        for (unsigned K = 0; K < 16; ++K)
          Want += A[Row][K] * B[K][Col];
        EXPECT_EQ(D.Host[Th * 8 + El], Want)
            << "scale-d " << Scaled << " thread " << Th << " element " << El;
      }
    }
  }
  // B is read and D written until the group's wait: writing B or reading D
  // earlier, or never waiting, is refused; so is a CTA that is not whole
  // warpgroups.
  expectErrorContains(run(1, 1), {"shared memory written while a wgmma of this warp may still "
                                  "read it (before its wgmma.wait_group)"});
  expectErrorContains(run(1, 2), {"reads a wgmma accumulator while a wgmma of the warp is in "
                                  "flight (before its wgmma.wait_group)"});
  expectErrorContains(run(1, 5), {"warp exited with a wgmma not waited for"});
  expectErrorContains(run(1, 0, 96), {"wgmma in a CTA of 96 threads"});
  // wgmma reads B through the async proxy: the generic proxy's stores must
  // be fenced by their writer, and the fence ordered before the wgmma by a
  // barrier.
  expectErrorContains(run(1, 3), {"wgmma reads shared memory that warp 0 lane 0 wrote through the "
                                  "generic proxy (a store or cp.async) with no fence.proxy.async "
                                  "after the write"});
  expectErrorContains(run(1, 4), {"wgmma reads shared memory that warp 0 lane 0 fenced to the "
                                  "async proxy with no barrier between its fence.proxy.async and "
                                  "the wgmma"});
}

TEST(EmulatorNvvm, WgmmaM64nNk16Bf16BothOperandsInSharedMemory) {
  // D (64 x 16) = A (64 x 16) x B (16 x 16), A in shared memory too: its
  // 8-row groups 256 bytes apart, the two K-adjacent core matrices of a group
  // 128 apart; B as above, at shared byte 2048.
  std::mt19937 Rng(12);
  float A[64][16], B[16][16];
  fillSmall(Rng, A);
  fillSmall(Rng, B);
  std::vector<uint16_t> ABytes(1024, 0), BBytes(256, 0);
  for (unsigned M = 0; M < 64; ++M)
    for (unsigned K = 0; K < 16; ++K)
      ABytes[((M / 8) * 256 + (K / 8) * 128 + (M % 8) * 16 + (K % 8) * 2) / 2] =
          uint16_t(bf16Bits(A[M][K]));
  for (unsigned K = 0; K < 16; ++K)
    for (unsigned N = 0; N < 16; ++N)
      BBytes[((N / 8) * 128 + (K / 8) * 256 + (N % 8) * 16 + (K % 8) * 2) / 2] =
          uint16_t(bf16Bits(B[K][N]));
  std::vector<uint32_t> AWords(512), BWords(128);
  std::memcpy(AWords.data(), ABytes.data(), 2048);
  std::memcpy(BWords.data(), BBytes.data(), 512);
  auto E = loadKernels("nvvm.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<uint32_t> AB(*E, AWords), BB(*E, BWords);
  DeviceBuffer<float> D(*E, 128 * 8, 0.f);
  auto run = [&](uint32_t Mode) {
    return launch(*E, "wgmma_shared_a", {1, 1, 1}, {128, 1, 1},
                  Args().add(AB.Addr).add(BB.Addr).add(D.Addr).add(Mode));
  };
  for (uint32_t Mode : {0u, 1u}) {
    if (llvm::Error Err = run(Mode))
      FAIL() << llvm::toString(std::move(Err));
    for (unsigned Th = 0; Th < 128; ++Th) {
      unsigned W = Th / 32, G = Th % 32 / 4, T = Th % 4;
      for (unsigned El = 0; El < 8; ++El) {
        unsigned Row = 16 * W + G + 8 * (El >> 1 & 1), Col = 8 * (El >> 2) + 2 * T + El % 2;
        float Want = 0.f;
        for (unsigned K = 0; K < 16; ++K)
          Want += A[Row][K] * B[K][Col];
        // Mode 1 leaves A's rows 56-63 unwritten: their row of D is NaN.
        if (Mode == 1 && Row >= 56)
          EXPECT_TRUE(std::isnan(D.Host[Th * 8 + El])) << "thread " << Th << " element " << El;
        else
          EXPECT_EQ(D.Host[Th * 8 + El], Want)
              << "mode " << Mode << " thread " << Th << " element " << El;
      }
    }
  }
}

TEST(EmulatorNvvm, WarpSpecializedStagesByBarrierArrivals) {
  // A producer warp fills two stages in turn and arrives at each one's full
  // barrier; two consumer warps wait there, read, and arrive at its empty
  // barrier, which the producer waits at before the stage's next fill.
  auto E = loadKernels("nvvm.ll");
  ASSERT_TRUE(E);
  auto run = [&](DeviceBuffer<uint32_t> &Out, uint32_t Steps, uint32_t ProducerCount,
                 uint32_t Mode) {
    return launch(*E, "producer_consumer", {2, 1, 1}, {96, 1, 1},
                  Args().add(Out.Addr).add(Steps).add(ProducerCount).add(Mode));
  };
  for (uint32_t Steps : {1u, 2u, 7u}) {
    DeviceBuffer<uint32_t> Out(*E, 96, 0);
    if (llvm::Error Err = run(Out, Steps, 96, 0))
      FAIL() << llvm::toString(std::move(Err));
    for (uint32_t T = 0; T < 64; ++T)
      EXPECT_EQ(Out.Host[T], 100 * Steps * (Steps - 1) / 2 + Steps * (T % 32))
          << "steps " << Steps << " thread " << T;
  }
  DeviceBuffer<uint32_t> Out(*E, 96, 0);
  // The producer names another thread count than the consumers wait for.
  expectErrorContains(run(Out, 3, 64, 0), {"warps wait at barrier 1 with thread count 96 where "
                                           "others arrived with 64"});
  // A producer that never waits for the empty barrier arrives at a full one
  // again before the consumers took the first phase.
  expectErrorContains(run(Out, 4, 96, 1),
                      {"128 threads wait at barrier 1 or arrived at it (64 without waiting), "
                       "which releases 96"});
  expectErrorContains(run(Out, 3, 40, 0), {"barrier arrive thread count 40 is not a multiple of "
                                           "32 from 32 up to the CTA's 96"});
  // setmaxnreg.inc waits for registers a setmaxnreg.dec released: the first
  // consumer takes 2560 of the producer's 4096, the second waits forever.
  expectErrorContains(run(Out, 3, 96, 2),
                      {"setmaxnreg.inc to 248 registers waits forever: 2560 more for the warp, "
                       "1536 released by setmaxnreg.dec and not yet taken"});
}

TEST(EmulatorNvvm, CpAsyncLandsAtItsGroupsWait) {
  auto E = loadKernels("nvvm.ll");
  ASSERT_TRUE(E);
  std::vector<uint32_t> Src(64 * 4);
  for (uint32_t I = 0; I < Src.size(); ++I)
    Src[I] = 0x1000 + I;
  DeviceBuffer<uint32_t> SrcB(*E, Src);
  for (uint32_t Keep : {0u, 1u}) {
    DeviceBuffer<uint32_t> Out(*E, 64 * 4, 0xDEAD);
    ASSERT_FALSE(bool(launch(*E, "cpasync", {1, 1, 1}, {64, 1, 1},
                             Args().add(SrcB.Addr).add(Out.Addr).add(Keep))));
    for (uint32_t L = 0; L < 64; ++L) {
      const uint32_t *R = &Out.Host[4 * L];
      EXPECT_EQ(R[0], Src[4 * L]) << L;
      EXPECT_EQ(R[1], Src[4 * L + 1]) << L;
      // The second group: 4 source bytes, then zeros; or not read at all.
      EXPECT_EQ(R[2], Keep ? 0xDEADu : Src[4 * L + 2]) << L;
      EXPECT_EQ(R[3], Keep ? 0xDEADu : 0u) << L;
    }
  }
  // A copy not waited for has not written shared memory.
  DeviceBuffer<uint32_t> Out(*E, 64, 0);
  expectErrorContains(
      launch(*E, "cpasync_early", {1, 1, 1}, {32, 1, 1}, Args().add(SrcB.Addr).add(Out.Addr)),
      {"never-written LDS", "warp 0", "lane 0"});
}

TEST(EmulatorNvvm, NamedAndReductionBarriers) {
  auto E = loadKernels("nvvm.ll");
  ASSERT_TRUE(E);
  for (uint32_t Hot : {37u, 500u}) {
    DeviceBuffer<uint32_t> Out(*E, 128, 0);
    ASSERT_FALSE(bool(launch(*E, "barriers", {2, 1, 1}, {128, 1, 1},
                             Args().add(Out.Addr).add(Hot).add(uint32_t(64)))));
    for (uint32_t T = 0; T < 128; ++T)
      EXPECT_EQ(Out.Host[T], 3 * (T ^ 32) + (Hot < 128 ? 1000 : 0)) << T;
  }
  DeviceBuffer<uint32_t> Out(*E, 128, 0);
  expectErrorContains(launch(*E, "barriers", {1, 1, 1}, {128, 1, 1},
                             Args().add(Out.Addr).add(uint32_t(0)).add(uint32_t(96))),
                      {"barrier deadlock", "barrier 1 never releases"});
  expectErrorContains(launch(*E, "barriers", {1, 1, 1}, {128, 1, 1},
                             Args().add(Out.Addr).add(uint32_t(0)).add(uint32_t(40))),
                      {"barrier thread count 40 is not a multiple of 32"});
}

TEST(EmulatorNvvm, InlineBf16x2Reduction) {
  auto E = loadKernels("nvvm.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<uint32_t> Acc(*E, 1, 0);
  uint32_t Val = bf16Bits(1.0f) | bf16Bits(0.5f) << 16;
  ASSERT_FALSE(
      bool(launch(*E, "red_bf16x2", {3, 1, 1}, {64, 1, 1}, Args().add(Acc.Addr).add(Val))));
  EXPECT_EQ(Acc.Host[0], bf16Bits(192.0f) | bf16Bits(96.0f) << 16);
}

TEST(EmulatorNvvm, InlineSixteenByteBf16x2Reduction) {
  auto E = loadKernels("nvvm.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<uint32_t> Acc(*E, 8, 0);
  // Word w of the 16 bytes at byte 16 gets (2^w, -2^w / 2) from each of 96 lanes (exact sums).
  Args A = Args().add(Acc.Addr).add(uint32_t(16));
  for (int W = 0; W < 4; ++W)
    A.add(packBf16(std::ldexp(1.0f, W), -std::ldexp(0.5f, W)));
  ASSERT_FALSE(bool(launch(*E, "red_v4_bf16x2", {3, 1, 1}, {32, 1, 1}, A)));
  for (int W = 0; W < 8; ++W)
    EXPECT_EQ(Acc.Host[W],
              W < 4 ? 0u : packBf16(std::ldexp(96.0f, W - 4), -std::ldexp(48.0f, W - 4)))
        << "word " << W;
  // 16 bytes at an address that is not 16-byte aligned.
  Args Bad = Args().add(Acc.Addr).add(uint32_t(8));
  for (int W = 0; W < 4; ++W)
    Bad.add(uint32_t(0));
  expectErrorContains(launch(*E, "red_v4_bf16x2", {1, 1, 1}, {32, 1, 1}, Bad),
                      {"not aligned to 16 bytes"});
}

TEST(EmulatorNvvm, MovmatrixTransposesAnEightByEightB16Matrix) {
  auto E = loadKernels("nvvm.ll");
  ASSERT_TRUE(E);
  // Element (r, c) of the matrix is 8r + c + 1; lane l holds row l / 4, columns 2 (l % 4) + {0, 1}.
  auto pair = [](unsigned Row, unsigned Col) {
    return (8 * Row + Col + 1) | (8 * Row + Col + 2) << 16;
  };
  std::vector<uint32_t> Words;
  for (unsigned L = 0; L < 32; ++L)
    Words.push_back(pair(L / 4, 2 * (L % 4)));
  DeviceBuffer<uint32_t> In(*E, Words), Out(*E, 32, 0);
  ASSERT_FALSE(
      bool(launch(*E, "movmatrix", {1, 1, 1}, {32, 1, 1}, Args().add(In.Addr).add(Out.Addr))));
  for (unsigned L = 0; L < 32; ++L) {
    unsigned G = L / 4, C = 2 * (L % 4); // the transpose's (G, C) is the matrix's (C, G)
    EXPECT_EQ(Out.Host[L], (8 * C + G + 1) | (8 * (C + 1) + G + 1) << 16) << "lane " << L;
  }
}

TEST(EmulatorNvvm, RefusesWhatTheHardwareWouldNotDo) {
  auto E = loadKernels("nvvm.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<uint32_t> Out(*E, 32, 0);
  expectErrorContains(launch(*E, "bad_mask", {1, 1, 1}, {32, 1, 1}, Args().add(Out.Addr)),
                      {"outside its membermask", "lane 3"});
  expectErrorContains(launch(*E, "unknown_asm", {1, 1, 1}, {32, 1, 1}, Args()),
                      {"inline asm \"membar.sys;\""});
  expectErrorContains(launch(*E, "setmaxnreg_unbounded", {1, 1, 1}, {128, 1, 1}, Args()),
                      {"setmaxnreg in a kernel without \"nvvm.maxnreg\" (.maxnreg)"});
  // 227 KiB of shared memory at most.
  expectErrorContains(
      E->launch("warps", {{1, 1, 1}, {32, 1, 1}, 240000}, std::vector<uint8_t>(8, 0)),
      {"exceed the 227 KiB"});
}

} // namespace
