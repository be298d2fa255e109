//===- CoreTest.cpp - Interpreter core: control flow, memory, wave ops -----===//
#include "EmuTestUtil.h"

#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <limits>
#include <random>

using namespace moegen::emu;
using namespace moegen::emu::test;

TEST(EmulatorCore, SaxpyAcrossWorkgroups) {
  auto E = loadKernels("basic.ll");
  ASSERT_TRUE(E);
  const int N = 1000;
  std::vector<float> A(N), B(N);
  for (int I = 0; I < N; ++I) {
    A[I] = 0.25f * float(I);
    B[I] = float(N - I);
  }
  DeviceBuffer<float> DA(*E, A), DB(*E, B), DO(*E, N, -1.0f);
  ASSERT_FALSE(bool(launch(*E, "saxpy", {8, 1, 1}, {128, 1, 1},
                           Args().add(DA.Addr).add(DB.Addr).add(DO.Addr).add(3.0f).add(N))));
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(DO.Host[I], std::fma(A[I], 3.0f, B[I])) << I;
  EXPECT_EQ(E->lastStats().Workgroups, 8u);
  EXPECT_EQ(E->lastStats().Waves, 16u);
  EXPECT_GT(E->lastStats().LaneInstructions, 1000u * 10);
}

TEST(EmulatorCore, LoopsAndParallelPhis) {
  auto E = loadKernels("basic.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<int32_t> Out(*E, 2 * 64, -1);
  ASSERT_FALSE(bool(launch(*E, "loop", {1, 1, 1}, {64, 1, 1}, Args().add(Out.Addr))));
  for (int T = 0; T < 64; ++T) {
    int Iters = T == 0 ? 1 : T; // do-while: at least one iteration
    EXPECT_EQ(Out.Host[2 * T], Iters * (Iters - 1) / 2) << T;
    // x and y swap each iteration (parallel phi copy).
    EXPECT_EQ(Out.Host[2 * T + 1], Iters % 2 ? -1 : 1) << T;
  }
}

TEST(EmulatorCore, LdsExchangeWithBarrier) {
  auto E = loadKernels("basic.ll");
  ASSERT_TRUE(E);
  std::vector<float> In(256);
  for (int I = 0; I < 256; ++I)
    In[I] = float(I) * 1.5f;
  DeviceBuffer<float> DI(*E, In), DO(*E, 256, 0.0f);
  ASSERT_FALSE(
      bool(launch(*E, "lds_reverse", {1, 1, 1}, {256, 1, 1}, Args().add(DI.Addr).add(DO.Addr))));
  for (int I = 0; I < 256; ++I)
    ASSERT_EQ(DO.Host[I], In[255 - I]);
  EXPECT_EQ(E->lastStats().Barriers, 1u);
}

TEST(EmulatorCore, WaveOpsWithDivergentLanes) {
  auto E = loadKernels("basic.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<uint32_t> Out(*E, 4 * 64, 0);
  ASSERT_FALSE(bool(launch(*E, "waveops", {1, 1, 1}, {64, 1, 1}, Args().add(Out.Addr))));
  for (uint32_t T = 0; T < 64; ++T) {
    EXPECT_EQ(Out.Host[4 * T], 0xAAAAAAAAu); // ballot(odd lanes), low half
    EXPECT_EQ(Out.Host[4 * T + 1], 100u);    // readfirstlane: lane 0 took %b
    EXPECT_EQ(Out.Host[4 * T + 2], T);       // mbcnt(-1) = lane id
    EXPECT_EQ(Out.Host[4 * T + 3], T % 2 ? 3 * T : T + 100);
  }
}

// Lanes that skip an LDS access inside a loop wait for the others before the
// next iteration, and lanes that leave a loop early wait at its exit: every
// ballot sees exactly the lanes the hardware's EXEC mask would hold.
TEST(EmulatorCore, DivergentLanesReconvergeAtPostDominator) {
  auto E = loadKernels("basic.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<uint64_t> Out(*E, 4 * 64, 0);
  ASSERT_FALSE(bool(launch(*E, "reconverge", {1, 1, 1}, {64, 1, 1}, Args().add(Out.Addr))));
  for (uint32_t T = 0; T < 64; ++T) {
    EXPECT_EQ(Out.Host[4 * T], 4u * 64) << "lane " << T;
    // Iteration k (0-based) of the second loop holds the lanes with
    // L % 4 >= k: 64 - 16k of them.
    uint64_t Expected = 0;
    for (uint32_t K = 0; K <= T % 4; ++K)
      Expected += 64 - 16 * K;
    EXPECT_EQ(Out.Host[4 * T + 1], Expected) << "lane " << T;
    EXPECT_EQ(Out.Host[4 * T + 2], 64u) << "lane " << T;
  }
}

TEST(EmulatorCore, BufferRangeRule) {
  auto E = loadKernels("basic.ll");
  ASSERT_TRUE(E);
  std::vector<int32_t> Src(128);
  for (int I = 0; I < 128; ++I)
    Src[I] = I * 10;
  DeviceBuffer<int32_t> DS(*E, Src), DD(*E, 512 + 64, -7);
  // num_records = 96 bytes: lanes 0..11 read and write bytes 8l..8l+7 in
  // range; the others are wholly out of range (read 0, stores dropped).
  ASSERT_FALSE(bool(launch(*E, "buffers", {1, 1, 1}, {64, 1, 1},
                           Args().add(DS.Addr).add(DD.Addr).add(int32_t(96)))));
  for (int L = 0; L < 64; ++L) {
    for (int D = 0; D < 2; ++D) {
      int Byte = 8 * L + 4 * D;
      EXPECT_EQ(DD.Host[Byte / 4], L < 12 ? Src[Byte / 4] + 1 : -7) << "lane " << L;
    }
    // Fat pointer load: in range for the first 24 dwords, 0 beyond.
    EXPECT_EQ(DD.Host[512 + L], L < 24 ? Src[L] : 0) << L;
  }
}

TEST(EmulatorCore, BufferAccessStraddlingNumRecordsIsRefused) {
  auto E = loadKernels("basic.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<int32_t> DS(*E, 128, 1), DD(*E, 512 + 64, -7);
  // num_records = 100 bytes: lane 12's 8 bytes at 96 are half in range.
  expectErrorContains(
      launch(*E, "buffers", {1, 1, 1}, {64, 1, 1},
             Args().add(DS.Addr).add(DD.Addr).add(int32_t(100))),
      {"buffer access of 8 bytes at offset 96 straddles num_records 100", "lane 12", "[U]"});
}

namespace {
/// Whether R is within 1 ulp of the exact value V: V itself when f32 has
/// it, else one of its two f32 neighbours.
bool faithful(float R, double V) {
  if (std::isnan(V))
    return std::isnan(R);
  float Near = float(V);
  if (double(Near) == V || std::isinf(Near))
    return R == Near;
  float Other = std::nextafter(Near, double(Near) < V ? INFINITY : -INFINITY);
  return R == Near || R == Other;
}

struct Transcendentals {
  std::vector<float> X, Out;
  explicit Transcendentals(std::vector<float> In) : X(std::move(In)) {
    X.resize((X.size() + 63) / 64 * 64, 1.0f);
    auto E = loadKernels("basic.ll");
    EXPECT_TRUE(E);
    if (!E)
      return;
    DeviceBuffer<float> DX(*E, X), DO(*E, 8 * X.size(), -1.0f);
    EXPECT_FALSE(bool(launch(*E, "transcendentals", {uint32_t(X.size() / 64), 1, 1}, {64, 1, 1},
                             Args().add(DX.Addr).add(DO.Addr))));
    Out = DO.Host;
  }
  float at(size_t I, unsigned K) const { return Out[8 * I + K]; }
};
} // namespace

TEST(EmulatorCore, TranscendentalsAreWithinOneUlpButNotExact) {
  std::mt19937 Rng(5);
  std::uniform_real_distribution<float> Exp(-20.0f, 20.0f);
  std::vector<float> In(1024);
  for (float &V : In)
    V = std::ldexp(1.0f + float(Rng() % 8388608) / 8388608.0f, int(Exp(Rng)));
  Transcendentals T(In);
  ASSERT_EQ(T.Out.size(), 8 * T.X.size());
  unsigned Inexact[6] = {};
  for (size_t I = 0; I < In.size(); ++I) {
    double X = In[I];
    double Exact[6] = {std::exp2(X), std::log2(X), 1 / X, 1 / std::sqrt(X), std::sqrt(X), 3 / X};
    for (unsigned K = 0; K < 5; ++K) {
      EXPECT_TRUE(faithful(T.at(I, K), Exact[K])) << "op " << K << " x " << X;
      Inexact[K] += T.at(I, K) != float(Exact[K]);
    }
    // fdiv afn = 3 * rcp(x): one more rounding.
    EXPECT_EQ(T.at(I, 5), 3.0f * T.at(I, 2)) << X;
    Inexact[5] += T.at(I, 5) != float(Exact[5]);
    EXPECT_EQ(T.at(I, 6), T.at(I, 4)) << "sqrt afn is v_sqrt_f32, x " << X;
    EXPECT_EQ(T.at(I, 7), float(Exact[4])) << "sqrt without afn is correctly rounded, x " << X;
  }
  // Roughly half of the results are the other neighbour of the exact value.
  for (unsigned K = 0; K < 6; ++K) {
    EXPECT_GT(Inexact[K], In.size() / 4) << "op " << K;
    EXPECT_LT(Inexact[K], In.size() * 3 / 4) << "op " << K;
  }
  // Deterministic: the same inputs give the same bits.
  Transcendentals Again(In);
  EXPECT_EQ(Again.Out, T.Out);
}

TEST(EmulatorCore, TranscendentalsFlushDenormalsAndKeepExactResults) {
  float Den = std::ldexp(1.0f, -140), MinNorm = std::numeric_limits<float>::min();
  Transcendentals T({Den, -Den, -140.0f, 0x1.8p127f, 3.0f, 4.0f, 16.0f, 0.25f, MinNorm});
  ASSERT_EQ(T.Out.size(), 8 * T.X.size());
  // Denormal input: a zero of its sign.
  EXPECT_EQ(T.at(0, 0), 1.0f);
  EXPECT_EQ(T.at(0, 1), -INFINITY);
  EXPECT_EQ(T.at(0, 2), INFINITY);
  EXPECT_EQ(T.at(1, 2), -INFINITY);
  EXPECT_EQ(T.at(0, 3), INFINITY);
  EXPECT_EQ(T.at(0, 4), 0.0f);
  EXPECT_TRUE(std::signbit(T.at(1, 4)));
  EXPECT_EQ(T.at(0, 5), INFINITY); // 3 / denormal with afn: 3 * rcp(+0)
  EXPECT_GT(T.at(0, 7), 0.0f);     // the IEEE sqrt keeps denormals
  // Denormal results: flushed.
  EXPECT_EQ(T.at(2, 0), 0.0f); // exp2(-140)
  EXPECT_EQ(T.at(3, 2), 0.0f); // rcp(1.5 * 2^127)
  // Exact results stay exact.
  EXPECT_EQ(T.at(4, 0), 8.0f);
  EXPECT_EQ(T.at(5, 1), 2.0f);
  EXPECT_EQ(T.at(5, 2), 0.25f);
  EXPECT_EQ(T.at(5, 3), 0.5f);
  EXPECT_EQ(T.at(6, 4), 4.0f);
  EXPECT_EQ(T.at(7, 1), -2.0f);
  EXPECT_EQ(T.at(8, 2), 0x1p126f);
}

TEST(EmulatorCore, GlobalAtomics) {
  auto E = loadKernels("basic.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<float> F(*E, 1, 0.0f);
  DeviceBuffer<uint16_t> BF(*E, 2, 0);
  DeviceBuffer<int32_t> M(*E, 1, -5);
  ASSERT_FALSE(bool(
      launch(*E, "atomics", {1, 1, 1}, {128, 1, 1}, Args().add(F.Addr).add(BF.Addr).add(M.Addr))));
  EXPECT_EQ(F.Host[0], 127.0f * 128.0f / 2.0f);
  // 128 x 0.5 = 64 and 128 x 1 = 128, exact in bf16.
  EXPECT_EQ(BF.Host[0], 0x4280); // 64.0 in bf16
  EXPECT_EQ(BF.Host[1], 0x4300); // 128.0 in bf16
  EXPECT_EQ(M.Host[0], 127);
}

TEST(EmulatorCore, UnknownIntrinsicStopsWithItsName) {
  auto E = loadKernels("basic.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<int32_t> Out(*E, 1, 0);
  expectErrorContains(launch(*E, "unknown", {1, 1, 1}, {64, 1, 1}, Args().add(Out.Addr)),
                      {"llvm.amdgcn.s.getreg", "unknown"});
}

TEST(EmulatorCore, IntrinsicsAreMatchedByIdAndOthersByName) {
  auto E = loadKernels("basic.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<int64_t> Out(*E, 1, 0);
  expectErrorContains(launch(*E, "rcp_legacy", {1, 1, 1}, {64, 1, 1}, Args().add(Out.Addr)),
                      {"llvm.amdgcn.rcp.legacy", "unknown"});
  expectErrorContains(launch(*E, "external_call", {1, 1, 1}, {64, 1, 1}, Args().add(Out.Addr)),
                      {"__ockl_get_work_dim_like", "unknown"});
  EXPECT_EQ(Out.Host[0], 0);
}

TEST(EmulatorCore, CrossLaneOpsSwitchAndBoolVectors) {
  auto E = loadKernels("crosslane.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<int32_t> Out(*E, 10 * 64, -1);
  ASSERT_FALSE(bool(launch(*E, "crosslane", {1, 1, 1}, {64, 1, 1}, Args().add(Out.Addr))));
  for (int L = 0; L < 64; ++L) {
    const int32_t *O = &Out.Host[10 * L];
    EXPECT_EQ(O[0], L % 16 == 0 ? 0 : 10 * (L - 1)) << "dpp row_shr:1, lane " << L;
    EXPECT_EQ(O[1], 10 * (L ^ 1)) << "swizzle swap(1), lane " << L;
    // permlane32.swap(vdst = 10*l, vsrc = l): upper half of vdst <-> lower of vsrc.
    EXPECT_EQ(O[2], L < 32 ? 10 * L : L - 32) << "permlane32 vdst, lane " << L;
    EXPECT_EQ(O[3], L < 32 ? 10 * (L + 32) : L) << "permlane32 vsrc, lane " << L;
    EXPECT_EQ(O[4], 10 * (63 - L)) << "bpermute, lane " << L;
    EXPECT_EQ(O[5], 50) << "readlane 5";
    EXPECT_EQ(O[6], L % 4 == 0 ? 100 : L % 4 == 1 ? 200 : 300) << "switch, lane " << L;
    int Red = 0, Bits = 0;
    for (int K = 0; K < 4; ++K) {
      bool C = L + K < (K < 2 ? 2 : 40);
      Red += C ? L + K : 0;
      Bits |= C << K;
    }
    EXPECT_EQ(O[7], Red) << "vector select + reduce, lane " << L;
    EXPECT_EQ(O[8], Bits) << "bitcast <4 x i1> to i4, lane " << L;
    EXPECT_EQ(O[9], 630) << "wave.reduce.umax";
  }
}

TEST(EmulatorCore, InstructionLimitStopsEndlessKernels) {
  Options O;
  O.MaxLaneInstructions = 100000;
  auto E = loadKernels("basic.ll", O);
  ASSERT_TRUE(E);
  DeviceBuffer<int32_t> Out(*E, 1, 0);
  expectErrorContains(launch(*E, "spin", {1, 1, 1}, {64, 1, 1}, Args().add(Out.Addr)),
                      {"lane-instruction limit exceeded", "spin"});
}

TEST(EmulatorCore, LaunchMustMatchCompiledWorkgroupSize) {
  auto E = loadKernels("basic.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<int32_t> Out(*E, 1, 0);
  EXPECT_FALSE(bool(launch(*E, "fixed64", {2, 1, 1}, {64, 1, 1}, Args().add(Out.Addr))));
  expectErrorContains(launch(*E, "fixed64", {1, 1, 1}, {128, 1, 1}, Args().add(Out.Addr)),
                      {"128 threads", "64..64"});
  expectErrorContains(launch(*E, "fixed64", {1, 1, 1}, {32, 2, 1}, Args().add(Out.Addr)),
                      {"reqd_work_group_size (64, 1, 1)"});
}

TEST(EmulatorCore, DynamicLdsIsSizedByTheLaunch) {
  auto E = loadKernels("basic.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<int32_t> Out(*E, 64, -1);
  ASSERT_FALSE(bool(launch(*E, "dynamic_lds", {1, 1, 1}, {64, 1, 1}, Args().add(Out.Addr), 256)));
  for (int T = 0; T < 64; ++T)
    EXPECT_EQ(Out.Host[T], 63 - T);
  expectErrorContains(launch(*E, "dynamic_lds", {1, 1, 1}, {64, 1, 1}, Args().add(Out.Addr), 128),
                      {"out-of-bounds LDS write", "lane 32"});
  expectErrorContains(
      launch(*E, "dynamic_lds", {1, 1, 1}, {64, 1, 1}, Args().add(Out.Addr), 200000),
      {"exceed the 160 KiB"});
}

TEST(EmulatorCore, LaunchGeometryQueries) {
  auto E = loadKernels("basic.ll");
  ASSERT_TRUE(E);
  DeviceBuffer<int32_t> Out(*E, 7 * 2000, -1);
  ASSERT_FALSE(bool(launch(*E, "geometry", {3, 2, 1}, {96, 1, 1}, Args().add(Out.Addr))));
  for (int Y = 0; Y < 2; ++Y)
    for (int G = 0; G < 3 * 96; ++G) {
      const int32_t *O = &Out.Host[7 * (1000 * Y + G)];
      EXPECT_EQ(O[0], 3);      // hidden_block_count_x
      EXPECT_EQ(O[1], 96);     // hidden_group_size_x
      EXPECT_EQ(O[2], 96);     // dispatch packet workgroup_size_x
      EXPECT_EQ(O[3], 3 * 96); // dispatch packet grid_size_x (work-items)
      EXPECT_EQ(O[4], 3);      // __ockl_get_num_groups(0)
      EXPECT_EQ(O[5], G);      // __ockl_get_global_id(0)
      EXPECT_EQ(O[6], G / 96); // workgroup.id.x
    }
}

TEST(EmulatorCore, WorkgroupsOnSeveralThreads) {
  Options O;
  O.Threads = 2;
  auto E = loadKernels("basic.ll", O);
  ASSERT_TRUE(E);
  DeviceBuffer<float> F(*E, 1, 0.0f);
  DeviceBuffer<uint16_t> BF(*E, 2, 0);
  DeviceBuffer<int32_t> M(*E, 1, -5);
  ASSERT_FALSE(bool(
      launch(*E, "atomics", {16, 1, 1}, {128, 1, 1}, Args().add(F.Addr).add(BF.Addr).add(M.Addr))));
  EXPECT_EQ(F.Host[0], 16.0f * 127.0f * 128.0f / 2.0f); // exact in any order
  // bf16 sums stall where the addend is half an ulp (ties to even): 0.5 stops
  // at 128, 1.0 at 256.
  EXPECT_EQ(BF.Host[0], 0x4300);
  EXPECT_EQ(BF.Host[1], 0x4380);
  EXPECT_EQ(M.Host[0], 127);
  EXPECT_EQ(E->lastStats().Workgroups, 16u);
  EXPECT_EQ(E->lastStats().LaneInstructions % 16, 0u);
  DeviceBuffer<float> DA(*E, 1000, 1.0f), DB(*E, 1000, 2.0f), DO(*E, 1000, 0.0f);
  ASSERT_FALSE(bool(launch(*E, "saxpy", {8, 1, 1}, {128, 1, 1},
                           Args().add(DA.Addr).add(DB.Addr).add(DO.Addr).add(3.0f).add(1000))));
  for (float V : DO.Host)
    ASSERT_EQ(V, 5.0f);
  auto B = loadKernels("broken.ll", O);
  ASSERT_TRUE(B);
  DeviceBuffer<int32_t> Out(*B, 64, 0);
  expectErrorContains(launch(*B, "oob_store", {4, 1, 1}, {64, 1, 1}, Args().add(Out.Addr)),
                      {"out-of-bounds global write", "lane 63"});
}

TEST(EmulatorCore, RefusesCodeForOtherTargets) {
  Emulator E;
  auto Buf = llvm::MemoryBuffer::getMemBuffer(
      "target triple = \"x86_64-unknown-linux-gnu\"\ndefine void @f() { ret void }\n", "x86");
  expectErrorContains(E.loadIR(Buf->getMemBufferRef()), {"x86_64", "not amdgcn"});
  auto Gfx942 = llvm::MemoryBuffer::getMemBuffer("target triple = \"amdgcn-amd-amdhsa\"\n"
                                                 "define amdgpu_kernel void @k() #0 { ret void }\n"
                                                 "attributes #0 = { \"target-cpu\"=\"gfx942\" }\n",
                                                 "gfx942");
  ASSERT_FALSE(bool(E.loadIR(Gfx942->getMemBufferRef())));
  expectErrorContains(E.getKernel("k").takeError(), {"compiled for gfx942"});
}

namespace moegen::emu::test {
namespace {

TEST(EmulatorCore, FpTruncKeepsInfinitiesAndRoundsToNearestEven) {
  auto E = loadKernels("fptrunc.ll");
  ASSERT_TRUE(E);
  const float inf = std::numeric_limits<float>::infinity();
  // inf, -inf, 1 + 2^-8 (a bf16 tie: to even, 1.0), 1 + 3*2^-8 (tie: up), 65520 (half overflow).
  std::vector<float> in = {inf, -inf, 1.00390625f, 1.01171875f, 65520.0f};
  in.resize(64, 0.0f);
  DeviceBuffer<float> In(*E, in);
  DeviceBuffer<uint16_t> Bf(*E, 64, 0), H(*E, 64, 0);
  ASSERT_FALSE(static_cast<bool>(
      launch(*E, "trunc", {1, 1, 1}, {64, 1, 1}, Args().add(In.Addr).add(Bf.Addr).add(H.Addr))));
  EXPECT_EQ(Bf.Host[0], 0x7F80);
  EXPECT_EQ(Bf.Host[1], 0xFF80);
  EXPECT_EQ(Bf.Host[2], 0x3F80);
  EXPECT_EQ(Bf.Host[3], 0x3F82);
  EXPECT_EQ(H.Host[0], 0x7C00);
  EXPECT_EQ(H.Host[1], 0xFC00);
  EXPECT_EQ(H.Host[4], 0x7C00);
}

} // namespace
} // namespace moegen::emu::test
