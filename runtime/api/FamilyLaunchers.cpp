//===- FamilyLaunchers.cpp - How moegen's kernel families launch ----------===//
//
// Grids, argument bindings and intermediate sizes as the templates document
// them (and runtime/check/LayerCheck.cpp runs them against the reference).
//
//===----------------------------------------------------------------------===//

#include "runtime/api/FamilyLaunchers.h"

#include "compiler/spec/TargetInfo.h"
#include "runtime/numerics/Preshuffle.h"
#include "runtime/numerics/Tensor.h"
#include "templates/TargetSupport.h"
#include "templates/finish/FinishPlan.h"
#include "templates/gemm/GemmPlan.h"

#include "llvm/ADT/STLExtras.h"

namespace moegen::runtime {
namespace {

Dim3 dim3(std::array<int64_t, 3> g) {
  return {static_cast<uint32_t>(g[0]), static_cast<uint32_t>(g[1]), static_cast<uint32_t>(g[2])};
}

Dim3 gemmGrid(const MoeSpec &spec, const GemmPlan &g, const LaunchShape &s) {
  int64_t expected = g.expectedMTiles(s.tokens, spec.problem.experts, spec.problem.topk);
  return dim3(g.grid(s.workspace.maxBlocks, s.maxWorkgroups, expected));
}

/// Argument names every family binds alike.
const std::pair<llvm::StringRef, ArgValue> kCommonBindings[] = {
    {"topk_ids", ArgValue::TopkIds},
    {"topk_weights", ArgValue::TopkWeights},
    {"sorted_ids", ArgValue::SortedIds},
    {"sorted_weights", ArgValue::SortedWeights},
    {"sorted_experts", ArgValue::SortedExperts},
    {"num_valid_ids", ArgValue::NumValidIds},
    {"chunk_counts", ArgValue::SortCounts},
    {"expert_totals", ArgValue::SortTotals},
    {"stage_ready", ArgValue::StageReady},
    {"tokens", ArgValue::Tokens},
};

/// The sorting kernels' launcher: the layer's SortPlan gives the grid through
/// `grid`; `bindings` are the kernel's own.
FamilyLauncher sortLauncher(std::array<int64_t, 3> (SortPlan::*grid)(int64_t) const,
                            std::vector<std::pair<std::string, ArgValue>> bindings) {
  return [grid, bindings](const MoeSpec &spec, const KernelSet &,
                          const TargetInfo &target) -> llvm::Expected<FamilyLaunch> {
    ScheduleIssues issues;
    SortPlan p = planSort(spec, target, issues);
    return FamilyLaunch{[p, grid](const LaunchShape &s) { return dim3((p.*grid)(s.tokens)); },
                        bindings};
  };
}

} // namespace

LayerPlan LayerPlan::make(const MoeSpec &spec, const KernelSet &kernels, const TargetInfo &target) {
  std::vector<KernelFamily> families;
  for (const auto &k : kernels.kernels)
    families.push_back(k->meta.family);
  return make(spec, families, target);
}

LayerPlan LayerPlan::make(const MoeSpec &spec, llvm::ArrayRef<KernelFamily> families,
                          const TargetInfo &target) {
  LayerPlan p;
  p.spec = spec;
  ScheduleIssues issues; // the spec compiled: planning again cannot fail
  auto has = [&](KernelFamily f) { return llvm::is_contained(families, f); };
  p.sort = planSort(spec, target, issues);
  p.stage1 = has(KernelFamily::Stage1);
  p.stage2 = has(KernelFamily::Stage2);
  p.finish = has(KernelFamily::Finish);
  p.decodedMx = carriesDecodedMx(spec, target);
  p.stageReadyQuant = interQuantCountsDown(spec, target);
  if (has(KernelFamily::QuantInput))
    p.quantInput = planInputQuant(spec, target, issues);
  if (has(KernelFamily::QuantInter))
    p.quantInter = planInterQuant(spec, target, issues);
  if (has(KernelFamily::Reduce))
    p.reduce = planReduce(spec, target, issues);
  return p;
}

WorkspaceLayout LayerPlan::layout(int64_t tokens) const {
  const Problem &pr = spec.problem;
  const int64_t T = tokens, topk = pr.topk, I = pr.interDim, K = pr.modelDim;
  WorkspaceLayout w;
  w.blockM = sort.blockM; // a sorted block is one stage-1 M tile
  w.maxPaddedRows = sort.maxPaddedRows(T);
  w.maxBlocks = sort.maxBlocks(T);
  w.decodedMx = decodedMx;
  size_t off = 0;
  auto place = [&](WorkspaceRegion &r, int64_t bytes, bool zeroed = false) {
    r.offset = off;
    r.bytes = static_cast<size_t>(bytes);
    r.zeroed = zeroed;
    off = (off + r.bytes + 255) / 256 * 256;
  };
  place(w.sortedIds, 4 * w.maxPaddedRows);
  place(w.sortedWeights, 4 * w.maxPaddedRows);
  place(w.sortedExperts, 4 * w.maxBlocks);
  place(w.numValidIds, 8);
  place(w.sortCounts, sort.countsBytes(T));
  place(w.sortTotals, sort.totalsBytes());
  // Set by the sort each call, where it writes the blocks' experts.
  w.stageReadyCount = sort.stageReadyCount;
  w.stageReadyQuant = stageReadyQuant ? 1 : 0;
  if (sort.stageReadyCount)
    place(w.stageReady, 4 * w.maxBlocks);
  if (quantInput) {
    place(w.inputQ, quantInput->sourceRows(T) * quantInput->rowBytes());
    place(w.inputQScale, quantInput->scaleBytes(T), !quantInput->decoded);
  }
  if (stage1 && (!quantInput || decodedMx))
    place(w.noScale, 256); // bound, never read: bf16 A has no scales
  if (stage1) {
    if (finish) {
      int64_t splits = spec.stage1.kBatchMode == KBatchMode::Deterministic ? spec.stage1.kBatch : 1;
      place(w.partials, splits * T * topk * 2 * I * 4, true);
    }
    bool packed = spec.stage1.fusedQuant != FusedQuant::None && !decodedMx;
    int64_t rowBytes =
        packed ? num::packedBytes(num::elemFormatOf(spec.formats.activation), I) : I * 2;
    place(w.stage1Out, T * topk * rowBytes);
    // Stage 2 reads the scales of a quantized stage-1 output (the padding
    // rows' too, which nothing writes); bf16 rows have none to clear.
    place(w.stage1OutScale, num::e8m0ShuffledRows(w.maxPaddedRows) * num::e8m0ShuffledCols(I / 32),
          packed);
  }
  if (quantInter) {
    place(w.interQ, quantInter->sourceRows(T) * quantInter->rowBytes());
    place(w.interQScale, quantInter->scaleBytes(T), !quantInter->decoded);
  }
  if (reduce)
    place(w.slotRows, T * topk * K * 2);
  w.total = off;
  return w;
}

std::optional<ArgValue> bindingOf(const FamilyLaunch &launch, llvm::StringRef name) {
  std::optional<ArgValue> value;
  for (const auto &[n, v] : launch.bindings)
    if (n == name)
      value = v;
  for (const auto &[n, v] : kCommonBindings)
    if (!value && n == name)
      value = v;
  return value;
}

FamilyLaunchers builtinLaunchers() {
  FamilyLaunchers t;
  // The sorting kernels: per token chunk, per expert, per token chunk; the
  // first two not at all when sort works alone (templates/sort/SortKernel.h).
  // sort_scan and sort read sort_count's output.
  const std::vector<std::pair<std::string, ArgValue>> countsBindings = {
      {"chunk_counts", ArgValue::SortCounts}, {"expert_totals", ArgValue::SortTotals}};
  t[size_t(KernelFamily::SortCount)] = sortLauncher(&SortPlan::countGrid, {});
  t[size_t(KernelFamily::SortScan)] = sortLauncher(&SortPlan::scanGrid, countsBindings);
  t[size_t(KernelFamily::Sort)] = sortLauncher(&SortPlan::scatterGrid, countsBindings);
  // The bf16 input, token-major (templates/quant/QuantPlan.h).
  t[size_t(KernelFamily::QuantInput)] =
      [](const MoeSpec &spec, const KernelSet &,
         const TargetInfo &target) -> llvm::Expected<FamilyLaunch> {
    ScheduleIssues issues;
    QuantPlan q = *planInputQuant(spec, target, issues);
    return FamilyLaunch{[q](const LaunchShape &s) { return dim3(q.grid(s.tokens)); },
                        {{"x", ArgValue::Hidden},
                         {"q", ArgValue::InputQ},
                         {"scales", ArgValue::InputQScale},
                         {"rows", ArgValue::Tokens}}};
  };
  // grid (N / tile_n, persistent M, k_batch) (templates/gemm/GemmKernel.h).
  t[size_t(KernelFamily::Stage1)] = [](const MoeSpec &spec, const KernelSet &set,
                                       const TargetInfo &target) -> llvm::Expected<FamilyLaunch> {
    ScheduleIssues issues;
    GemmPlan g = planGemm(spec, StageId::Stage1, target, issues);
    // A layer with an input quantization reads its output, whether or not
    // this set runs it (a part of the layer: the caller places it).
    bool quantized = planInputQuant(spec, target, issues).has_value();
    bool scaled = quantized && g.aFormat != DType::BF16; // not carried decoded
    return FamilyLaunch{[spec, g](const LaunchShape &s) { return gemmGrid(spec, g, s); },
                        {{"a", quantized ? ArgValue::InputQ : ArgValue::Hidden},
                         {"a_scale", scaled ? ArgValue::InputQScale : ArgValue::NoScale},
                         {"w", ArgValue::W1},
                         {"w_scale", ArgValue::W1Scale},
                         {"out", ArgValue::Stage1Out},
                         {"out_scale", ArgValue::Stage1OutScale},
                         {"partials", ArgValue::Partials},
                         {"clear_out", ArgValue::Output}}};
  };
  // One thread per (sorted row, 32 columns) (templates/finish/FinishKernel.h).
  t[size_t(KernelFamily::Finish)] = [](const MoeSpec &spec, const KernelSet &,
                                       const TargetInfo &) -> llvm::Expected<FamilyLaunch> {
    return FamilyLaunch{
        [spec](const LaunchShape &s) { return dim3(finishGrid(spec, s.workspace.maxPaddedRows)); },
        {{"partials", ArgValue::Partials},
         {"out", ArgValue::Stage1Out},
         {"out_scale", ArgValue::Stage1OutScale}}};
  };
  // Stage 1's bf16 output, scales by sorted position.
  t[size_t(KernelFamily::QuantInter)] =
      [](const MoeSpec &spec, const KernelSet &,
         const TargetInfo &target) -> llvm::Expected<FamilyLaunch> {
    ScheduleIssues issues;
    QuantPlan q = *planInterQuant(spec, target, issues);
    return FamilyLaunch{
        [q](const LaunchShape &s) {
          return dim3(q.grid(s.tokens, s.maxWorkgroups / kPersistentWorkgroupsPerCU));
        },
        {{"x", ArgValue::Stage1Out}, {"q", ArgValue::InterQ}, {"scales", ArgValue::InterQScale}}};
  };
  t[size_t(KernelFamily::Stage2)] = [](const MoeSpec &spec, const KernelSet &set,
                                       const TargetInfo &target) -> llvm::Expected<FamilyLaunch> {
    ScheduleIssues issues;
    GemmPlan g = planGemm(spec, StageId::Stage2, target, issues);
    bool quantized = planInterQuant(spec, target, issues).has_value();
    bool perSlot = set.find(KernelFamily::Reduce) != nullptr;
    return FamilyLaunch{[spec, g](const LaunchShape &s) { return gemmGrid(spec, g, s); },
                        {{"a", quantized ? ArgValue::InterQ : ArgValue::Stage1Out},
                         {"a_scale", quantized ? ArgValue::InterQScale : ArgValue::Stage1OutScale},
                         {"w", ArgValue::W2},
                         {"w_scale", ArgValue::W2Scale},
                         {"out", perSlot ? ArgValue::SlotRows : ArgValue::Output}}};
  };
  // Sums the top-k per-slot rows of each token (templates/reduce/ReducePlan.h).
  t[size_t(KernelFamily::Reduce)] = [](const MoeSpec &spec, const KernelSet &,
                                       const TargetInfo &target) -> llvm::Expected<FamilyLaunch> {
    ScheduleIssues issues;
    ReducePlan r = *planReduce(spec, target, issues);
    return FamilyLaunch{[r](const LaunchShape &s) { return dim3(r.grid(s.tokens)); },
                        {{"slot_rows", ArgValue::SlotRows}, {"out", ArgValue::Output}}};
  };
  return t;
}

} // namespace moegen::runtime
