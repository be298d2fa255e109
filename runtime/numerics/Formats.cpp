//===- Formats.cpp - Element and scale formats ----------------------------===//

#include "runtime/numerics/Formats.h"

#include <bit>
#include <cmath>
#include <limits>

namespace moegen::num {

namespace {

/// Rounds a finite a >= 0 to nearest-even in a minifloat with `mbits`
/// mantissa bits and exponent bias `bias` (subnormals included). Returns the
/// unsigned code (exponent field << mbits | mantissa) without any overflow
/// check: codes above the format's largest finite value mean overflow.
uint32_t roundMagnitude(double a, int mbits, int bias) {
  if (a == 0.0)
    return 0;
  const int minExp = 1 - bias;
  int e;
  (void)std::frexp(a, &e);
  int ex = e - 1; // floor(log2 a)
  if (ex < minExp) {
    // Subnormal: count units of 2^(minExp - mbits). A carry into the
    // smallest normal yields exactly its code.
    return static_cast<uint32_t>(std::nearbyint(std::ldexp(a, mbits - minExp)));
  }
  auto m = static_cast<uint32_t>(std::nearbyint(std::ldexp(a, mbits - ex)));
  if (m == (2u << mbits)) { // rounded up to the next binade
    ++ex;
    m >>= 1;
  }
  return (static_cast<uint32_t>(ex + bias) << mbits) | (m - (1u << mbits));
}

} // namespace

uint16_t encodeBf16(float x) {
  uint32_t bits = std::bit_cast<uint32_t>(x);
  if (std::isnan(x))
    return static_cast<uint16_t>((bits >> 16) | 0x0040);
  uint32_t lsb = (bits >> 16) & 1;
  return static_cast<uint16_t>((bits + 0x7FFF + lsb) >> 16);
}

float decodeBf16(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

float roundToBf16(float x) { return decodeBf16(encodeBf16(x)); }

uint8_t encodeF8E4M3(double x, Overflow ov) {
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  if (std::isnan(x))
    return sign | 0x7F;
  double a = std::fabs(x);
  // 0x7E is 448; anything that rounds above it overflows. Huge values are
  // caught first so that the exponent arithmetic stays in range.
  uint32_t code = a > 1e6 ? 0xFFu : roundMagnitude(a, 3, 7);
  if (code > 0x7E)
    return sign | (ov == Overflow::Saturate ? 0x7E : 0x7F);
  return sign | static_cast<uint8_t>(code);
}

float decodeF8E4M3(uint8_t code) {
  const float sign = (code & 0x80) ? -1.0f : 1.0f;
  const int e = (code >> 3) & 0xF;
  const int m = code & 0x7;
  if (e == 0xF && m == 0x7)
    return std::numeric_limits<float>::quiet_NaN();
  if (e == 0)
    return sign * std::ldexp(static_cast<float>(m), -9);
  return sign * std::ldexp(1.0f + static_cast<float>(m) / 8.0f, e - 7);
}

uint8_t encodeF4E2M1(double x) { return encodeF4E2M1Of(x); }

float decodeF4E2M1(uint8_t code) {
  static constexpr float kValues[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  float v = kValues[code & 0x7];
  return (code & 0x8) ? -v : v;
}

float decodeE8M0(uint8_t e) {
  if (e == kE8M0NaN)
    return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, static_cast<int>(e) - 127);
}

uint8_t e8m0FromExponent(int unbiasedExp) {
  if (unbiasedExp < -127)
    return 0;
  if (unbiasedExp > 127)
    return kE8M0NaN;
  return static_cast<uint8_t>(unbiasedExp + 127);
}

uint8_t encodeE8M0(float scale) {
  return static_cast<uint8_t>((std::bit_cast<uint32_t>(scale) >> 23) & 0xFF);
}

std::vector<uint8_t> packFp4x2(llvm::ArrayRef<uint8_t> codes) {
  std::vector<uint8_t> out((codes.size() + 1) / 2, 0);
  for (size_t i = 0; i < codes.size(); ++i)
    out[i / 2] |= static_cast<uint8_t>((codes[i] & 0xF) << (i % 2 == 0 ? 0 : 4));
  return out;
}

std::vector<uint8_t> unpackFp4x2(llvm::ArrayRef<uint8_t> packed, size_t count) {
  std::vector<uint8_t> out(count);
  for (size_t i = 0; i < count; ++i)
    out[i] = fp4CodeAt(packed, i);
  return out;
}

} // namespace moegen::num
