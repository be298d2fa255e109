//===- LayerCheck.h - Run a layer and check every stage ---------*- C++ -*-===//
//
// Runs a layer the way a host application does -- kernels from a
// KernelSource (the JIT, or a prefilled cache), launched by MoeLayer::run
// with the spec's schedules -- on deterministic inputs, then reads every
// intermediate back through the
// workspace layout and compares it, decode-first, with the reference built
// from the same spec:
//   sort    exact (ids, weights, expert ids, num_valid_ids)
//   quant1  exact (MX activations: the host quantization of the input)
//   stage1  against the reference stage 1
//   quant2  exact (the host quantization of the kernels' stage-1 output)
//   stage2  against the reference stage 2 applied to the kernels' stage-2
//           input (so the stage is judged alone)
//   layer   the kernels' output against the reference layer
// Tolerances derive from the formats (stageTolerance). This is what
// `moegen run`, `moegen-layer-check` (on a GPU, from a prefilled cache), the
// kernel test matrix and the schedule property test use. MLIR-free: the
// caller chooses the KernelSource.
//
// The check may cover a part of the tokens (LayerCheckOptions::checkTokens,
// RunInputs::checked): the reference is computed on those tokens only and
// compared with the kernels' rows of them; the sorting is always checked
// whole. checkLayerRun is the comparison alone, for callers that place their
// own inputs and run the layer themselves (bench/h200).
//
// A layer restricted to some families (LayerCheckOptions::families) checks
// the stages whose kernels ran: quant1 with quant_input, stage1 with stage1,
// quant2 with quant_inter, sort, stage2 and layer with their kernels and
// every kernel before them. What a missing kernel would have written is the
// reference's, placed in the workspace before the run: the sorting, and
// stage 1's output when quant_inter runs without stage1.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_CHECK_LAYERCHECK_H
#define MOEGEN_RUNTIME_CHECK_LAYERCHECK_H

#include "compiler/spec/KernelFamily.h"
#include "compiler/spec/Spec.h"
#include "runtime/api/KernelSource.h"
#include "runtime/api/MoeLayer.h"
#include "runtime/backend/Backend.h"
#include "runtime/numerics/Compare.h"
#include "runtime/numerics/ExpertSubset.h"
#include "runtime/numerics/InputGen.h"
#include "runtime/numerics/StageTolerance.h"

#include <memory>
#include <mutex>
#include <optional>

namespace moegen {

/// Generated inputs kept from one check for the next check of the same
/// problem, formats, token count and seed: a tuner checks many schedules of
/// one layer, whose inputs (every routed expert's weights) are the same and
/// costly to draw. Holds one set (the last); safe to share between threads.
class GeneratedInputsCache {
public:
  /// The kept inputs when they were generated under `key`; else null, and
  /// the set kept for another key is released (no two sets held at once).
  std::shared_ptr<const num::LayerInputs> find(llvm::StringRef key);
  /// Keeps `inputs` under `key` instead of the set kept before.
  void keep(std::string key, std::shared_ptr<const num::LayerInputs> inputs);
  /// How many checks found their inputs here.
  int64_t hits() const;

private:
  mutable std::mutex mutex;
  std::string key;
  std::shared_ptr<const num::LayerInputs> inputs;
  int64_t found = 0;
};

/// Packed weights kept on the device from one check for the next check of
/// the same generated inputs (a tuner's candidates at one token count): the
/// weights are read-only to every kernel and packed the same for every
/// schedule, and packing and uploading every routed expert's weights twice
/// (the rotated copies) is most of a check's time at thousands of tokens.
/// Holds the copies of one key on one backend, freed when another key or
/// backend asks, or when the cache goes (before its backend).
class DeviceWeightsCache {
public:
  struct Set {
    runtime::DevicePtr w1 = 0, w1Scale = 0, w2 = 0, w2Scale = 0;
  };
  DeviceWeightsCache() = default;
  DeviceWeightsCache(const DeviceWeightsCache &) = delete;
  DeviceWeightsCache &operator=(const DeviceWeightsCache &) = delete;
  ~DeviceWeightsCache();
  /// Copy `index` of `key`'s weights on `backend`; the first time, zeroed
  /// buffers of `sizes` are allocated and `pack` fills them. A failed
  /// packing is not kept.
  llvm::Expected<Set> get(runtime::Backend &backend, llvm::StringRef key, size_t index,
                          const num::PackedSizes &sizes,
                          llvm::function_ref<llvm::Error(const Set &)> pack);
  /// How many copies were found here instead of packed.
  int64_t hits() const { return found; }

private:
  void release();
  runtime::Backend *backend = nullptr;
  std::string key;
  std::vector<Set> sets;
  std::vector<runtime::DevicePtr> owned;
  int64_t found = 0;
};

/// The largest LayerCheckOptions::weightScale (2^16: weights up to about
/// 2^20, outputs still far inside bf16 and f32).
inline constexpr double kMaxWeightScale = 65536.0;

struct LayerCheckOptions {
  int64_t tokens = 16;
  uint64_t seed = 0;
  /// Generated weights' standard deviations (num::GenOptions: w1 0.1, w2 1)
  /// times this, in (0, kMaxWeightScale]: from about 16 on, MX weight
  /// blocks get e8m0 scales above 2 (exponents from 129), which weights of
  /// the default magnitude never reach.
  double weightScale = 1.0;
  /// When set, the inputs are read from this directory as `moegen ref`
  /// writes them (hidden, a1, topk_ids, topk_weights, w1, w2) instead of
  /// being generated; the token count comes from the files.
  std::string inputsDir;
  /// The device's CU count the layer launches for (LayerOptions::cuNum):
  /// small values make the GEMMs' persistent grids loop over many M tiles.
  int64_t cuNum = 256;
  /// Fill the output and the workspace with 0xff bytes (NaN in bf16, f32
  /// and e8m0 scales) instead of zeros before the run: a value a kernel
  /// should write but does not then fails the comparison instead of
  /// passing as a zero. What the layer must clear it clears itself.
  bool poison = false;
  /// Where the layer's kernels come from (required): the JIT
  /// (runtime::Compiler) or a prefilled cache (runtime::KernelSource).
  std::shared_ptr<runtime::KernelSource> kernels;
  /// What the kernels are generated for (sm_90a on the cuda backend).
  runtime::Target target;
  /// Only these kernel families (LayerOptions::families); empty: all.
  std::vector<KernelFamily> families;
  /// After the check: this many timed runs of the whole layer (0: none),
  /// after `warmupRuns`, each between two backend events, with the inputs,
  /// output and workspace rotated over enough copies to exceed `rotateBytes`
  /// (the GPU's L2; 50 MB on an H200) so that no run finds the previous
  /// one's data in the cache. Needs a backend that can time (not emu).
  int timedRuns = 0;
  int warmupRuns = 3;
  size_t rotateBytes = size_t(50) << 20;
  /// Also time each step of the timed runs (an event after every clear and
  /// launch: MoeLayer::run's observer), into LayerTiming::stepMs.
  bool timeSteps = false;
  /// Time only a layer that passed its check (a failed one is returned
  /// without timing).
  bool timeOnlyIfPassed = false;
  /// With timedRuns: also this many replays (after one untimed) of a graph
  /// that records one run on each rotated copy, as a host application
  /// replays a captured layer, into LayerTiming::graphCallMs. Unlike the
  /// stream of runs with an event per step, the launches of a graph overlap
  /// under programmatic dependent launch. 0: none.
  int graphReplays = 0;
  /// Where generated inputs are kept for the next check of the same problem
  /// (null: each check draws its own).
  std::shared_ptr<GeneratedInputsCache> inputsCache;
  /// Where the packed weights of generated inputs stay on the device for the
  /// next check of the same inputs (null: each check packs its own). Not
  /// thread-safe: one checking thread per cache.
  std::shared_ptr<DeviceWeightsCache> weightsCache;
  /// aiter-format tuned tables (LayerOptions::tunedTables, keyed by
  /// target.chip and cuNum): the tier's row's schedules run and are checked;
  /// none: the spec's own.
  std::vector<std::string> tunedTables;
  /// Also report what each kernel of the tier uses (MoeLayer::kernelResources:
  /// registers, local memory, shared memory) in LayerCheckResult::kernels.
  bool kernelResources = false;
  /// Compare at most this many tokens, evenly spaced (spreadTokens); 0: all.
  /// The reference, single-threaded per sorted block, is the check's cost at
  /// thousands of tokens.
  int64_t checkTokens = 0;
};

/// The timed runs of a layer (LayerCheckOptions::timedRuns).
struct LayerTiming {
  std::vector<float> runsMs; // in run order
  int copies = 0;            // input sets the runs rotated over
  size_t copyBytes = 0;      // device bytes of one set
  /// With LayerCheckOptions::timeSteps: the steps of a run in order, and per
  /// run the milliseconds of each (from the previous step's event, the first
  /// from the run's start).
  std::vector<runtime::RunStep> steps;
  std::vector<std::vector<float>> stepMs;
  /// With LayerCheckOptions::graphReplays: per replay, its milliseconds over
  /// the calls it replays (one per copy).
  std::vector<float> graphCallMs;
  float medianMs() const;
  float medianGraphCallMs() const;
  float minMs() const;
  /// The median over the runs of the summed time of the steps `pick` accepts.
  float medianMsOf(llvm::function_ref<bool(const runtime::RunStep &)> pick) const;
  /// With steps: one line per step in launch order, "  <family> <median> ms"
  /// (a clear as "clear before <family>"), then their sum.
  std::string stepTable() const;
};

/// Reads the inputs `moegen ref` wrote into `dir` and checks their shapes and
/// formats against the spec; errors name the file and the mismatch.
llvm::Expected<num::LayerInputs> readLayerInputs(const MoeSpec &spec, llvm::StringRef dir);

struct StageCheck {
  std::string stage; // "sort", "stage1", "stage2", "layer"
  num::CompareResult result;
  num::CompareOptions tolerance;
};

struct LayerCheckResult {
  int64_t tokens = 0;
  int64_t checkedTokens = 0; // the tokens the stages after the sort compared
  std::vector<StageCheck> stages;
  /// Stages not checked because their kernels were not part of the run.
  std::vector<std::string> notRun;
  std::optional<LayerTiming> timing;
  /// Where the schedules that ran came from (TierDispatch::origin: a tuned
  /// table's row, or the spec's own).
  std::string schedules;
  /// With LayerCheckOptions::kernelResources: the tier's kernels in launch
  /// order and what each uses.
  std::vector<runtime::TierKernel> kernels;
  bool passed() const;
  /// One line per stage: metrics and PASS/FAIL.
  std::string table() const;
};

/// Generated inputs as a check's header names them: "seed S", with
/// ", weights xF" where the weights are scaled.
std::string generatedInputsOf(const LayerCheckOptions &options);

/// The options of the layer a check runs (its cu_num, target, families and
/// tuned tables).
runtime::LayerOptions layerOptionsOf(const LayerCheckOptions &options);

/// One line per kernel: family, registers, local bytes a thread, static and
/// dynamic shared bytes, block size, symbol; headed by where the figures come
/// from.
std::string kernelResourceTable(llvm::ArrayRef<runtime::TierKernel> kernels);

/// The stage tolerances live with the comparison (runtime/numerics), so that
/// checks without MLIR use them too.
using num::layerTolerance;
using num::stageTolerance;

/// Gets the kernels of `spec` (with the schedules options.tunedTables give
/// the tier, if any) from options.kernels, runs the layer on `backend` and
/// checks every stage against those schedules (then times it, if asked). Errors: the
/// inputs, the kernels, a kernel fault on the backend, or timing asked of a
/// backend that cannot time.
llvm::Expected<LayerCheckResult> runLayerCheck(const MoeSpec &spec, runtime::Backend &backend,
                                               const LayerCheckOptions &options);

/// `count` of [0, tokens), evenly spaced, the first and the last included,
/// ascending; every token when count is 0 or at least `tokens`.
std::vector<int64_t> spreadTokens(int64_t tokens, int64_t count);

/// The rows of `tokens` (valid indices) of a tensor whose first dimension is
/// the token, [T, ...] -> [tokens.size(), ...]: data and scales.
num::HostTensor tokenRows(const num::HostTensor &t, llvm::ArrayRef<int64_t> tokens);

/// What one run read, on the host, for its check.
struct RunInputs {
  int64_t tokens = 0;
  llvm::ArrayRef<int32_t> topkIds;   // [tokens, topk], every token
  llvm::ArrayRef<float> topkWeights; // [tokens, topk]
  /// The tokens compared, ascending; empty: every token.
  llvm::ArrayRef<int64_t> checked;
  /// Their stage-1 A (the input in formats.activation), [checked, model_dim].
  const num::HostTensor *a1 = nullptr;
  /// w1 [n, 2I, K] and w2 [n, K, I] (formats.weight, GGUU rows) of the experts
  /// `experts` (ascending; they include every expert a checked token routes
  /// to); `experts` empty: n is the layer's expert count.
  const num::HostTensor *w1 = nullptr, *w2 = nullptr;
  llvm::ArrayRef<int32_t> experts;
};

/// Compares what one finished run on `args` wrote (workspace in the layout
/// `ws`, output) with the reference on `in`, stage by stage; `kernels` is the
/// set the run launched (the stages of missing families are listed as not
/// run). Reads the device; the caller has synchronized.
llvm::Expected<LayerCheckResult> checkLayerRun(const MoeSpec &spec, runtime::Backend &backend,
                                               const runtime::KernelSet &kernels,
                                               const runtime::WorkspaceLayout &ws,
                                               const runtime::LayerArgs &args, const RunInputs &in);

} // namespace moegen

#endif // MOEGEN_RUNTIME_CHECK_LAYERCHECK_H
