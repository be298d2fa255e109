//===- TunedRows.h - Writing a tuner's results as aiter's table -*- C++ -*-===//
//
// A tuned row in aiter's columns (runtime/dispatch/TunedTable.h): the key of
// the untuned row plus gfx and cu_num, block_m, ksplit, us1/kernelName1/err1,
// us2/kernelName2/err2, us, tflops, bw and _tag. Merged into an existing
// table only where a row of the same key is slower (or absent).
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TUNE_TUNEDROWS_H
#define MOEGEN_TUNE_TUNEDROWS_H

#include "runtime/dispatch/TunedTable.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace moegen::tune {

struct TunedResult {
  dispatch::TunedKey key; // token included
  int64_t blockM = 0, ksplit = 0;
  double us1 = 0, us2 = 0;
  std::string kernelName1, kernelName2;
  double err1 = 0, err2 = 0; // fractions
  double tflops = 0, bw = 0; // bw in GB/s, as aiter's tables
  std::string tag;
  /// Replaces the row of its key whatever that row's us: chosen by graph
  /// replays (MeasuredTuneOptions::graphRank), which that row's us was not
  /// timed by, chosen against that row measured in the same run (the
  /// manifest's incumbent), or that row's own kernels timed again (retimedRow).
  bool replacesRow = false;
};

struct MergeReport {
  int64_t added = 0, replaced = 0, keptFaster = 0;
};

/// aiter's err format: "0.1%".
std::string formatErr(double fraction);

/// The CSV of `existing` (may be null) with `results` merged in: a result
/// replaces the row of the same key when its us is lower (or it replaces the
/// row whatever its us), is dropped when not, and is appended when the key is
/// new.
std::string mergeTunedRows(const dispatch::TunedTable *existing,
                           const std::vector<TunedResult> &results, MergeReport &report);

/// Writes `csv` to `path` whole: to `path`.tmp, then renamed over `path`, so
/// that a failed write leaves `path` as it was.
llvm::Error writeTunedCsv(llvm::StringRef path, llvm::StringRef csv);

} // namespace moegen::tune

#endif // MOEGEN_TUNE_TUNEDROWS_H
