//===- ConvertTest.cpp - Scaled fp4/fp8/bf8 conversions ---------------------===//
//
// Reference: docs/gfx950-facts.md §4 (narrowing divides by 2^(es-127) of the scale's
// exponent field and rounds to nearest even; fp4 saturates to +-6; E4M3
// overflow is NaN; E5M2 overflow is inf; src0 goes to the low nibble/byte;
// the select operand picks the destination byte/word). The expected codes are
// found here by brute force over all codes of the format.
//
//===----------------------------------------------------------------------===//
#include "EmuTestUtil.h"

#include <cmath>
#include <cstring>
#include <random>

using namespace moegen::emu;
using namespace moegen::emu::test;

namespace {

double valueOf(int Fmt, unsigned Code) { // 0 = e4m3, 1 = e5m2, 4 = e2m1
  if (Fmt == 4) {
    static const double T[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    return (Code & 8) ? -T[Code & 7] : T[Code & 7];
  }
  int EB = Fmt == 0 ? 4 : 5, MB = 7 - EB, Bias = Fmt == 0 ? 7 : 15;
  int E = (Code >> MB) & ((1 << EB) - 1), M = Code & ((1 << MB) - 1);
  double V = E == 0 ? std::ldexp(M, 1 - Bias - MB) : std::ldexp(M + (1 << MB), E - Bias - MB);
  return (Code & 0x80) ? -V : V;
}

/// Nearest finite code, ties to the even code; overflow handled by caller.
unsigned nearestCode(int Fmt, double Y) {
  unsigned Best = 0;
  double BestErr = INFINITY;
  unsigned NCodes = Fmt == 4 ? 8 : 128;
  for (unsigned C = 0; C < NCodes; ++C) {
    if (Fmt == 0 && C == 0x7F)
      continue;
    if (Fmt == 1 && C >= 0x7C)
      continue;
    double Err = std::fabs(std::fabs(Y) - valueOf(Fmt, C));
    if (Err < BestErr || (Err == BestErr && C % 2 == 0)) {
      Best = C;
      BestErr = Err;
    }
  }
  unsigned Sign = std::signbit(Y) ? (Fmt == 4 ? 8 : 0x80) : 0;
  return Best | Sign;
}

unsigned expectCode(int Fmt, float X, int ScaleExp, bool ScaleNaN) {
  double Y = ScaleNaN ? NAN : std::ldexp(double(X), -ScaleExp);
  unsigned Sign = std::signbit(Y) ? (Fmt == 4 ? 8 : 0x80) : 0;
  if (Fmt == 4) {
    if (std::isnan(Y) || std::fabs(Y) > 6) // saturating; NaN -> max is [U]
      return Sign | 7;
    return nearestCode(4, Y);
  }
  if (Fmt == 0) {
    if (std::isnan(Y) || std::fabs(Y) > 464) // no saturation: NaN
      return Sign | 0x7F;
    return nearestCode(0, Y);
  }
  if (std::isnan(Y))
    return Sign | 0x7F;
  if (std::fabs(Y) >= 61440)
    return Sign | 0x7C; // inf
  return nearestCode(1, Y);
}

void runConvert(const char *Kernel, int Fmt, uint32_t Seed) {
  auto E = loadKernels("convert.ll");
  ASSERT_TRUE(E);
  std::mt19937 Rng(Seed);
  double Max = Fmt == 4 ? 8 : Fmt == 0 ? 520 : 70000;
  std::uniform_real_distribution<double> U(-Max, Max);
  std::vector<float> In(128), Sc(64);
  std::vector<int> Exp(64);
  for (int L = 0; L < 64; ++L) {
    Exp[L] = int(Rng() % 9) - 4;
    for (int K = 0; K < 2; ++K) {
      double V = U(Rng);
      if (Rng() % 4 == 0) // exact ties between neighbouring codes
        V = (valueOf(Fmt, Rng() % (Fmt == 4 ? 7 : 0x7B)) +
             valueOf(Fmt, 1 + Rng() % (Fmt == 4 ? 6 : 0x7A))) /
            2;
      In[2 * L + K] = float(std::ldexp(V, Exp[L]));
    }
    uint32_t Bits = uint32_t(Exp[L] + 127) << 23 | (Rng() & 0x807FFFFF); // sign/mantissa ignored
    std::memcpy(&Sc[L], &Bits, 4);
  }
  // Specials: NaN, inf, -0, tiny denormal input, a NaN scale.
  In[0] = NAN;
  In[1] = -INFINITY;
  In[2] = -0.0f;
  In[3] = 1e-42f;
  uint32_t NaNScale = 0xFF << 23;
  std::memcpy(&Sc[5], &NaNScale, 4);
  DeviceBuffer<float> DIn(*E, In), DSc(*E, Sc), DBack(*E, 128, 0.0f);
  DeviceBuffer<uint32_t> DQ(*E, 64, 0);
  ASSERT_FALSE(bool(launch(*E, Kernel, {1, 1, 1}, {64, 1, 1},
                           Args().add(DIn.Addr).add(DSc.Addr).add(DQ.Addr).add(DBack.Addr))));
  for (int L = 0; L < 64; ++L) {
    bool SN = L == 5;
    unsigned Q0 = expectCode(Fmt, In[2 * L], Exp[L], SN);
    unsigned Q1 = expectCode(Fmt, In[2 * L + 1], Exp[L], SN);
    uint32_t Got = DQ.Host[L];
    if (Fmt == 4) {
      // Old value 0xAAAAAAAA; dst_sel = 2 replaces byte 2, src0 in the low nibble.
      EXPECT_EQ(Got, (0xAAAAAAAAu & ~0x00FF0000u) | ((Q0 | Q1 << 4) << 16)) << "lane " << L;
    } else if (Fmt == 0) {
      // Old <i16 0x1234, i16 0x5678>; dst_hi = true replaces the high word.
      EXPECT_EQ(Got, 0x1234u | ((Q0 | Q1 << 8) << 16)) << "lane " << L;
    } else {
      EXPECT_EQ(Got, 0x56780000u | (Q0 | Q1 << 8)) << "lane " << L;
    }
    // Widening multiplies the decoded element by the scale (NaN scale -> NaN).
    for (int K = 0; K < 2; ++K) {
      unsigned Q = K ? Q1 : Q0;
      double V = valueOf(Fmt, Q);
      bool NaNCode = (Fmt == 0 && (Q & 0x7F) == 0x7F) || (Fmt == 1 && (Q & 0x7F) > 0x7C);
      bool InfCode = Fmt == 1 && (Q & 0x7F) == 0x7C;
      float Back = DBack.Host[2 * L + K];
      if (SN || NaNCode)
        EXPECT_TRUE(std::isnan(Back)) << "lane " << L;
      else if (InfCode)
        EXPECT_EQ(Back, (Q & 0x80) ? -INFINITY : INFINITY) << "lane " << L;
      else
        EXPECT_EQ(Back, float(std::ldexp(V, Exp[L]))) << "lane " << L << " elem " << K;
    }
  }
}

} // namespace

TEST(EmulatorConvert, ScaledFp4PackAndUnpack) { runConvert("cvt_fp4", 4, 21); }
TEST(EmulatorConvert, ScaledFp8E4M3PackAndUnpack) { runConvert("cvt_fp8", 0, 22); }
TEST(EmulatorConvert, ScaledBf8E5M2PackAndUnpack) { runConvert("cvt_bf8", 1, 23); }

// Unscaled cvt.pk.fp8.f32 / cvt.f32.fp8: OCP E4M3 with RNE; out-of-range
// inputs are refused because their result is undocumented [U].
TEST(EmulatorConvert, UnscaledFp8PackAndUnpack) {
  auto E = loadKernels("convert.ll");
  ASSERT_TRUE(E);
  std::mt19937 Rng(24);
  std::uniform_real_distribution<double> U(-448, 448);
  std::vector<float> In(128), Sc(64, 1.0f);
  for (auto &V : In)
    V = float(Rng() % 3 == 0 ? (valueOf(0, Rng() % 0x7D) + valueOf(0, 1 + Rng() % 0x7C)) / 2
                             : U(Rng));
  DeviceBuffer<float> DIn(*E, In), DSc(*E, Sc), DBack(*E, 128, 0.0f);
  DeviceBuffer<uint32_t> DQ(*E, 64, 0);
  ASSERT_FALSE(bool(launch(*E, "cvt_fp8_unscaled", {1, 1, 1}, {64, 1, 1},
                           Args().add(DIn.Addr).add(DSc.Addr).add(DQ.Addr).add(DBack.Addr))));
  for (int L = 0; L < 64; ++L) {
    unsigned Q0 = expectCode(0, In[2 * L], 0, false), Q1 = expectCode(0, In[2 * L + 1], 0, false);
    EXPECT_EQ(DQ.Host[L], 0x11220000u | Q0 | (Q1 << 8)) << L;
    EXPECT_EQ(DBack.Host[2 * L], float(valueOf(0, Q1))) << L;
  }
  In[7] = 449.0f;
  DeviceBuffer<float> DBad(*E, In);
  expectErrorContains(launch(*E, "cvt_fp8_unscaled", {1, 1, 1}, {64, 1, 1},
                             Args().add(DBad.Addr).add(DSc.Addr).add(DQ.Addr).add(DBack.Addr)),
                      {"cvt.pk.fp8.f32", "[U]", "lane 3"});
}

// Widening covers every fp4 pair at every scale exponent: each element is the
// exact value code x 2^(es-127) rounded once to the destination (RNE; f16 and
// bf16 subnormals kept, overflow to inf), and a NaN scale (es = 255) gives NaN.
TEST(EmulatorConvert, ScaledFp4WideningOfEveryByteAndScale) {
  auto E = loadKernels("convert.ll");
  ASSERT_TRUE(E);
  std::vector<uint32_t> Words(64);
  for (unsigned L = 0; L < 64; ++L)
    Words[L] = (4 * L) | (4 * L + 1) << 8 | (4 * L + 2) << 16 | (4 * L + 3) << 24;
  DeviceBuffer<uint32_t> DIn(*E, Words), DSc(*E, 64, 0);
  DeviceBuffer<uint16_t> DBf(*E, 512, 0), DHf(*E, 512, 0);
  DeviceBuffer<float> DFl(*E, 512, 0.0f);
  auto bits = [](auto V) {
    uint32_t B = 0;
    std::memcpy(&B, &V, sizeof(V));
    return B;
  };
  for (uint32_t Es = 0; Es < 256; ++Es) {
    for (unsigned L = 0; L < 64; ++L)
      DSc.Host[L] = Es << 23 | (L * 0x10101u & 0x807FFFFF); // sign and mantissa are ignored
    ASSERT_FALSE(
        bool(launch(*E, "cvt_fp4_widen", {1, 1, 1}, {64, 1, 1},
                    Args().add(DIn.Addr).add(DSc.Addr).add(DBf.Addr).add(DHf.Addr).add(DFl.Addr))));
    for (unsigned Byte = 0; Byte < 256; ++Byte)
      for (unsigned Half = 0; Half < 2; ++Half) {
        unsigned Idx = 2 * Byte + Half, Code = Half ? Byte >> 4 : Byte & 0xF;
        uint16_t Bf = DBf.Host[Idx], Hf = DHf.Host[Idx];
        float Fl = DFl.Host[Idx];
        if (Es == 255) {
          EXPECT_TRUE(std::isnan(Fl)) << "byte " << Byte;
          EXPECT_EQ(Bf & 0x7FFF, 0x7FC0) << "byte " << Byte; // bf16 NaN
          EXPECT_GT(Hf & 0x7FFF, 0x7C00) << "byte " << Byte; // f16 NaN
          continue;
        }
        double Exact = std::ldexp(valueOf(4, Code), int(Es) - 127);
        // f32 holds every finite product exactly (two significant bits,
        // at least 2^-128), so bf16 is one RNE rounding of it.
        float F32 = float(Exact);
        uint32_t FB = bits(F32);
        uint16_t WantBf = uint16_t((FB + 0x7FFF + ((FB >> 16) & 1)) >> 16);
        if (std::isinf(F32))
          WantBf = uint16_t(FB >> 16);
        EXPECT_EQ(bits(Fl), FB) << "f32, byte " << Byte << " half " << Half << " es " << Es;
        EXPECT_EQ(Bf, WantBf) << "bf16, byte " << Byte << " half " << Half << " es " << Es;
        EXPECT_EQ(Hf, uint16_t(bits(_Float16(Exact))))
            << "f16, byte " << Byte << " half " << Half << " es " << Es;
      }
  }
}
