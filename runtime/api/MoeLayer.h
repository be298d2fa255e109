//===- MoeLayer.h - One MoE layer, dispatched and launched ------*- C++ -*-===//
//
// A MoeLayer is a problem + formats + activation (a MoeSpec; its schedules
// are the last-resort default) bound to a backend. Each run():
//
//   tokens -> tier (aiter's padded M: powers of two below 32768, 32768,
//             131072; dispatch/Tiers.h)
//          -> schedules, chosen once per tier (without tuned tables: the
//             spec's own, for every tier):
//               1. the tuned tables' row for the tier (exact act_type, then
//                  act_type-agnostic; a tier above 32768 without a row falls
//                  back to the smaller large tiers), if its kernel names map
//                  to moegen schedules of the layer's formats;
//               2. otherwise the fallback heuristic: aiter's own no-row
//                  choice for MX problems, by tier (block_m 32 for tiers
//                  below 2048, 64 for 2048, 128 for 4096 and 8192, else 64;
//                  dispatch/Lookup.h), when its kernel names map;
//               3. otherwise the spec's own schedules.
//             Taking 2 or 3, or a row without kernels (it does not compile,
//             or an ahead-of-time cache lacks it), is
//             logged once per (shape, tier) -- never silent.
//          -> kernels (KernelSource: memory, disk cache, or the JIT compiles)
//          -> launches, in the layer's order: sort_count -> sort_scan ->
//             sort -> (quant_input) ->
//             stage1 -> (finish) -> (quant_inter) -> stage2 -> (reduce),
//             after clearing what accumulates (atomic output, split-K
//             partials). A family is launched by its registered
//             FamilyLauncher: a grid rule, and its arguments bound by name
//             to the call's buffers and workspace. The kernels of a family
//             without a launcher are compiled and cached but not launched,
//             which the layer notes once and reports in
//             TierDispatch::notLaunched.
//
// Thread-safe: tiers are resolved once under a lock; the per-call path
// reads them lock-free, packs arguments and launches under the layer's
// launch lock (backends need not be thread-safe). Calls that may overlap on
// the device need their own workspace and output.
//
// Graphs: captureRuns records calls into a backend graph (Backend.h) that
// Backend::launchGraph replays, without the host's per-launch work. A run
// issues only memsets and launches (no copy, no host read, no wait), so it
// can be recorded; what cannot be (loading a tier's kernels) happens before
// the capture begins.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_API_MOELAYER_H
#define MOEGEN_RUNTIME_API_MOELAYER_H

#include "compiler/spec/KernelFamily.h"
#include "compiler/spec/TargetInfo.h"
#include "runtime/api/KernelSource.h"
#include "runtime/backend/Backend.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>

namespace moegen::runtime {

struct LayerOptions {
  Target target;
  /// aiter tuned tables (*_tuned_fmoe.csv), merged in order; none: the
  /// spec's schedules serve every tier.
  std::vector<std::string> tunedTables;
  /// The tables' gfx/cu_num key columns (MI355X: gfx950, 256 CUs).
  int64_t cuNum = 256;
  /// Only these kernel families (empty: the whole layer): a target with
  /// templates for some families only (sm_90a so far) runs those, in launch
  /// order. The layer is then incomplete; what the missing kernels would
  /// write stays as the caller left it (the workspace is the whole layer's,
  /// and a kernel reads the region a missing one would have written, e.g.
  /// stage 1 the input quantization's, nor is that region cleared).
  std::vector<KernelFamily> families;
};

/// Device buffers of one call, in the layouts the kernel templates read
/// (templates/gemm/GemmKernel.h). Pointers are device addresses of the
/// layer's backend; a buffer no kernel of the layer reads may stay null.
struct LayerArgs {
  int64_t tokens = 0;
  DevicePtr topkIds = 0;     // i32 [tokens, topk]
  DevicePtr topkWeights = 0; // f32 [tokens, topk]
  DevicePtr hidden = 0;      // bf16 [tokens, model_dim]; quantized by the layer for MX formats
  DevicePtr w1 = 0;          // [experts, 2*inter_dim, model_dim] (16,16)-preshuffled bytes
  DevicePtr w1Scale = 0;     // e8m0 [experts*2*inter_dim, model_dim/32], e8m0_shuffle layout
  DevicePtr w2 = 0;          // [experts, model_dim, inter_dim] (16,16)-preshuffled bytes
  DevicePtr w2Scale = 0;     // e8m0 [experts*model_dim, inter_dim/32], e8m0_shuffle layout
  DevicePtr output = 0;      // bf16 [tokens, model_dim]
  /// Scratch the layer's kernels share (sorted ids, intermediates): at
  /// least workspaceLayout(tokens).total bytes, 256-byte aligned.
  DevicePtr workspace = 0;
  size_t workspaceBytes = 0;
};

/// A part of the workspace; bytes == 0 when the layer does not use it.
struct WorkspaceRegion {
  size_t offset = 0, bytes = 0;
  bool zeroed = false; // cleared by the layer before its kernels run
};

/// Where each intermediate lives inside the workspace for one call.
struct WorkspaceLayout {
  int64_t blockM = 0, maxPaddedRows = 0, maxBlocks = 0;
  WorkspaceRegion sortedIds;      // i32 [maxPaddedRows]
  WorkspaceRegion sortedWeights;  // f32 [maxPaddedRows]
  WorkspaceRegion sortedExperts;  // i32 [maxBlocks]
  WorkspaceRegion numValidIds;    // i32 [2]
  WorkspaceRegion sortCounts;     // i32 [chunks, experts]: sort_count's, then chunk bases
  WorkspaceRegion sortTotals;     // i32 [experts]: entries per expert (sort_scan)
  WorkspaceRegion inputQ;         // stage-1 A quantized from `hidden` (MX formats)
  WorkspaceRegion inputQScale;    //   and its e8m0 scales
  WorkspaceRegion noScale;        // the scale argument of bf16 A (bound, never read)
  WorkspaceRegion partials;       // stage-1 split-K f32 partials (k_batch > 1)
  WorkspaceRegion stage1Out;      // stage-1 output [tokens*topk, inter_dim]
  WorkspaceRegion stage1OutScale; //   and its scales when stage 1 quantizes
  WorkspaceRegion interQ;         // stage-2 A quantized by the inter-stage kernel
  WorkspaceRegion interQScale;    //   and its scales
  WorkspaceRegion slotRows;       // stage-2 per-slot rows (reduce = reduce)
  WorkspaceRegion stageReady;     // i32 [maxBlocks]: what stage 1 (its N tiles) and the inter-
                                  //   stage quantization (1) have yet to write of each sorted
                                  //   block (stagesOverlap, templates/gemm/StageReady.h)
  size_t total = 0;
  /// MX activations carried decoded (carriesDecodedMx): inputQ, a quantized
  /// stage1Out and interQ hold bf16 rows of the values the MX codes decode
  /// to, and their scale regions are empty or unused.
  bool decodedMx = false;
  /// What the sort sets each block's stage_ready counter to (stage 1's N
  /// tiles, plus stageReadyQuant; SortPlan::stageReadyCount), 0 without the
  /// region.
  int64_t stageReadyCount = 0;
  /// 1 where the inter-stage quantization counts each block down by one
  /// after stage 1 (interQuantCountsDown), else 0.
  int64_t stageReadyQuant = 0;
};

enum class ScheduleSource { Tuned, TunedActAgnostic, Heuristic, SpecDefault };
llvm::StringRef toString(ScheduleSource s);

/// What the layer runs for one tier.
struct TierDispatch {
  int64_t tier = 0;
  ScheduleSource source = ScheduleSource::SpecDefault;
  /// Where the schedules come from: "file.csv:12 (tier 131072 -> 32768)", ...
  std::string origin;
  MoeSpec spec; // the layer with the chosen schedules
  std::shared_ptr<const KernelSet> kernels;
  /// Families of `kernels` that have no launcher, in launch order.
  std::vector<KernelFamily> notLaunched;
};

/// The values a kernel argument can be bound to.
enum class ArgValue : uint8_t {
  // The call's buffers.
  TopkIds,
  TopkWeights,
  Hidden,
  W1,
  W1Scale,
  W2,
  W2Scale,
  Output,
  // Workspace regions.
  SortedIds,
  SortedWeights,
  SortedExperts,
  NumValidIds,
  SortCounts,
  SortTotals,
  InputQ,
  InputQScale,
  NoScale,
  Partials,
  Stage1Out,
  Stage1OutScale,
  InterQ,
  InterQScale,
  SlotRows,
  StageReady,
  // Scalars.
  Tokens,
  Count
};

/// What a launch needs to know of the call.
struct LaunchShape {
  int64_t tokens;
  const WorkspaceLayout &workspace;
  /// What a persistent kernel's grid is capped at: the device's CUs
  /// (LayerOptions::cuNum) times kPersistentWorkgroupsPerCU (GemmPlan.h).
  int64_t maxWorkgroups;
};
using GridRule = std::function<Dim3(const LaunchShape &)>;

/// How one kernel of a family is launched for a given layer: its grid, and
/// its arguments bound by name (names not listed bind by the common names:
/// "topk_ids", "sorted_ids", "num_valid_ids", "tokens", ...).
struct FamilyLaunch {
  GridRule grid;
  std::vector<std::pair<std::string, ArgValue>> bindings;
};
/// Builds a family's launch for a layer spec, its kernel set (which tells,
/// e.g., whether an input quantization kernel precedes stage 1) and the
/// target the kernels were generated for.
using FamilyLauncher = std::function<llvm::Expected<FamilyLaunch>(
    const MoeSpec &, const KernelSet &, const TargetInfo &)>;

/// A point of MoeLayer::run an observer is told of: after the clearing of a
/// buffer that `family` needs zeroed (Clear), or after a launch of a kernel of
/// `family` (Launch). A caller that records a backend event at each point
/// times every step of the layer.
struct RunStep {
  enum class Kind : uint8_t { Clear, Launch };
  Kind kind = Kind::Launch;
  KernelFamily family = KernelFamily::Sort;
};
/// Called in the launch order, under the layer's launch lock; an error stops
/// the run and is returned by it.
using RunObserver = llvm::function_ref<llvm::Error(const RunStep &)>;

/// Replaces the launcher of a family, process-wide. Layers use it for tiers
/// they resolve afterwards. moegen registers one for every family; an empty
/// launcher leaves the family's kernels compiled but not launched.
void registerFamilyLauncher(KernelFamily family, FamilyLauncher launcher);
/// Restores moegen's launchers.
void resetFamilyLaunchers();

/// One kernel a tier launches and what it uses: on sm_90a as the driver
/// compiled its PTX at load (Backend::kernelResources), on gfx950 as the code
/// object's metadata records it (registers: arch VGPRs + AGPRs; local bytes:
/// the private segment a lane).
struct TierKernel {
  KernelFamily family = KernelFamily::Sort;
  std::string symbol;
  uint32_t blockSize = 0;
  uint32_t dynamicSharedBytes = 0;
  KernelResources resources;
  /// Where `resources` come from: "driver" or "code object".
  std::string source;
};

class MoeLayer {
public:
  static llvm::Expected<std::unique_ptr<MoeLayer>> create(std::shared_ptr<KernelSource> kernels,
                                                          Backend &backend, const MoeSpec &spec,
                                                          LayerOptions options = {});
  ~MoeLayer();

  const MoeSpec &spec() const { return layerSpec; }

  /// The dispatch of the tier `tokens` falls in: resolved (and its kernels
  /// compiled and loaded on the backend) on first use.
  llvm::Expected<const TierDispatch &> dispatch(int64_t tokens);

  /// The kernels the tier of `tokens` launches, in launch order, with what
  /// each uses (resolving the tier loads them).
  llvm::Expected<std::vector<TierKernel>> kernelResources(int64_t tokens);

  /// The workspace `tokens` tokens need.
  llvm::Expected<WorkspaceLayout> workspaceLayout(int64_t tokens);

  /// Checks `args` and launches the layer's kernels for args.tokens tokens.
  /// Errors name the argument and say why. `observer`, when given, is told
  /// of each clear and launch right after it is issued (per-family timing).
  llvm::Error run(const LayerArgs &args, RunObserver observer = nullptr);

  /// Records one run per element of `calls`, in order, into a graph of the
  /// layer's backend (Backend::launchGraph replays it; the caller destroys
  /// it). Each call's tier is resolved and its kernels loaded first. The
  /// buffers of `calls` are baked into the graph: they must outlive it. A run
  /// during a capture the caller began itself must be of a resolved tier
  /// (dispatch(tokens) resolves one).
  llvm::Expected<GraphHandle> captureRuns(llvm::ArrayRef<LayerArgs> calls);

private:
  struct Resolved;
  MoeLayer(std::shared_ptr<KernelSource> kernels, Backend &backend, const MoeSpec &spec,
           LayerOptions options);
  llvm::Expected<const Resolved &> resolve(int64_t tokens);
  llvm::Expected<std::unique_ptr<Resolved>> resolveTier(int64_t tier, int64_t tokens);

  std::shared_ptr<KernelSource> kernels;
  Backend &backend;
  MoeSpec layerSpec;
  LayerOptions options;
  TargetInfo target; // of options.target, checked by create()
  struct Tables;
  std::unique_ptr<Tables> tables;
  static constexpr size_t kTierSlots = 17; // 1, 2, 4, ..., 32768, 131072
  std::array<std::atomic<Resolved *>, kTierSlots> tiers{};
  std::vector<std::unique_ptr<Resolved>> owned;
  std::mutex resolveMutex, launchMutex;
};

} // namespace moegen::runtime

#endif // MOEGEN_RUNTIME_API_MOELAYER_H
