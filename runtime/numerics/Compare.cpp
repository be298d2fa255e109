//===- Compare.cpp - Decode-first comparison metrics ----------------------===//

#include "runtime/numerics/Compare.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace moegen::num {

CompareResult compareValues(llvm::ArrayRef<double> ref, llvm::ArrayRef<double> test, int64_t rowLen,
                            const std::vector<bool> &rowMask, const CompareOptions &opts) {
  CompareResult r;
  double sxy = 0, sxx = 0, syy = 0, sdd = 0;
  const int64_t n = static_cast<int64_t>(std::min(ref.size(), test.size()));
  for (int64_t i = 0; i < n; ++i) {
    int64_t row = rowLen > 0 ? i / rowLen : 0;
    if (!rowMask.empty() && (row >= static_cast<int64_t>(rowMask.size()) || !rowMask[row]))
      continue;
    ++r.compared;
    double x = ref[i], y = test[i];
    if (!std::isfinite(x) || !std::isfinite(y)) {
      ++r.nonFinite;
      ++r.mismatches;
      continue;
    }
    double d = std::fabs(x - y);
    sxy += x * y;
    sxx += x * x;
    syy += y * y;
    sdd += d * d;
    if (d > r.maxAbs || r.maxAbsIndex < 0) {
      r.maxAbs = d;
      r.maxAbsIndex = i;
    }
    if (d > opts.atol + opts.rtol * std::fabs(x))
      ++r.mismatches;
  }
  if (rowLen > 0 && !rowMask.empty())
    for (bool keep : rowMask)
      r.excludedRows += keep ? 0 : 1;
  double denom = sxx + syy;
  r.cosineDiff = denom == 0.0 ? 0.0 : 1.0 - 2.0 * sxy / denom;
  r.relFrobenius = sxx == 0.0 ? std::sqrt(sdd) : std::sqrt(sdd / sxx);
  r.passed = r.nonFinite == 0 && static_cast<int64_t>(ref.size()) == n &&
             static_cast<int64_t>(test.size()) == n && r.mismatchFraction() <= opts.maxMismatch &&
             r.cosineDiff <= opts.maxCosineDiff;
  return r;
}

llvm::Expected<CompareResult> compareTensors(const HostTensor &ref, const HostTensor &test,
                                             const std::vector<bool> &rowMask,
                                             const CompareOptions &opts) {
  if (auto err = verifyTensor(ref, "reference"))
    return std::move(err);
  if (auto err = verifyTensor(test, "test"))
    return std::move(err);
  if (ref.numElements() != test.numElements() || ref.cols() != test.cols())
    return llvm::createStringError(
        "compare: reference has %lld elements in rows of %lld, test "
        "%lld in rows of %lld",
        static_cast<long long>(ref.numElements()), static_cast<long long>(ref.cols()),
        static_cast<long long>(test.numElements()), static_cast<long long>(test.cols()));
  if (!rowMask.empty() && static_cast<int64_t>(rowMask.size()) != ref.rows())
    return llvm::createStringError("compare: row mask has %zu entries for %lld rows",
                                   rowMask.size(), static_cast<long long>(ref.rows()));
  std::vector<double> x = decodeF64(ref), y = decodeF64(test);
  return compareValues(x, y, ref.cols(), rowMask, opts);
}

std::string CompareResult::summary() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << (passed ? "PASS" : "FAIL") << ": compared " << compared << " (excluded rows "
     << excludedRows << "), non-finite " << nonFinite << ", cosine diff "
     << llvm::format("%.3e", cosineDiff) << ", rel frobenius " << llvm::format("%.3e", relFrobenius)
     << ", max abs " << llvm::format("%.3e", maxAbs) << " at " << maxAbsIndex << ", mismatch "
     << mismatches << " (" << llvm::format("%.4f", mismatchFraction()) << ")";
  return s;
}

} // namespace moegen::num
