//===- PipelineTest.cpp - Kernels as MLIR + LLVM O3 produce them -------------===//
#include "EmuTestUtil.h"

#include <cmath>
#include <cstring>
#include <random>

using namespace moegen::emu;
using namespace moegen::emu::test;

namespace {
float bf16(uint16_t H) {
  uint32_t B = uint32_t(H) << 16;
  float F;
  std::memcpy(&F, &B, 4);
  return F;
}
} // namespace

// bf16 GEMM main loop: fat buffer -> load.to.lds, barriers with fences,
// ds_read_tr16 for B, MFMA 16x16x32 with a loop-carried accumulator.
TEST(EmulatorPipeline, Bf16GemmLoop) {
  auto E = loadKernels("bf16_gemm.ll");
  ASSERT_TRUE(E);
  const int K = 4096, Iters = 4, KUsed = 32 * Iters;
  std::mt19937 Rng(41);
  std::uniform_real_distribution<float> U(-2, 2);
  auto Rnd = [&] {
    float F = U(Rng);
    uint32_t B;
    std::memcpy(&B, &F, 4);
    return uint16_t(B >> 16);
  };
  std::vector<uint16_t> A(16 * K), B(K * 16);
  for (auto &V : A)
    V = Rnd();
  for (auto &V : B)
    V = Rnd();
  DeviceBuffer<uint16_t> DA(*E, A), DB(*E, B);
  DeviceBuffer<float> DC(*E, 256, NAN);
  ASSERT_FALSE(bool(launch(*E, "bf16_gemm", {1, 1, 1}, {64, 1, 1},
                           Args().add(DA.Addr).add(DB.Addr).add(DC.Addr).add(int64_t(Iters)))));
  for (int I = 0; I < 16; ++I)
    for (int J = 0; J < 16; ++J) {
      double Ref = 0, Mag = 0;
      for (int Kk = 0; Kk < KUsed; ++Kk) {
        double P = double(bf16(A[I * K + Kk])) * bf16(B[Kk * 16 + J]);
        Ref += P;
        Mag += std::fabs(P);
      }
      EXPECT_NEAR(DC.Host[I * 16 + J], Ref, Mag * 1e-6) << I << "," << J;
    }
  EXPECT_EQ(E->lastStats().Barriers, 2u * Iters);
  EXPECT_EQ(E->lastStats().WaveOps > 0, true);
}

TEST(EmulatorPipeline, ScalarLoopWithBlockDim) {
  auto E = loadKernels("scalar_loop.ll");
  ASSERT_TRUE(E);
  const int N = 37, Threads = 3 * 96;
  DeviceBuffer<float> Out(*E, 1048576, -1.0f);
  ASSERT_FALSE(
      bool(launch(*E, "scalar_loop", {3, 1, 1}, {96, 1, 1}, Args().add(Out.Addr).add(int64_t(N)))));
  for (int G = 0; G < Threads; ++G) {
    float S = 0;
    for (int I = 0; I < N; ++I)
      S += std::fma(float(I ^ G), 0.5f, 1.0f);
    ASSERT_EQ(Out.Host[G], S) << G;
  }
  EXPECT_EQ(Out.Host[Threads], -1.0f);
}

namespace {
double fp4Value(unsigned C) {
  static const double T[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  return (C & 8) ? -T[C & 7] : T[C & 7];
}
unsigned fp4Nearest(double Y) { // RNE, saturating (docs/gfx950-facts.md §4.1)
  unsigned Best = 0;
  for (unsigned C = 1; C < 8; ++C) {
    double E = std::fabs(std::fabs(Y) - fp4Value(C)), EB = std::fabs(std::fabs(Y) - fp4Value(Best));
    if (E < EB || (E == EB && C % 2 == 0))
      Best = C;
  }
  return Best | (std::signbit(Y) ? 8 : 0);
}
} // namespace

// MXFP4 K loop: pre-shuffled fp4 register images, E8M0 scales through buffer
// loads (opsel bytes 1 and 2), scaled MFMA 16x16x128, then an fp4 pack of D.
TEST(EmulatorPipeline, MxFp4Loop) {
  auto E = loadKernels("mxfp4_loop.ll");
  ASSERT_TRUE(E);
  const unsigned Iters = 3, M = 16, K = 128;
  std::mt19937 Rng(51);
  std::vector<uint8_t> A(65536, 0), B(65536, 0), SA(16384, 0), SB(16384, 0);
  std::vector<uint8_t> CodesA(Iters * M * K), CodesB(Iters * M * K);
  for (auto &C : CodesA)
    C = uint8_t(Rng() & 0xF);
  for (auto &C : CodesB)
    C = uint8_t(Rng() & 0xF);
  for (unsigned It = 0; It < Iters; ++It)
    for (unsigned L = 0; L < 64; ++L) {
      // fp4 layout (docs/gfx950-facts.md §1.3): nibble n of lane l is k = 32*(l/16) + n.
      for (unsigned N = 0; N < 32; ++N) {
        unsigned Kk = 32 * (L / 16) + N, Idx = L % 16;
        A[It * 1024 + L * 16 + N / 2] |= uint8_t(CodesA[(It * M + Idx) * K + Kk] << (4 * (N % 2)));
        B[It * 1024 + L * 16 + N / 2] |= uint8_t(CodesB[(It * M + Idx) * K + Kk] << (4 * (N % 2)));
      }
      for (unsigned Byte = 0; Byte < 4; ++Byte) {
        SA[It * 256 + L * 4 + Byte] = uint8_t(122 + Rng() % 8);
        SB[It * 256 + L * 4 + Byte] = uint8_t(122 + Rng() % 8);
      }
    }
  DeviceBuffer<uint8_t> DA(*E, A), DB(*E, B), DSA(*E, SA), DSB(*E, SB), DQ(*E, 128, 0);
  DeviceBuffer<float> DD(*E, 256, NAN);
  ASSERT_FALSE(bool(launch(
      *E, "mxfp4_loop", {1, 1, 1}, {64, 1, 1},
      Args().add(DA.Addr).add(DB.Addr).add(DSA.Addr).add(DSB.Addr).add(DD.Addr).add(DQ.Addr).add(
          int64_t(Iters)))));
  for (unsigned L = 0; L < 64; ++L) {
    unsigned Q[4];
    for (unsigned R = 0; R < 4; ++R) {
      unsigned Row = 4 * (L / 16) + R, Col = L % 16;
      double Ref = 0, Mag = 0;
      for (unsigned It = 0; It < Iters; ++It)
        for (unsigned Blk = 0; Blk < 4; ++Blk) {
          double S = 0;
          for (unsigned Kk = 32 * Blk; Kk < 32 * Blk + 32; ++Kk)
            S += fp4Value(CodesA[(It * M + Row) * K + Kk]) *
                 fp4Value(CodesB[(It * M + Col) * K + Kk]);
          int EA = SA[It * 256 + (16 * Blk + Row) * 4 + 1],
              EB = SB[It * 256 + (16 * Blk + Col) * 4 + 2];
          Ref += std::ldexp(S, EA + EB - 254);
          Mag += std::ldexp(std::fabs(S), EA + EB - 254);
        }
      float Got = DD.Host[4 * L + R];
      EXPECT_NEAR(Got, Ref, Mag * 1e-6 + 1e-30) << "lane " << L << " reg " << R;
      Q[R] = fp4Nearest(Got);
    }
    EXPECT_EQ(DQ.Host[2 * L], Q[0] | Q[1] << 4) << L;
    EXPECT_EQ(DQ.Host[2 * L + 1], Q[2] | Q[3] << 4) << L;
  }
}
