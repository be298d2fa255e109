//===- Formats.h - Number formats of gfx950 (bf16, f16, OCP fp8/fp4, e8m0) -===//
//
// Decoders and RNE encoders written from the OCP MX v1.0 format tables and the
// gfx950 conversion rules (docs/gfx950-facts.md §4, §5). Independent of runtime/numerics.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_EMULATOR_FORMATS_H
#define MOEGEN_EMULATOR_FORMATS_H

#include <bit>
#include <cstdint>

namespace moegen::emu {

inline float bitsToFloat(uint32_t B) { return std::bit_cast<float>(B); }
inline uint32_t floatToBits(float F) { return std::bit_cast<uint32_t>(F); }
inline double bitsToDouble(uint64_t B) { return std::bit_cast<double>(B); }
inline uint64_t doubleToBits(double D) { return std::bit_cast<uint64_t>(D); }

/// 2^E for |E| <= 1022, exact; multiplying by it is exact while the product
/// stays a normal double.
inline double pow2(int E) { return bitsToDouble(uint64_t(1023 + E) << 52); }

inline float bf16ToFloat(uint16_t H) { return bitsToFloat(uint32_t(H) << 16); }
uint16_t floatToBf16(float F); // round to nearest even, NaN stays NaN
float halfToFloat(uint16_t H);
uint16_t floatToHalf(float F); // round to nearest even
uint16_t doubleToHalf(double D);
uint16_t doubleToBf16(double D); // round to nearest even, overflow to inf

/// Element formats of the f8f6f4 MFMA operands (cbsz/blgp codes) and the
/// scaled conversions.
enum class MxFormat : uint8_t { E4M3 = 0, E5M2 = 1, E2M3 = 2, E3M2 = 3, E2M1 = 4 };

/// Decodes one element (low bits of Code) to its exact value (NaN/inf kept).
double decodeMx(MxFormat Fmt, uint32_t Code);
/// decodeMx of every code of a format: Table[Code] for Code < 256 (the bits
/// above the format's width are ignored).
const double *mxValues(MxFormat Fmt);
/// Bits per element of a format.
unsigned mxBits(MxFormat Fmt);

/// E8M0 scale: 2^(E-127); 0xFF is NaN.
double decodeE8M0(uint8_t E);

/// gfx950 narrowing conversions of an already scaled value, RNE.
/// fp4 saturates to +-6 (NaN gives +-6, [U]); E4M3 overflow gives NaN (no
/// saturation); E5M2 overflow gives inf.
uint8_t encodeFp4(double Y);
uint8_t encodeE4M3(double Y);
uint8_t encodeE5M2(double Y);

/// The factor 2^(es-127) from the exponent field of an f32 scale operand;
/// returns false when es == 255 (NaN result).
inline bool scaleFactor(float Scale, int &Exp) {
  int Es = int((floatToBits(Scale) >> 23) & 0xFF);
  Exp = Es - 127;
  return Es != 255;
}

} // namespace moegen::emu

#endif
