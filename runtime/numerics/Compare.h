//===- Compare.h - Decode-first comparison metrics --------------*- C++ -*-===//
//
// Two buffers are compared only after both are decoded to values (never as
// raw bytes: one fp4 code step is 1 in the low nibble but 16 in the high
// one). Metrics, over the rows a mask selects (padding rows of a sorted
// layout are excluded, never counted as matches):
//
//   cosineDiff   aiter's 1 - 2*sum(x*y) / sum(x^2 + y^2)  (0 when both are
//                all zero)
//   relFrobenius ||x - y|| / ||x||  (x = reference; ||x - y|| if x is zero)
//   maxAbs       max |x - y|
//   mismatch     fraction of elements with |x - y| > atol + rtol * |x|
//
// Any NaN or inf in either operand is a failure, counted in nonFinite.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_NUMERICS_COMPARE_H
#define MOEGEN_RUNTIME_NUMERICS_COMPARE_H

#include "runtime/numerics/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace moegen::num {

struct CompareOptions {
  double rtol = 1e-2;
  double atol = 1e-2;
  double maxMismatch = 0.0;   // pass if mismatch fraction <= this
  double maxCosineDiff = 1.0; // pass if cosineDiff <= this (1.0: not checked)
};

struct CompareResult {
  int64_t compared = 0; // elements compared
  int64_t excludedRows = 0;
  int64_t nonFinite = 0; // elements with NaN/inf in either operand
  int64_t mismatches = 0;
  double cosineDiff = 0.0;
  double relFrobenius = 0.0;
  double maxAbs = 0.0;
  int64_t maxAbsIndex = -1;
  double mismatchFraction() const {
    return compared ? static_cast<double>(mismatches) / compared : 0.0;
  }
  bool passed = false;
  std::string summary() const;
};

/// Compares decoded values; `rowLen` elements per row and rowMask (empty:
/// all rows) selecting the rows to compare.
CompareResult compareValues(llvm::ArrayRef<double> ref, llvm::ArrayRef<double> test, int64_t rowLen,
                            const std::vector<bool> &rowMask, const CompareOptions &opts);

/// Decodes both tensors (any formats) and compares them; shapes must have the
/// same element count and row length.
llvm::Expected<CompareResult> compareTensors(const HostTensor &ref, const HostTensor &test,
                                             const std::vector<bool> &rowMask,
                                             const CompareOptions &opts);

} // namespace moegen::num

#endif // MOEGEN_RUNTIME_NUMERICS_COMPARE_H
