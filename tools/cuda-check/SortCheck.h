//===- SortCheck.h - moegen-cuda-check: the sorting kernels -----*- C++ -*-===//
//
// Runs sort_count, sort_scan and sort of a layer on the cuda backend as
// MoeLayer launches them (grids and argument bindings from the family
// launchers, buffers in the workspace layout of runtime/api/FamilyLaunchers)
// and compares sorted ids, weights, expert ids and num_valid_ids element by
// element with runtime/numerics/Sorting (ids outside [0, experts) dropped).
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TOOLS_CUDA_CHECK_SORTCHECK_H
#define MOEGEN_TOOLS_CUDA_CHECK_SORTCHECK_H

#include "compiler/spec/Spec.h"
#include "compiler/spec/TargetInfo.h"
#include "runtime/backend/Backend.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <random>
#include <vector>

namespace moegen::cudacheck {

/// The PTX text (NUL-terminated) of a kernel, by symbol.
using PtxReader = llvm::function_ref<llvm::Expected<std::vector<char>>(llvm::StringRef symbol)>;

struct SortCheckResult {
  int ran = 0;        // (tokens, routing) cases run
  bool ok = true;     // every case passed and every kernel loaded
  bool found = false; // the three kernels' PTX was there
};

/// Checks the sort kernels for each token count, and for the largest count
/// one workgroup sorts alone (SortPlan::singleEntries) and one more, on two
/// routings each: distinct experts per token and a few hot experts (many
/// lanes of a wave on one expert), each with one entry in eight -1 or
/// `experts`. Prints one line per case. With repeat > 0 also times that many
/// queued three-kernel sorts (host clock, launch overhead included).
SortCheckResult checkSort(runtime::Backend &backend, const MoeSpec &spec, const TargetInfo &target,
                          llvm::ArrayRef<int64_t> tokenCounts, unsigned repeat, std::mt19937 &rng,
                          PtxReader readPtx, llvm::raw_ostream &os);

} // namespace moegen::cudacheck

#endif // MOEGEN_TOOLS_CUDA_CHECK_SORTCHECK_H
