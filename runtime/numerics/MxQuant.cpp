//===- MxQuant.cpp - MX block quantization --------------------------------===//

#include "runtime/numerics/MxQuant.h"

#include "runtime/numerics/Formats.h"

#include "llvm/ADT/StringSwitch.h"

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
  int e;
  (void)std::frexp(a, &e);
  return e - 1;
}

} // namespace

uint8_t mxScaleFor(llvm::ArrayRef<float> block, ElemFormat elem, ScaleRounding mode) {
  const bool fp4 = elem == ElemFormat::MXFP4;
  const double maxElem = fp4 ? kF4E2M1Max : kF8E4M3Max;
  const int emax = fp4 ? 2 : 8;
  float amax = 0.0f;
  for (float v : block) {
    if (!std::isfinite(v))
      return kE8M0NaN;
    amax = std::fmax(amax, std::fabs(v));
  }
  if (amax == 0.0f)
    return 0;
  switch (mode) {
  case ScaleRounding::RoundUp: {
    // Smallest s with maxElem * 2^s >= amax, found exactly (no rounded
    // division), which is what aiter's f32 ceil_pow2(amax / max) gives.
    int s = floorLog2(amax) - emax;
    while (std::ldexp(maxElem, s) < amax)
      ++s;
    while (std::ldexp(maxElem, s - 1) >= amax)
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
  const double factor = std::ldexp(1.0, e == kE8M0NaN ? 0 : 127 - static_cast<int>(e));
  for (size_t i = 0; i < block.size(); ++i) {
    double scaled = static_cast<double>(block[i]) * factor; // exact in f64
    codes[i] =
        elem == ElemFormat::MXFP4 ? encodeF4E2M1(scaled) : encodeF8E4M3(scaled, Overflow::Saturate);
  }
  return e;
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
  const int64_t rows = t.rows();
  t.scales.resize(rows * t.scaleCols());
  std::vector<uint8_t> codes(values.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < t.scaleCols(); ++b) {
      int64_t off = r * cols + b * kMxBlock;
      t.scales[r * t.scaleCols() + b] =
          quantizeMxBlock(values.slice(off, kMxBlock), elem, mode,
                          llvm::MutableArrayRef<uint8_t>(codes).slice(off, kMxBlock));
    }
  t.data = elem == ElemFormat::MXFP4 ? packFp4x2(codes) : std::move(codes);
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
