//===- Measured.h - Tuning by measured device times --------------*- C++ -*-===//
//
// The part of `moegen tune` after compiling, for backends that time (hip,
// cuda): MLIR-free, it reads the manifest the compiling part wrote (Manifest.h)
// and the kernels from a KernelSource, so that `moegen-tune-device` runs it
// from a static binary on a GPU machine. Per token count and block_m, each
// stage's candidates are taken in the manifest's order (at most `top` of
// them): each is checked decode-first (runLayerCheck, poisoned output) and,
// if it passes, timed -- warmup, then `timedRuns` runs between device events
// with the inputs rotated past the L2, an event after every clear and launch
// (MoeLayer's run observer). The stage's choice is the fastest median; the
// chosen pair is checked and timed again as one layer and the block_m with
// the fastest pair is the row. The spec's own schedules (the layer as given)
// are measured the same way, as the baseline the rows are reported against.
// With tierPoints, every one of those measurements is the mean over token
// counts spread over the row's tier.
//
// Measured stage times (measuredStageTimes): us1 = sorting + input
// quantization + stage 1 + finish, with the clears they need; us2 =
// inter-stage quantization + stage 2 + reduce, with the clears they need
// (the atomic output's).
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TUNE_MEASURED_H
#define MOEGEN_TUNE_MEASURED_H

#include "runtime/check/LayerCheck.h"
#include "tune/Journal.h"
#include "tune/Manifest.h"
#include "tune/TunedRows.h"

#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <optional>
#include <utility>

namespace moegen::tune {

/// The stage a family's time (and its clears') is charged to when measured:
/// 1 (sorting, input quantization, stage 1, finish) or 2 (inter-stage
/// quantization, stage 2, reduce).
int measuredStage(KernelFamily family);

/// The stages of a check that failed, with their counts, for the journal.
std::string failingStages(const LayerCheckResult &r);

/// The fraction of `stage`'s compared elements out of tolerance (0 when the
/// check has no such stage): the err1 / err2 columns.
double mismatchFraction(const LayerCheckResult &r, llvm::StringRef stage);

/// Median us1 and us2 over the timed runs (each run's steps summed per stage).
StageTimes measuredStageTimes(const LayerTiming &timing);

/// aiter's tflops and bw (GB/s) columns of `layer` at `tokens` tokens taking
/// `us` a call: the FLOPs of both GEMMs, and the least bytes the layer moves
/// (the weights of the experts uniform routing reaches, the input, the output).
std::pair<double, double> tflopsAndBandwidth(const MoeSpec &layer, int64_t tokens, double us);

/// `row` of a tuned table with its own kernels timed again at its token count
/// (moegen-layer-check --retime): block_m, ksplit, the kernel names and the tag
/// kept; us1 and us2 from `check`'s step times, err1 and err2 from its
/// comparison, tflops and bw from them. `layer` gives the problem and the
/// formats; `check` must have passed and have step times.
llvm::Expected<TunedResult> retimedRow(const dispatch::TunedRow &row, const MoeSpec &layer,
                                       const LayerCheckResult &check);

/// A layer's measurement: its check and, if it passed, its stage times and,
/// where asked for, its microseconds a call over graph replays.
struct Measurement {
  CheckRecord check;
  StageTimes times;
  std::optional<double> graphUs;
  /// Over several token counts (a tier's): each count's times, in the
  /// counts' order; `times` and `graphUs` are their means.
  std::vector<StageTimes> pointTimes;
  std::vector<double> pointGraphUs;
};

/// The tokens a candidate's check compares at most by default: every token
/// of aiter's tiers up to 1024, an evenly spaced 1024 above (Kimi-K3 at 4096
/// tokens: about 25 s of host reference per candidate when all are compared).
inline constexpr int64_t kDefaultCheckTokens = 1024;

/// The most token counts a row's candidates are ranked over
/// (MeasuredTuneOptions::tierPoints): each is a check and a timing.
inline constexpr size_t kMaxTierPoints = 16;

/// Token counts as text, e.g. "17, 25, 32" (`separator` between them).
std::string joinTokenCounts(const std::vector<int64_t> &tokens, llvm::StringRef separator = ", ");

/// Why a row at `tokens` is ranked at that count alone though `tierPoints`
/// asked for more (its tier has no other count, or no count pads to it);
/// none where it is ranked over its tier or only one count was asked for.
std::optional<std::string> tierPointsNote(int64_t tokens, size_t tierPoints);

struct MeasuredTuneOptions {
  std::string manifestDir;     // holds the manifest and the layers' files
  std::string outPath;         // the tuned CSV
  std::string journalPath;     // the measurements' journal (empty: <out>.measured.journal)
  std::string tag;             // the rows' tag, e.g. moegen_cuda_sm_90a
  std::string journalPrefix;   // fingerprint parts of the caller (build, backend, seed)
  std::vector<int64_t> tokens; // a subset of the manifest's; empty: all
  size_t top = 8;
  uint64_t seed = 0;
  int64_t launchCuNum = 256; // the device's CUs / SMs the layer launches for
  int timedRuns = 20, warmupRuns = 3;
  size_t rotateBytes = size_t(50) << 20;
  /// Compare at most this many tokens of a candidate, evenly spaced
  /// (LayerCheckOptions::checkTokens: the sorting is compared whole); 0:
  /// every token. The host reference over the compared tokens is the check's
  /// cost at thousands of tokens.
  int64_t checkTokens = kDefaultCheckTokens;
  /// Per block_m, pair this many of the fastest stage-1 candidates (by their
  /// step times) with the fastest stage 2 and choose among the pairs, and
  /// across block_m, by the layer's time over graph replays
  /// (LayerCheckOptions::graphReplays): the extra launches of a split-K
  /// stage 1 cost their whole gap in a stream timed step by step, not in a
  /// replayed graph. The rows then replace the table's, whose times were
  /// taken step by step. 0: choose by the step times.
  size_t graphRank = 0;
  int graphReplays = 20;
  /// Rank each row's candidates by their mean time over this many token
  /// counts spread over the row's tier (dispatch::tierTokens: from the least
  /// count that pads to the row's to the row's own), each count checked; the
  /// row's columns stay its own count's. A row serves every count of its
  /// tier, and one tuned at the top alone can be slow inside it. 1: the
  /// row's own count only.
  size_t tierPoints = 1;
  /// How a layer is measured at a token count (the bool: with graph
  /// replays); empty: runLayerCheck (poisoned, timed with an event per step
  /// only if it passed) and measuredStageTimes.
  std::function<llvm::Expected<Measurement>(const MoeSpec &, int64_t, bool)> measurer;
};

/// Runs the measured tuning; prints its progress and a table of the rows
/// against the baseline to `out`, writes the CSV (merged where faster) and
/// the journal. Errors: the manifest, a layer missing from `kernels` (named by
/// its candidate id), the backend. Returns the number of token counts that got
/// no row.
llvm::Expected<size_t> runMeasuredTune(const MeasuredTuneOptions &options,
                                       std::shared_ptr<runtime::KernelSource> kernels,
                                       runtime::Backend &backend, llvm::raw_ostream &out);

} // namespace moegen::tune

#endif // MOEGEN_TUNE_MEASURED_H
