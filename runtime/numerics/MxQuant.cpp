//===- MxQuant.cpp - MX block quantization --------------------------------===//

#include "runtime/numerics/MxQuant.h"

#include "runtime/numerics/Formats.h"

#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace moegen::num {

llvm::StringRef toString(ScaleRounding r) {
  switch (r) {
  case ScaleRounding::RoundUp:
    return "roundup";
  case ScaleRounding::Ocp:
    return "ocp";
  case ScaleRounding::Even:
    return "even";
  case ScaleRounding::FusedEpilogue:
    return "fused_epilogue";
  }
  return "?";
}

std::optional<ScaleRounding> parseScaleRounding(llvm::StringRef s) {
  return llvm::StringSwitch<std::optional<ScaleRounding>>(s)
      .Case("roundup", ScaleRounding::RoundUp)
      .Case("ocp", ScaleRounding::Ocp)
      .Case("even", ScaleRounding::Even)
      .Case("fused_epilogue", ScaleRounding::FusedEpilogue)
      .Default(std::nullopt);
}

namespace {

int floorLog2(float a) { // a > 0, finite
  const uint32_t bits = std::bit_cast<uint32_t>(a);
  if (bits >= 0x00800000u) // normal: the biased exponent field
    return static_cast<int>(bits >> 23) - 127;
  int e;
  (void)std::frexp(a, &e);
  return e - 1;
}

/// 2^s for |s| <= 1022, exact (std::ldexp is a library call per value).
double pow2(int s) { return std::bit_cast<double>(static_cast<uint64_t>(1023 + s) << 52); }

} // namespace

uint8_t mxScaleFor(llvm::ArrayRef<float> block, ElemFormat elem, ScaleRounding mode) {
  const bool fp4 = elem == ElemFormat::MXFP4;
  const double maxElem = fp4 ? kF4E2M1Max : kF8E4M3Max;
  const int emax = fp4 ? 2 : 8;
  // Branch-free over the block so that it vectorizes: the largest magnitude
  // and whether any value is inf or NaN (all exponent bits set).
  uint32_t amaxBits = 0, nonFinite = 0;
  for (float v : block) {
    const uint32_t mag = std::bit_cast<uint32_t>(v) & 0x7FFFFFFFu;
    nonFinite |= static_cast<uint32_t>(mag >= 0x7F800000u);
    amaxBits = std::max(amaxBits, mag); // finite magnitudes order as their bits
  }
  if (nonFinite)
    return kE8M0NaN;
  const float amax = std::bit_cast<float>(amaxBits);
  if (amax == 0.0f)
    return 0;
  switch (mode) {
  case ScaleRounding::RoundUp: {
    // Smallest s with maxElem * 2^s >= amax, found exactly (no rounded
    // division), which is what aiter's f32 ceil_pow2(amax / max) gives.
    int s = floorLog2(amax) - emax;
    // maxElem * 2^s is exact: s stays within [-160, 130].
    while (maxElem * pow2(s) < amax)
      ++s;
    while (maxElem * pow2(s - 1) >= amax)
      --s;
    return e8m0FromExponent(s);
  }
  case ScaleRounding::Ocp:
    return e8m0FromExponent(floorLog2(amax) - emax);
  case ScaleRounding::Even: {
    uint32_t bits = (std::bit_cast<uint32_t>(amax) + 0x200000u) & 0xFF800000u;
    float rounded = std::bit_cast<float>(bits);
    if (!std::isfinite(rounded))
      return kE8M0NaN;
    // A subnormal amax can round to zero mantissa and exponent: byte 0.
    if (rounded == 0.0f)
      return 0;
    return e8m0FromExponent(floorLog2(rounded) - emax);
  }
  case ScaleRounding::FusedEpilogue: {
    uint32_t bits = (std::bit_cast<uint32_t>(amax) + 0x400000u) & 0xFF800000u;
    int biased = static_cast<int>(bits >> 23) - emax;
    return static_cast<uint8_t>(biased < 0 ? 0 : (biased > 254 ? 254 : biased));
  }
  }
  return kE8M0NaN;
}

uint8_t quantizeMxBlock(llvm::ArrayRef<float> block, ElemFormat elem, ScaleRounding mode,
                        llvm::MutableArrayRef<uint8_t> codes) {
  const uint8_t e = mxScaleFor(block, elem, mode);
  // With a NaN scale the codes are irrelevant; quantize unscaled.
  const double factor = pow2(e == kE8M0NaN ? 0 : 127 - static_cast<int>(e));
  if (elem == ElemFormat::MXFP4) {
    // In f32, so that it vectorizes: the factor 2^(127-e) is an f32 (a
    // subnormal at worst) and the product is exact except where it is
    // subnormal, far below the first rounding threshold: the codes are the
    // f64 path's.
    const float f = static_cast<float>(factor);
    for (size_t i = 0; i < block.size(); ++i)
      codes[i] = encodeF4E2M1Of(block[i] * f);
    return e;
  }
  for (size_t i = 0; i < block.size(); ++i) {
    double scaled = static_cast<double>(block[i]) * factor; // exact in f64
    codes[i] =
        elem == ElemFormat::MXFP4 ? encodeF4E2M1(scaled) : encodeF8E4M3(scaled, Overflow::Saturate);
  }
  return e;
}

void quantizeMxInto(llvm::ArrayRef<float> values, ElemFormat elem, ScaleRounding mode,
                    uint8_t *data, uint8_t *scales) {
  const int64_t blocks = static_cast<int64_t>(values.size()) / kMxBlock;
  const bool fp4 = elem == ElemFormat::MXFP4;
  // Block by block, the codes packed straight into data (fp4x2: element 2j
  // in the low nibble).
  uint8_t codes[kMxBlock];
  for (int64_t b = 0; b < blocks; ++b) {
    scales[b] = quantizeMxBlock(values.slice(b * kMxBlock, kMxBlock), elem, mode, codes);
    if (fp4)
      for (int64_t j = 0; j < kMxBlock / 2; ++j)
        data[b * kMxBlock / 2 + j] = static_cast<uint8_t>(codes[2 * j] | (codes[2 * j + 1] << 4));
    else
      std::copy_n(codes, kMxBlock, &data[b * kMxBlock]);
  }
}

llvm::Expected<HostTensor> quantizeMx(llvm::ArrayRef<float> values, std::vector<int64_t> shape,
                                      ElemFormat elem, ScaleRounding mode) {
  if (!isMx(elem))
    return llvm::createStringError("quantizeMx: target %s is not an MX format",
                                   toString(elem).str().c_str());
  HostTensor t;
  t.format = elem;
  t.shape = std::move(shape);
  if (t.numElements() != static_cast<int64_t>(values.size()))
    return llvm::createStringError("quantizeMx: %zu values for a shape of %lld elements",
                                   values.size(), static_cast<long long>(t.numElements()));
  const int64_t cols = t.cols();
  if (cols % kMxBlock != 0)
    return llvm::createStringError("quantizeMx: last dimension %lld is not a multiple of 32",
                                   static_cast<long long>(cols));
  t.scales.resize(t.rows() * t.scaleCols());
  t.data.resize(packedBytes(elem, t.numElements()));
  quantizeMxInto(values, elem, mode, t.data.data(), t.scales.data());
  return t;
}

llvm::Expected<HostTensor> convertTo(llvm::ArrayRef<float> values, std::vector<int64_t> shape,
                                     ElemFormat target, ScaleRounding mode) {
  switch (target) {
  case ElemFormat::BF16:
    return makeBf16(std::move(shape), values);
  case ElemFormat::F32:
    return makeF32(std::move(shape), values);
  case ElemFormat::MXFP4:
  case ElemFormat::MXFP8:
    return quantizeMx(values, std::move(shape), target, mode);
  default:
    return llvm::createStringError("cannot convert to %s", toString(target).str().c_str());
  }
}

} // namespace moegen::num
