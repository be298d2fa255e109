//===- Tensor.h - Host tensors in packed formats ----------------*- C++ -*-===//
//
// A HostTensor is a row-major host buffer in one element format plus, for the
// MX formats, one e8m0 scale per 32 consecutive elements of the last
// dimension. It is what the reference consumes and produces and what the
// kernels' buffers are compared against. Values leave a packed buffer only
// through decode().
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_NUMERICS_TENSOR_H
#define MOEGEN_RUNTIME_NUMERICS_TENSOR_H

#include "compiler/spec/Spec.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace moegen::num {

enum class ElemFormat : uint8_t {
  F32,   // little-endian IEEE binary32
  F64,   // little-endian IEEE binary64 (reference outputs only)
  BF16,  // little-endian 16-bit words
  MXFP8, // f8E4M3FN bytes + e8m0 scales per 32
  MXFP4, // fp4x2 bytes (element 2j low nibble) + e8m0 scales per 32
  FP8,   // f8E4M3FN bytes, no scales (decodes unscaled)
  FP4,   // fp4x2 bytes, no scales
};

constexpr int64_t kMxBlock = 32;

llvm::StringRef toString(ElemFormat f);
std::optional<ElemFormat> parseElemFormat(llvm::StringRef s);
bool isMx(ElemFormat f);
/// The element format a spec dtype is stored in.
ElemFormat elemFormatOf(DType t);

struct HostTensor {
  ElemFormat format = ElemFormat::F32;
  std::vector<int64_t> shape;  // logical element shape
  std::vector<uint8_t> data;   // packed elements
  std::vector<uint8_t> scales; // e8m0 [rows(), cols()/32] when isMx(format)

  int64_t numElements() const;
  int64_t cols() const { return shape.empty() ? 1 : shape.back(); }
  int64_t rows() const { return cols() == 0 ? 0 : numElements() / cols(); }
  int64_t scaleCols() const { return cols() / kMxBlock; }
};

/// Bytes the packed data of `n` elements occupies.
int64_t packedBytes(ElemFormat f, int64_t n);

/// Checks that data (and scales) have the sizes the shape implies.
llvm::Error verifyTensor(const HostTensor &t, llvm::StringRef what);

/// Decodes every element to f32 (F64 is rounded to f32). MX elements are
/// code value x 2^(e-127), exact in f32; a NaN scale makes its block NaN.
std::vector<float> decode(const HostTensor &t);
/// Decodes to f64 (exact for every format).
std::vector<double> decodeF64(const HostTensor &t);
/// Decodes rows [row0, row0+count) only.
std::vector<float> decodeRows(const HostTensor &t, int64_t row0, int64_t count);
/// The same values written to out (count x cols() floats).
void decodeRowsInto(const HostTensor &t, int64_t row0, int64_t count, float *out);

HostTensor makeF32(std::vector<int64_t> shape, llvm::ArrayRef<float> values);
HostTensor makeF64(std::vector<int64_t> shape, llvm::ArrayRef<double> values);
/// Rounds each value to bf16 (RNE).
HostTensor makeBf16(std::vector<int64_t> shape, llvm::ArrayRef<float> values);

} // namespace moegen::num

#endif // MOEGEN_RUNTIME_NUMERICS_TENSOR_H
