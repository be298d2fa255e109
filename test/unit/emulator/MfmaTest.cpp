//===- MfmaTest.cpp - One test per MFMA intrinsic vs the documented layout ---===//
//
// Each test runs a one-instruction kernel (kernels/mfma.ll) and compares D
// with C + A*B computed here from the lane layouts documented in
// docs/gfx950-facts.md §1:
//   - C/D (§1.1): 16x16: lane l, reg r
//     -> D[4*(l/16)+r][l%16]; 32x32: D[8*(r/4)+4*(l/32)+r%4][l%32].
//   - bf16 16x16x32 / 32x32x16 (§1.2):
//     lane l, element e -> A[l%M][8*(l/M)+e], B[8*(l/M)+e][l%M].
//   - f8f6f4 (§1.3, §1.4): fp8 byte b ->
//     k = 16*G*(b/16) + 16*(l/M) + b%16 with G = 64/M; fp4 nibble n ->
//     k = 32*(l/M) + n; scale byte opsel of lane M*blk + i for K-block blk.
// Accumulation precision is [U] (§1.6): results are compared with a tolerance
// relative to the sum of the magnitudes of the terms.
//
//===----------------------------------------------------------------------===//
#include "EmuTestUtil.h"

#include <cmath>
#include <cstring>
#include <random>

using namespace moegen::emu;
using namespace moegen::emu::test;

namespace {

// Test-side decoders (OCP MX v1.0 tables, docs/gfx950-facts.md §5).
double e4m3(uint8_t C) {
  int S = C >> 7, E = (C >> 3) & 15, M = C & 7;
  if (E == 15 && M == 7)
    return NAN;
  double V = E == 0 ? M / 8.0 * std::pow(2.0, -6) : (1 + M / 8.0) * std::pow(2.0, E - 7);
  return S ? -V : V;
}
double e5m2(uint8_t C) {
  int S = C >> 7, E = (C >> 2) & 31, M = C & 3;
  double V;
  if (E == 31)
    V = M ? NAN : INFINITY;
  else
    V = E == 0 ? M / 4.0 * std::pow(2.0, -14) : (1 + M / 4.0) * std::pow(2.0, E - 15);
  return S ? -V : V;
}
double e2m1(uint8_t C) {
  static const double T[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  return (C & 8) ? -T[C & 7] : T[C & 7];
}
float bf16Val(uint16_t H) {
  uint32_t B = uint32_t(H) << 16;
  float F;
  std::memcpy(&F, &B, 4);
  return F;
}

unsigned accRow(unsigned M, unsigned L, unsigned R) {
  return M == 16 ? 4 * (L / 16) + R : 8 * (R / 4) + 4 * (L / 32) + R % 4;
}

void expectClose(double Got, double Ref, double Mag, const std::string &Where) {
  if (std::isnan(Ref)) {
    EXPECT_TRUE(std::isnan(Got)) << Where << " expected NaN, got " << Got;
    return;
  }
  if (std::isinf(Ref)) {
    EXPECT_EQ(Got, Ref) << Where;
    return;
  }
  // A few f32 ulps of the largest partial magnitude, plus the denormal floor.
  double Tol = Mag * std::ldexp(1.0, -21) + 1e-44;
  EXPECT_NEAR(Got, Ref, Tol) << Where;
}

float halfVal(uint16_t H) {
  int S = H >> 15, E = (H >> 10) & 31, M = H & 1023;
  float V = E == 0    ? std::ldexp(float(M), -24)
            : E == 31 ? (M ? NAN : INFINITY)
                      : std::ldexp(float(M + 1024), E - 25);
  return S ? -V : V;
}

/// The 16-bit-input MFMAs: bf16 (also the older .1k forms) or f16.
struct Bf16Case {
  const char *Kernel;
  unsigned M, K;
  bool F16 = false;
};

void runBf16(const Bf16Case &C, uint32_t Seed, bool WithNaN) {
  auto E = loadKernels("mfma.ll");
  ASSERT_TRUE(E);
  std::mt19937 Rng(Seed);
  std::uniform_real_distribution<float> U(-4.0f, 4.0f);
  unsigned M = C.M, K = C.K, Regs = M * M / 64, Per = K * M / 64;
  auto Val = [&](uint16_t H) { return C.F16 ? halfVal(H) : bf16Val(H); };
  std::vector<uint16_t> A(M * K), B(K * M);
  auto Pick = [&](unsigned Idx) -> uint16_t {
    if (Idx % 37 == 5) // denormals
      return uint16_t(0x0001 + (Rng() & (C.F16 ? 0x3FF : 0x7F)));
    if (C.F16) // |x| in [2^-6, 16)
      return uint16_t((Rng() & 0x8000) | ((9 + Rng() % 10) << 10) | (Rng() & 0x3FF));
    float F = U(Rng);
    uint32_t Bits;
    std::memcpy(&Bits, &F, 4);
    return uint16_t(Bits >> 16);
  };
  for (unsigned I = 0; I < M * K; ++I) {
    A[I] = Pick(I);
    B[I] = Pick(I + 11);
  }
  if (WithNaN) {
    A[3 * K + 5] = C.F16 ? 0x7E00 : 0x7FC0;       // row 3 becomes NaN
    B[(K / 2) * M + 9] = C.F16 ? 0xFC00 : 0xFF80; // -inf in column 9
  }
  // Lane l, element e holds A[l%M][Per*(l/M) + e] and B[Per*(l/M) + e][l%M].
  std::vector<uint16_t> LA(64 * Per), LB(64 * Per);
  for (unsigned L = 0; L < 64; ++L)
    for (unsigned X = 0; X < Per; ++X) {
      unsigned Row = L % M, Kk = Per * (L / M) + X;
      LA[L * Per + X] = A[Row * K + Kk];
      LB[L * Per + X] = B[Kk * M + Row];
    }
  std::vector<float> Cm(M * M), LC(64 * Regs);
  for (auto &V : Cm)
    V = U(Rng);
  for (unsigned L = 0; L < 64; ++L)
    for (unsigned R = 0; R < Regs; ++R)
      LC[L * Regs + R] = Cm[accRow(M, L, R) * M + L % M];
  DeviceBuffer<uint16_t> DA(*E, LA), DB(*E, LB);
  DeviceBuffer<float> DC(*E, LC), DD(*E, 64 * Regs, 0.0f);
  ASSERT_FALSE(bool(launch(*E, C.Kernel, {1, 1, 1}, {64, 1, 1},
                           Args().add(DA.Addr).add(DB.Addr).add(DC.Addr).add(DD.Addr))));
  for (unsigned L = 0; L < 64; ++L)
    for (unsigned R = 0; R < Regs; ++R) {
      unsigned Row = accRow(M, L, R), Col = L % M;
      double Ref = Cm[Row * M + Col], Mag = std::fabs(Ref);
      for (unsigned Kk = 0; Kk < K; ++Kk) {
        double P = double(Val(A[Row * K + Kk])) * Val(B[Kk * M + Col]);
        Ref += P;
        Mag += std::fabs(P);
      }
      expectClose(DD.Host[L * Regs + R], Ref, Mag,
                  std::string(C.Kernel) + " lane " + std::to_string(L) + " reg " +
                      std::to_string(R));
    }
}

struct ScaledCase {
  const char *Kernel;
  unsigned M, FmtA, FmtB, OpselA, OpselB;
  bool LiteralZeroScales;
};

double decodeFmt(unsigned Fmt, uint8_t C) {
  return Fmt == 0 ? e4m3(C) : Fmt == 1 ? e5m2(C) : e2m1(C);
}

/// Places the codes of one operand (row/column Idx, reduction k) in the
/// registers of the lanes, following the documented layout.
std::vector<uint32_t> placeOperand(const std::vector<uint8_t> &Codes, unsigned M, unsigned Fmt,
                                   unsigned Dwords) {
  unsigned G = 64 / M, K = 32 * G;
  std::vector<uint32_t> Regs(64 * Dwords, 0);
  for (unsigned L = 0; L < 64; ++L) {
    auto *Bytes = reinterpret_cast<uint8_t *>(&Regs[L * Dwords]);
    unsigned Idx = L % M;
    if (Fmt <= 1) {
      for (unsigned B = 0; B < 32; ++B)
        Bytes[B] = Codes[Idx * K + 16 * G * (B / 16) + 16 * (L / M) + B % 16];
    } else {
      for (unsigned N = 0; N < 32; ++N)
        Bytes[N / 2] |= uint8_t((Codes[Idx * K + 32 * (L / M) + N] & 0xF) << (4 * (N % 2)));
    }
  }
  return Regs;
}

enum class Special { None, NaNInputs, NaNScale };

void runScaled(const ScaledCase &C, uint32_t Seed, Special Sp) {
  auto E = loadKernels("mfma.ll");
  ASSERT_TRUE(E);
  std::mt19937 Rng(Seed);
  unsigned M = C.M, G = 64 / M, K = 32 * G, Regs = M * M / 64;
  auto RandCode = [&](unsigned Fmt) -> uint8_t {
    for (;;) {
      uint8_t V = uint8_t(Rng() & (Fmt <= 1 ? 0xFF : 0xF));
      if (Fmt == 0 && (V & 0x7F) == 0x7F)
        continue; // NaN only where a test asks for it
      if (Fmt == 1 && ((V >> 2) & 31) == 31)
        continue;
      return V;
    }
  };
  // A[i][k] and B stored as [j][k].
  std::vector<uint8_t> A(M * K), B(M * K);
  for (auto &V : A)
    V = RandCode(C.FmtA);
  for (auto &V : B)
    V = RandCode(C.FmtB);
  if (Sp == Special::NaNInputs && C.FmtA == 0)
    A[2 * K + 40] = 0x7F; // row 2 is NaN
  if (Sp == Special::NaNInputs && C.FmtB == 1)
    B[5 * K + 3] = 0x7E; // e5m2 NaN in column 5
  // Every byte of every scale dword is random, so a wrong opsel shows.
  std::vector<uint32_t> SA(64), SB(64);
  for (unsigned L = 0; L < 64; ++L) {
    SA[L] = 0;
    SB[L] = 0;
    for (unsigned Byte = 0; Byte < 4; ++Byte) {
      SA[L] |= uint32_t(118 + Rng() % 18) << (8 * Byte);
      SB[L] |= uint32_t(118 + Rng() % 18) << (8 * Byte);
    }
  }
  if (Sp == Special::NaNScale) // E8M0 NaN for row 1, K-block 1 of A
    SA[M * 1 + 1] |= 0xFFu << (8 * C.OpselA);
  unsigned DwA = C.FmtA <= 1 ? 8 : 4, DwB = C.FmtB <= 1 ? 8 : 4;
  std::vector<float> Cm(M * M), LC(64 * Regs);
  std::uniform_real_distribution<float> U(-8.0f, 8.0f);
  for (auto &V : Cm)
    V = U(Rng);
  for (unsigned L = 0; L < 64; ++L)
    for (unsigned R = 0; R < Regs; ++R)
      LC[L * Regs + R] = Cm[accRow(M, L, R) * M + L % M];
  DeviceBuffer<uint32_t> DA(*E, placeOperand(A, M, C.FmtA, DwA)),
      DB(*E, placeOperand(B, M, C.FmtB, DwB)), DSA(*E, SA), DSB(*E, SB);
  DeviceBuffer<float> DC(*E, LC), DD(*E, 64 * Regs, 0.0f);
  ASSERT_FALSE(bool(launch(
      *E, C.Kernel, {1, 1, 1}, {64, 1, 1},
      Args().add(DA.Addr).add(DB.Addr).add(DC.Addr).add(DSA.Addr).add(DSB.Addr).add(DD.Addr))));
  for (unsigned L = 0; L < 64; ++L)
    for (unsigned R = 0; R < Regs; ++R) {
      unsigned Row = accRow(M, L, R), Col = L % M;
      double Ref = Cm[Row * M + Col], Mag = std::fabs(Ref);
      for (unsigned Blk = 0; Blk < G; ++Blk) {
        double S = 0, SMag = 0;
        for (unsigned Kk = 32 * Blk; Kk < 32 * Blk + 32; ++Kk) {
          double P = decodeFmt(C.FmtA, A[Row * K + Kk]) * decodeFmt(C.FmtB, B[Col * K + Kk]);
          S += P;
          SMag += std::fabs(P);
        }
        double Scale = 1.0;
        if (!C.LiteralZeroScales) {
          uint8_t EA = uint8_t(SA[M * Blk + Row] >> (8 * C.OpselA));
          uint8_t EB = uint8_t(SB[M * Blk + Col] >> (8 * C.OpselB));
          Scale = (EA == 0xFF || EB == 0xFF) ? NAN : std::ldexp(1.0, EA + EB - 254);
        }
        Ref += S * Scale;
        Mag += SMag * (std::isnan(Scale) ? 0 : Scale);
      }
      expectClose(DD.Host[L * Regs + R], Ref, Mag,
                  std::string(C.Kernel) + " lane " + std::to_string(L) + " reg " +
                      std::to_string(R));
    }
}

const Bf16Case Bf16_16{"mfma_16x16x32_bf16", 16, 32};
const Bf16Case Bf16_32{"mfma_32x32x16_bf16", 32, 16};
// f16 forms: same layout as bf16 assumed [I] (docs/gfx950-facts.md documents bf16).
const Bf16Case F16_16{"mfma_16x16x32_f16", 16, 32, true};
const Bf16Case F16_32{"mfma_32x32x16_f16", 32, 16, true};
// Older 4-element forms (AMD's matrix instruction calculator for CDNA3, unchanged on gfx950):
// A k = 4*(lane/M) + e.
const Bf16Case Bf16_16_1k{"mfma_16x16x16_bf16_1k", 16, 16};
const Bf16Case Bf16_32_1k{"mfma_32x32x8_bf16_1k", 32, 8};
const Bf16Case F16_16_4{"mfma_16x16x16_f16", 16, 16, true};
const Bf16Case F16_32_4{"mfma_32x32x8_f16", 32, 8, true};

} // namespace

TEST(EmulatorMfma, LayoutFormulasMatchDocumentedTables) {
  // Spot checks from the layout tables (docs/gfx950-facts.md §1.7): gfx950-derived 16x16x128
  // fp8 lane 16 holds k = 16..31 then 80..95; 32x32x64 fp8 lane 32 holds
  // k = 16..31 then 48..63; calculator 32x32x8 bf16: A k = 4*(lane/32) + ...
  auto K16 = [](unsigned L, unsigned B) { return 64 * (B / 16) + 16 * (L / 16) + B % 16; };
  auto K32 = [](unsigned L, unsigned B) { return 32 * (B / 16) + 16 * (L / 32) + B % 16; };
  EXPECT_EQ(K16(16, 0), 16u);
  EXPECT_EQ(K16(16, 15), 31u);
  EXPECT_EQ(K16(16, 16), 80u);
  EXPECT_EQ(K16(63, 31), 127u);
  EXPECT_EQ(K32(32, 0), 16u);
  EXPECT_EQ(K32(32, 16), 48u);
  // 32x32 accumulator: lane 0 holds rows 0-3, 8-11, 16-19, 24-27 (§1.1).
  EXPECT_EQ(accRow(32, 0, 4), 8u);
  EXPECT_EQ(accRow(32, 32, 0), 4u);
  EXPECT_EQ(accRow(32, 0, 15), 27u);
}

TEST(EmulatorMfma, Bf16_16x16x32) { runBf16(Bf16_16, 1, false); }
TEST(EmulatorMfma, Bf16_16x16x32_NaNInf) { runBf16(Bf16_16, 2, true); }
TEST(EmulatorMfma, Bf16_32x32x16) { runBf16(Bf16_32, 3, false); }
TEST(EmulatorMfma, Bf16_32x32x16_NaNInf) { runBf16(Bf16_32, 4, true); }
TEST(EmulatorMfma, F16_16x16x32) {
  runBf16(F16_16, 61, false);
  runBf16(F16_16, 62, true);
}
TEST(EmulatorMfma, F16_32x32x16) {
  runBf16(F16_32, 63, false);
  runBf16(F16_32, 64, true);
}
TEST(EmulatorMfma, Bf16_16x16x16_1k) {
  runBf16(Bf16_16_1k, 65, false);
  runBf16(Bf16_16_1k, 66, true);
}
TEST(EmulatorMfma, Bf16_32x32x8_1k) {
  runBf16(Bf16_32_1k, 67, false);
  runBf16(Bf16_32_1k, 68, true);
}
TEST(EmulatorMfma, F16_16x16x16) { runBf16(F16_16_4, 69, true); }
TEST(EmulatorMfma, F16_32x32x8) { runBf16(F16_32_4, 70, true); }

TEST(EmulatorMfma, Scale16x16x128_Fp8Fp8) {
  runScaled({"scale16_fp8_fp8", 16, 0, 0, 1, 2, false}, 5, Special::None);
}
TEST(EmulatorMfma, Scale16x16x128_Fp8Fp8_NaN) {
  runScaled({"scale16_fp8_fp8", 16, 0, 0, 1, 2, false}, 6, Special::NaNInputs);
  runScaled({"scale16_fp8_fp8", 16, 0, 0, 1, 2, false}, 7, Special::NaNScale);
}
TEST(EmulatorMfma, Scale16x16x128_Fp4Fp4) {
  runScaled({"scale16_fp4_fp4", 16, 4, 4, 0, 3, false}, 8, Special::None);
  runScaled({"scale16_fp4_fp4", 16, 4, 4, 0, 3, false}, 9, Special::NaNScale);
}
TEST(EmulatorMfma, Scale16x16x128_Fp4Bf8) {
  runScaled({"scale16_fp4_bf8", 16, 4, 1, 3, 1, false}, 10, Special::NaNInputs);
}
TEST(EmulatorMfma, Scale16x16x128_LiteralZeroScalesMeanOne) {
  runScaled({"scale16_fp8_lit0", 16, 0, 0, 2, 1, true}, 11, Special::None);
}
TEST(EmulatorMfma, Scale32x32x64_Fp8Fp8) {
  runScaled({"scale32_fp8_fp8", 32, 0, 0, 3, 0, false}, 12, Special::None);
  runScaled({"scale32_fp8_fp8", 32, 0, 0, 3, 0, false}, 13, Special::NaNScale);
}
TEST(EmulatorMfma, Scale32x32x64_Fp4Fp4) {
  runScaled({"scale32_fp4_fp4", 32, 4, 4, 1, 2, false}, 14, Special::None);
}
TEST(EmulatorMfma, Scale32x32x64_Bf8Fp4) {
  runScaled({"scale32_bf8_fp4", 32, 1, 4, 2, 3, false}, 15, Special::None);
}
