//===- Formats.cpp - Number formats of gfx950 -----------------------------===//
#include "emulator/Formats.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace moegen::emu {

uint16_t floatToBf16(float F) {
  uint32_t B = floatToBits(F);
  if (std::isnan(F))
    return uint16_t((B >> 16) | 0x40); // quiet NaN, sign kept
  uint32_t Lsb = (B >> 16) & 1;
  B += 0x7FFF + Lsb;
  return uint16_t(B >> 16);
}

float halfToFloat(uint16_t H) {
  uint32_t Sign = uint32_t(H >> 15) << 31;
  uint32_t Exp = (H >> 10) & 0x1F, Man = H & 0x3FF;
  if (Exp == 0x1F)
    return bitsToFloat(Sign | 0x7F800000 | (Man << 13));
  if (Exp == 0) {
    float V = std::ldexp(float(Man), -24);
    return Sign ? -V : V;
  }
  return bitsToFloat(Sign | ((Exp + 112) << 23) | (Man << 13));
}

/// A double rounded (to nearest even) to a binary float with ExpBits exponent
/// and ManBits mantissa bits, IEEE-style (subnormals, infinities, quiet NaN),
/// as its bit pattern: f16 is (5, 10), bf16 (8, 7).
template <int ExpBits, int ManBits> static uint16_t doubleToNarrow(double D) {
  int Bias = (1 << (ExpBits - 1)) - 1, MinExp = 1 - Bias;
  uint64_t Bits = doubleToBits(D), Mag = Bits & ~(uint64_t(1) << 63);
  int DExp = int(Mag >> 52);
  if (DExp != 0x7FF && DExp - 1023 >= MinExp) {
    // A normal result (or an overflow): RNE on the bit pattern, a carry out of
    // the mantissa moves into the exponent.
    unsigned Sh = 52 - unsigned(ManBits);
    uint64_t R = (Mag + ((uint64_t(1) << (Sh - 1)) - 1) + ((Mag >> Sh) & 1)) >> Sh;
    int64_t E = int64_t(R >> ManBits) - 1023 + Bias;
    uint16_t Sign = uint16_t((Bits >> 63) << (ExpBits + ManBits));
    uint16_t ExpMax = uint16_t((1u << ExpBits) - 1);
    if (E >= ExpMax)
      return Sign | uint16_t(ExpMax << ManBits);
    return Sign | uint16_t(E << ManBits) | uint16_t(R & ((1u << ManBits) - 1));
  }
  // Zeros, results below the smallest normal, NaN and inf.
  uint16_t Sign = std::signbit(D) ? uint16_t(1u << (ExpBits + ManBits)) : 0;
  uint16_t ExpMask = uint16_t(((1u << ExpBits) - 1) << ManBits);
  if (std::isnan(D))
    return Sign | ExpMask | uint16_t(1u << (ManBits - 1));
  double A = std::fabs(D);
  if (A == 0)
    return Sign;
  if (std::isinf(A)) // ilogb(inf) would turn the quantum into inf/inf = NaN
    return Sign | ExpMask;
  int E = std::max(std::ilogb(A), MinExp); // subnormals share the smallest quantum
  double Quantum = std::ldexp(1.0, E - ManBits);
  double Q = std::nearbyint(A / Quantum) * Quantum; // RNE
  if (Q >= std::ldexp(1.0, Bias + 1))
    return Sign | ExpMask;
  if (Q < std::ldexp(1.0, MinExp))
    return Sign | uint16_t(Q / std::ldexp(1.0, MinExp - ManBits));
  int QE = std::ilogb(Q);
  uint16_t Man = uint16_t(Q / std::ldexp(1.0, QE - ManBits)) & uint16_t((1u << ManBits) - 1);
  return Sign | uint16_t((QE + Bias) << ManBits) | Man;
}

uint16_t doubleToHalf(double D) { return doubleToNarrow<5, 10>(D); }

uint16_t doubleToBf16(double D) { return doubleToNarrow<8, 7>(D); }

uint16_t floatToHalf(float F) { return doubleToHalf(double(F)); }

namespace {
struct Mini {
  int EBits, MBits, Bias;
};
constexpr Mini miniOf(MxFormat F) {
  switch (F) {
  case MxFormat::E4M3:
    return {4, 3, 7};
  case MxFormat::E5M2:
    return {5, 2, 15};
  case MxFormat::E2M3:
    return {2, 3, 1};
  case MxFormat::E3M2:
    return {3, 2, 3};
  case MxFormat::E2M1:
    return {2, 1, 1};
  }
  return {0, 0, 0};
}

/// Rounds |Y| onto the grid of a minifloat with unbounded exponent range above
/// (RNE). Returns the rounded magnitude.
double roundMini(double A, Mini M) {
  if (A == 0)
    return 0;
  int E = std::ilogb(A);
  if (E < 1 - M.Bias)
    E = 1 - M.Bias;
  double Quantum = std::ldexp(1.0, E - M.MBits);
  return std::nearbyint(A / Quantum) * Quantum;
}

/// Encodes an exactly representable magnitude (no overflow) as bits.
uint8_t encodeMag(double Q, Mini M) {
  double MinNormal = std::ldexp(1.0, 1 - M.Bias);
  if (Q < MinNormal)
    return uint8_t(Q / std::ldexp(1.0, 1 - M.Bias - M.MBits));
  int E = std::ilogb(Q);
  unsigned Man = unsigned(Q / std::ldexp(1.0, E - M.MBits)) & ((1u << M.MBits) - 1);
  return uint8_t(((E + M.Bias) << M.MBits) | Man);
}
} // namespace

unsigned mxBits(MxFormat Fmt) {
  Mini M = miniOf(Fmt);
  return 1 + M.EBits + M.MBits;
}

double decodeMx(MxFormat Fmt, uint32_t Code) {
  Mini M = miniOf(Fmt);
  unsigned Bits = 1 + M.EBits + M.MBits;
  Code &= (1u << Bits) - 1;
  bool Neg = (Code >> (Bits - 1)) & 1;
  unsigned Exp = (Code >> M.MBits) & ((1u << M.EBits) - 1);
  unsigned Man = Code & ((1u << M.MBits) - 1);
  double V;
  if (Fmt == MxFormat::E4M3 && Exp == 15 && Man == 7)
    return NAN;
  if (Fmt == MxFormat::E5M2 && Exp == 31)
    V = Man == 0 ? INFINITY : NAN;
  else if (Exp == 0)
    V = std::ldexp(double(Man), 1 - M.Bias - M.MBits);
  else
    V = std::ldexp(double(Man + (1u << M.MBits)), int(Exp) - M.Bias - M.MBits);
  return Neg ? -V : V;
}

const double *mxValues(MxFormat Fmt) {
  static const auto Tables = [] {
    std::array<std::array<double, 256>, 5> T{};
    for (unsigned F = 0; F < 5; ++F)
      for (unsigned C = 0; C < 256; ++C)
        T[F][C] = decodeMx(MxFormat(F), C);
    return T;
  }();
  return Tables[unsigned(Fmt)].data();
}

double decodeE8M0(uint8_t E) { return E == 0xFF ? NAN : std::ldexp(1.0, int(E) - 127); }

/// RNE onto a format's grid; NaN, inf and magnitudes beyond Max give the
/// codes the format uses for them (sign kept).
static uint8_t encodeMini(double Y, MxFormat Fmt, double Max, uint8_t NanCode, uint8_t InfCode) {
  uint8_t Sign = std::signbit(Y) ? uint8_t(1u << (mxBits(Fmt) - 1)) : 0;
  if (std::isnan(Y))
    return Sign | NanCode;
  if (std::isinf(Y))
    return Sign | InfCode;
  double Q = roundMini(std::fabs(Y), miniOf(Fmt));
  if (Q > Max)
    return Sign | InfCode;
  return Sign | encodeMag(Q, miniOf(Fmt));
}

// fp4 saturates, NaN included: [U] AMD's host emulation and gem5 give the
// max; not hardware-checked.
uint8_t encodeFp4(double Y) { return encodeMini(Y, MxFormat::E2M1, 6.0, 0x7, 0x7); }

// E4M3 has no inf: overflow is NaN (not saturating).
uint8_t encodeE4M3(double Y) { return encodeMini(Y, MxFormat::E4M3, 448.0, 0x7F, 0x7F); }

// E5M2 overflows to inf.
uint8_t encodeE5M2(double Y) { return encodeMini(Y, MxFormat::E5M2, 57344.0, 0x7F, 0x7C); }

} // namespace moegen::emu
