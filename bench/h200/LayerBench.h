//===- LayerBench.h - One layer, checked and timed per token count -*- C++ -*-===//
//
// For each token count: R input sets (RotatedInputs; R = rotatedSets), each
// with its own output and workspace, the weights shared (DeviceWeights). One
// call on set 0 is checked against the reference first (checkLayerRun, on
// up to checkTokens tokens spread over the call). Then the R calls are
// recorded once into a graph (MoeLayer::captureRuns) and the graph replayed:
// a few replays to warm up, then each timed replay between two device
// events; a call's time is the replay's over R. The replay count follows
// targetMs of device time, within [minReplays, maxReplays].
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_BENCH_H200_LAYERBENCH_H
#define MOEGEN_BENCH_H200_LAYERBENCH_H

#include "bench/h200/DeviceWeights.h"
#include "runtime/api/KernelSource.h"
#include "runtime/api/MoeLayer.h"
#include "runtime/check/LayerCheck.h"

#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace moegen::bench {

struct BenchOptions {
  std::vector<int64_t> tokens;
  int64_t cuNum = 132;         // the H200's SMs: the persistent GEMM grids' cap
  std::string chip = "sm_90a"; // what the kernels were built for (the tables' gfx key)
  /// aiter-format tuned tables (rows keyed gfx = sm_90a, cu_num = cuNum):
  /// each token count runs the schedules MoeLayer chooses from them.
  std::vector<std::string> tunedTables;
  int warmupReplays = 2;
  int minReplays = 5, maxReplays = 60;
  double targetMs = 100;
  int64_t checkTokens = 16; // 0: every token
  bool check = true;
  bool time = true; // false: the check alone (no graph: any backend)
};

/// One token count of one layer.
struct BenchRow {
  int64_t tokens = 0, sets = 0;
  double expertsHit = 0;     // distinct experts per call, mean over the sets
  std::vector<float> callMs; // per timed replay: its time over the sets
  std::optional<LayerCheckResult> check;
  /// Where the schedules came from (a tuned row or the spec's) and what they
  /// are, e.g. "tuned: bm32 t32x64x256 kw1 w3 / t32x128x128".
  std::string schedules;
  std::string error; // what kept the row from being measured or checked
  double medianUs() const;
  bool passed() const { return error.empty() && (!check || check->passed()); }
};

/// "bm32 t32x64x256 kw2 w3 / t32x128x128 dqa": block_m and each stage's
/// tile, with k_batch, k_wave and waves_per_eu where they are not 1, 1, 0,
/// and `dqa` where the stage decodes its weights with weight_decode =
/// arithmetic.
std::string describeSchedules(const MoeSpec &spec);

/// Runs `spec` from `kernels` on `backend` (which must have graphs and
/// events: cuda) for each of options.tokens; progress goes to `log`. An
/// error of one token count is kept in its row and the next count runs.
std::vector<BenchRow> benchLayer(const MoeSpec &spec,
                                 std::shared_ptr<runtime::KernelSource> kernels,
                                 runtime::Backend &backend, const DeviceWeights &weights,
                                 const BenchOptions &options, llvm::raw_ostream &log);

/// One count, as benchLayer runs it on `layer`; each timed replay lies
/// between `events` (unused when options.time is false).
llvm::Expected<BenchRow> benchTokens(runtime::MoeLayer &layer, runtime::Backend &backend,
                                     const DeviceWeights &weights, int64_t tokens,
                                     const BenchOptions &options, runtime::EventPair events);

} // namespace moegen::bench

#endif // MOEGEN_BENCH_H200_LAYERBENCH_H
