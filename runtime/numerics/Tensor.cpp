//===- Tensor.cpp - Host tensors in packed formats ------------------------===//

#include "runtime/numerics/Tensor.h"

#include "runtime/numerics/Formats.h"

#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace moegen::num {

llvm::StringRef toString(ElemFormat f) {
  switch (f) {
  case ElemFormat::F32:
    return "f32";
  case ElemFormat::F64:
    return "f64";
  case ElemFormat::BF16:
    return "bf16";
  case ElemFormat::MXFP8:
    return "mxfp8";
  case ElemFormat::MXFP4:
    return "mxfp4";
  case ElemFormat::FP8:
    return "fp8";
  case ElemFormat::FP4:
    return "fp4";
  }
  return "?";
}

std::optional<ElemFormat> parseElemFormat(llvm::StringRef s) {
  return llvm::StringSwitch<std::optional<ElemFormat>>(s)
      .Case("f32", ElemFormat::F32)
      .Case("f64", ElemFormat::F64)
      .Case("bf16", ElemFormat::BF16)
      .Case("mxfp8", ElemFormat::MXFP8)
      .Case("mxfp4", ElemFormat::MXFP4)
      .Case("fp8", ElemFormat::FP8)
      .Case("fp4", ElemFormat::FP4)
      .Default(std::nullopt);
}

bool isMx(ElemFormat f) { return f == ElemFormat::MXFP8 || f == ElemFormat::MXFP4; }

ElemFormat elemFormatOf(DType t) {
  switch (t) {
  case DType::BF16:
    return ElemFormat::BF16;
  case DType::MXFP8:
    return ElemFormat::MXFP8;
  case DType::MXFP4:
    return ElemFormat::MXFP4;
  case DType::F32:
    return ElemFormat::F32;
  }
  return ElemFormat::F32;
}

int64_t HostTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t packedBytes(ElemFormat f, int64_t n) {
  switch (f) {
  case ElemFormat::F32:
    return 4 * n;
  case ElemFormat::F64:
    return 8 * n;
  case ElemFormat::BF16:
    return 2 * n;
  case ElemFormat::MXFP8:
  case ElemFormat::FP8:
    return n;
  case ElemFormat::MXFP4:
  case ElemFormat::FP4:
    return (n + 1) / 2;
  }
  return 0;
}

llvm::Error verifyTensor(const HostTensor &t, llvm::StringRef what) {
  for (int64_t d : t.shape)
    if (d < 0)
      return llvm::createStringError("%s: negative dimension %lld", what.str().c_str(),
                                     static_cast<long long>(d));
  int64_t n = t.numElements();
  int64_t want = packedBytes(t.format, n);
  if (static_cast<int64_t>(t.data.size()) != want)
    return llvm::createStringError("%s: %s data holds %zu bytes, shape needs %lld",
                                   what.str().c_str(), toString(t.format).str().c_str(),
                                   t.data.size(), static_cast<long long>(want));
  if ((t.format == ElemFormat::MXFP4 || t.format == ElemFormat::FP4) && t.cols() % 2 != 0)
    return llvm::createStringError("%s: fp4 rows need an even length, got %lld", what.str().c_str(),
                                   static_cast<long long>(t.cols()));
  if (isMx(t.format)) {
    if (t.cols() % kMxBlock != 0)
      return llvm::createStringError("%s: MX last dimension %lld is not a multiple of 32",
                                     what.str().c_str(), static_cast<long long>(t.cols()));
    int64_t wantScales = t.rows() * t.scaleCols();
    if (static_cast<int64_t>(t.scales.size()) != wantScales)
      return llvm::createStringError("%s: %zu scale bytes, shape needs %lld", what.str().c_str(),
                                     t.scales.size(), static_cast<long long>(wantScales));
  }
  return llvm::Error::success();
}

namespace {

// Element i of the packed data without any scale.
double rawElement(const HostTensor &t, int64_t i) {
  switch (t.format) {
  case ElemFormat::F32: {
    float v;
    std::memcpy(&v, &t.data[4 * i], 4);
    return v;
  }
  case ElemFormat::F64: {
    double v;
    std::memcpy(&v, &t.data[8 * i], 8);
    return v;
  }
  case ElemFormat::BF16:
    return decodeBf16(static_cast<uint16_t>(t.data[2 * i] | (t.data[2 * i + 1] << 8)));
  case ElemFormat::MXFP8:
  case ElemFormat::FP8:
    return decodeF8E4M3(t.data[i]);
  case ElemFormat::MXFP4:
  case ElemFormat::FP4:
    return decodeF4E2M1(fp4CodeAt(t.data, i));
  }
  return 0.0;
}

/// Code -> value tables of the 8-bit and 4-bit formats.
struct CodeTables {
  float f8[256];
  float f4[16];
  CodeTables() {
    for (int c = 0; c < 256; ++c)
      f8[c] = decodeF8E4M3(static_cast<uint8_t>(c));
    for (int c = 0; c < 16; ++c)
      f4[c] = decodeF4E2M1(static_cast<uint8_t>(c));
  }
};

const CodeTables &tables() {
  static const CodeTables t;
  return t;
}

template <typename T> void decodeInto(const HostTensor &t, int64_t first, int64_t count, T *out) {
  if (!isMx(t.format)) {
    for (int64_t j = 0; j < count; ++j)
      out[j] = static_cast<T>(rawElement(t, first + j));
    return;
  }
  // value = code value x 2^(e-127): a product by a power of two, exact in
  // f32 (the smallest result, 2^-9 x 2^-127, is an f32 subnormal).
  const CodeTables &tab = tables();
  const bool fp4 = t.format == ElemFormat::MXFP4;
  const int64_t cols = t.cols(), sc = t.scaleCols();
  // Block by block: one scale per run of elements.
  for (int64_t i = first, end = first + count; i < end;) {
    const int64_t row = i / cols, col = i % cols;
    const int64_t stop = std::min(end, row * cols + (col / kMxBlock + 1) * kMxBlock);
    const float scale = decodeE8M0(t.scales[row * sc + col / kMxBlock]); // NaN for 0xFF
    T *o = out + (i - first);
    if (fp4) {
      // A byte at a time where the run starts on one (element 2j low nibble).
      if (i % 2 && i < stop)
        *o++ = static_cast<T>(tab.f4[fp4CodeAt(t.data, i++)] * scale);
      for (const uint8_t *b = t.data.data() + i / 2; i + 1 < stop; i += 2, ++b) {
        *o++ = static_cast<T>(tab.f4[*b & 0xF] * scale);
        *o++ = static_cast<T>(tab.f4[*b >> 4] * scale);
      }
      if (i < stop)
        *o++ = static_cast<T>(tab.f4[fp4CodeAt(t.data, i++)] * scale);
    } else
      for (; i < stop; ++i)
        *o++ = static_cast<T>(tab.f8[t.data[i]] * scale);
  }
}

} // namespace

std::vector<float> decode(const HostTensor &t) {
  std::vector<float> out(t.numElements());
  decodeInto(t, 0, t.numElements(), out.data());
  return out;
}

std::vector<double> decodeF64(const HostTensor &t) {
  std::vector<double> out(t.numElements());
  decodeInto(t, 0, t.numElements(), out.data());
  return out;
}

std::vector<float> decodeRows(const HostTensor &t, int64_t row0, int64_t count) {
  std::vector<float> out(count * t.cols());
  decodeRowsInto(t, row0, count, out.data());
  return out;
}

void decodeRowsInto(const HostTensor &t, int64_t row0, int64_t count, float *out) {
  decodeInto(t, row0 * t.cols(), count * t.cols(), out);
}

/// A tensor of `format` holding the bytes of `values` as they are.
template <class T>
static HostTensor makeFromHost(ElemFormat format, std::vector<int64_t> shape,
                               llvm::ArrayRef<T> values) {
  HostTensor t;
  t.format = format;
  t.shape = std::move(shape);
  t.data.resize(values.size() * sizeof(T));
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

HostTensor makeF32(std::vector<int64_t> shape, llvm::ArrayRef<float> values) {
  return makeFromHost(ElemFormat::F32, std::move(shape), values);
}

HostTensor makeF64(std::vector<int64_t> shape, llvm::ArrayRef<double> values) {
  return makeFromHost(ElemFormat::F64, std::move(shape), values);
}

HostTensor makeBf16(std::vector<int64_t> shape, llvm::ArrayRef<float> values) {
  HostTensor t;
  t.format = ElemFormat::BF16;
  t.shape = std::move(shape);
  t.data.resize(values.size() * 2);
  for (size_t i = 0; i < values.size(); ++i) {
    uint16_t b = encodeBf16(values[i]);
    t.data[2 * i] = static_cast<uint8_t>(b & 0xFF);
    t.data[2 * i + 1] = static_cast<uint8_t>(b >> 8);
  }
  return t;
}

} // namespace moegen::num
