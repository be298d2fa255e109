//===- Npy.h - .npy files and tensors on disk -------------------*- C++ -*-===//
//
// Writes and reads NumPy .npy files (format 1.0, little-endian, C order), so
// any tool can check moegen's tensors. A HostTensor is stored as:
//   f32 / f64    NAME.npy  <f4 / <f8 with the logical shape
//   bf16         NAME.npy  <u2 (raw bf16 words) + NAME.json
//   mxfp4/mxfp8  NAME.npy  |u1 packed bytes [rows, packed cols]
//                NAME.scales.npy |u1 e8m0 [rows, cols/32] + NAME.json
// The side JSON records {"format", "logical_shape", "packing", "scales",
// "scale_block"}; fp4 packing is "fp4x2: element 2j in the low nibble".
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_NUMERICS_NPY_H
#define MOEGEN_RUNTIME_NUMERICS_NPY_H

#include "runtime/numerics/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace moegen::num {

struct NpyArray {
  std::string descr; // e.g. "<f4", "|u1", "<i4"
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

/// The bytes of a .npy file.
std::string encodeNpy(llvm::StringRef descr, llvm::ArrayRef<int64_t> shape,
                      llvm::ArrayRef<uint8_t> data);
/// Parses .npy bytes; errors name `bufferName` and what is wrong.
llvm::Expected<NpyArray> parseNpy(llvm::StringRef bytes, llvm::StringRef bufferName);

llvm::Error writeNpy(llvm::StringRef path, llvm::StringRef descr, llvm::ArrayRef<int64_t> shape,
                     llvm::ArrayRef<uint8_t> data);
llvm::Expected<NpyArray> readNpy(llvm::StringRef path);

template <typename T>
llvm::Error writeNpyOf(llvm::StringRef path, llvm::StringRef descr, llvm::ArrayRef<int64_t> shape,
                       llvm::ArrayRef<T> values) {
  return writeNpy(path, descr, shape,
                  llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(values.data()),
                                          values.size() * sizeof(T)));
}

/// Writes NAME.npy (+ NAME.scales.npy, NAME.json) into dir; returns the
/// files written through `written` when given.
llvm::Error writeTensor(llvm::StringRef dir, llvm::StringRef name, const HostTensor &t,
                        std::vector<std::string> *written = nullptr);
/// Reads a tensor written by writeTensor.
llvm::Expected<HostTensor> readTensor(llvm::StringRef dir, llvm::StringRef name);

} // namespace moegen::num

#endif // MOEGEN_RUNTIME_NUMERICS_NPY_H
