//===- Formats.h - Element and scale formats --------------------*- C++ -*-===//
//
// Encoders and decoders of the narrow formats moegen kernels read and write.
// Every encoder rounds once, to nearest with ties to even (RNE), from the
// exact value of its argument; the overflow rule of each format is:
//
//   bf16      1-8-7, bias 127. Overflow rounds to +-inf (IEEE); NaN stays a
//             quiet NaN with its sign (0x7FC0 | sign).
//   f8E4M3FN  1-4-3, bias 7, OCP "FN": no inf; NaN = 0x7F / 0xFF; max 448.
//             |x| <= 464 rounds to at most 448 (464 is a tie, taken to even).
//             Above that: Saturate gives +-448, NonSaturate gives NaN (what
//             v_cvt_scalef32_pk_fp8_f32 does). inf saturates / gives NaN the
//             same way; NaN gives NaN.
//   f4E2M1FN  1-2-1, bias 1, no inf or NaN; codes 0..7 = {0, 0.5, 1, 1.5, 2,
//             3, 4, 6}, bit 3 = sign. Always saturates (|x| > 5 gives 6,
//             inf too). NaN gives +-6 (code 0x7 | sign), as gfx950's host
//             emulation does.
//   e8m0      unsigned exponent, bias 127: byte e is 2^(e-127); 0xFF is NaN.
//             There is no zero: byte 0 is 2^-127 (an f32 subnormal).
//
// fp4x2 packing: element 2j lives in the low nibble (bits 3:0) of byte j,
// element 2j+1 in the high nibble (bits 7:4).
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_NUMERICS_FORMATS_H
#define MOEGEN_RUNTIME_NUMERICS_FORMATS_H

#include "llvm/ADT/ArrayRef.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace moegen::num {

enum class Overflow : uint8_t { Saturate, NonSaturate };

uint16_t encodeBf16(float x);
float decodeBf16(uint16_t bits);
/// bf16 rounding of an f32 value, returned as f32.
float roundToBf16(float x);

uint8_t encodeF8E4M3(double x, Overflow ov = Overflow::Saturate);
float decodeF8E4M3(uint8_t code);
constexpr float kF8E4M3Max = 448.0f;

uint8_t encodeF4E2M1(double x);   // returns the 4-bit code in bits 3:0
/// encodeF4E2M1 for f32 or f64 (its thresholds are exact in both), inline so
/// that loops over blocks vectorize. RNE over {0, 0.5, 1, 1.5, 2, 3, 4, 6}:
/// each midpoint goes to the neighbour with the even code; the code counts
/// the thresholds |x| passes (branch-free), saturating to 6 above 5 (inf
/// included); NaN keeps its sign and gives code 7.
template <class T> inline uint8_t encodeF4E2M1Of(T x) {
  const T a = std::fabs(x);
  const int code = (a > T(0.25)) + (a >= T(0.75)) + (a > T(1.25)) + (a >= T(1.75)) + (a > T(2.5)) +
                   (a >= T(3.5)) + (a > T(5.0));
  const uint8_t sign = std::signbit(x) ? 0x8 : 0x0;
  return static_cast<uint8_t>(sign | (std::isnan(x) ? 0x7 : code));
}
float decodeF4E2M1(uint8_t code); // uses bits 3:0 only
constexpr float kF4E2M1Max = 6.0f;

constexpr uint8_t kE8M0NaN = 0xFF;
float decodeE8M0(uint8_t e);
/// The byte of 2^unbiasedExp: below -127 clamps to byte 0, above 127 is NaN.
uint8_t e8m0FromExponent(int unbiasedExp);
/// What the hardware reads from an f32 scale operand: its exponent field.
/// NaN and inf give 0xFF; zero and f32 subnormals give byte 0.
uint8_t encodeE8M0(float scale);

/// Packs 4-bit codes two per byte (element 2j low). An odd count leaves the
/// last high nibble zero.
std::vector<uint8_t> packFp4x2(llvm::ArrayRef<uint8_t> codes);
/// The code of element i of a packed fp4x2 buffer.
inline uint8_t fp4CodeAt(llvm::ArrayRef<uint8_t> packed, size_t i) {
  uint8_t b = packed[i / 2];
  return (i % 2 == 0) ? (b & 0xF) : (b >> 4);
}
std::vector<uint8_t> unpackFp4x2(llvm::ArrayRef<uint8_t> packed, size_t count);

} // namespace moegen::num

#endif // MOEGEN_RUNTIME_NUMERICS_FORMATS_H
