//===- KernelEstimate.cpp - One compiled kernel's modelled time -----------===//

#include "bench/latency_model/KernelEstimate.h"

#include "bench/latency_model/Routing.h"
#include "bench/latency_model/Traffic.h"
#include "templates/finish/FinishPlan.h"
#include "templates/gemm/GemmPlan.h"
#include "templates/quant/QuantPlan.h"
#include "templates/reduce/ReducePlan.h"
#include "templates/sort/SortPlan.h"

#include <cmath>

namespace moegen::latency {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Byte offsets of the I32 arguments named tokens/rows (pointers are 8
/// bytes, scalars 4, each at its natural alignment).
std::map<uint32_t, uint32_t> kernargValues(const KernelSignature &sig, int64_t tokens) {
  std::map<uint32_t, uint32_t> out;
  uint32_t off = 0;
  for (const KernelArg &a : sig.args) {
    uint32_t size = a.kind == KernelArgKind::Pointer ? 8 : 4;
    off = (off + size - 1) / size * size;
    if (a.kind == KernelArgKind::I32 && (a.name == "tokens" || a.name == "rows"))
      out[off] = static_cast<uint32_t>(tokens);
    off += size;
  }
  return out;
}

/// The instructions of a sorting kernel's loop that tell which loop it is.
struct SortLoop {
  int ldsMins = 0, ldsAdds = 0, globalLoads = 0, globalStores = 0, wideStores = 0, firstBits = 0;
};
SortLoop sortLoopOf(const Program &p, const Loop &L) {
  SortLoop c;
  for (size_t i = L.header; i <= L.latch && i < p.insts.size(); ++i) {
    llvm::StringRef m = p.insts[i].mnemonic;
    c.ldsMins += m.starts_with("ds_min");
    c.ldsAdds += m.starts_with("ds_add");
    c.globalLoads += m.starts_with("global_load");
    c.globalStores += m.starts_with("global_store");
    c.wideStores += m.starts_with("global_store_dwordx4");
    c.firstBits += m.starts_with("s_ff1");
  }
  return c;
}

} // namespace

llvm::Expected<KernelEstimate> estimateKernel(const ModelledKernel &k, const MoeSpec &spec,
                                              int64_t tokens, const MachineModel &mm) {
  const Problem &p = spec.problem;
  const TargetInfo target = TargetInfo::defaultTarget();
  ScheduleIssues issues;
  const int64_t bm = spec.stage1.tileM;
  const Routing routing = expectedRouting(tokens, p.topk, p.experts, bm);
  const int64_t maxPaddedRows = tokens * p.topk + p.experts * bm - p.topk;
  const int64_t maxBlocks = ceilDiv(maxPaddedRows, bm);
  const int64_t blocks = std::min(routing.blocks(), maxBlocks);

  KernelEstimate e;
  KernelLaunch &l = e.launch;
  l.wavesPerWorkgroup = std::max<int64_t>(1, k.signature.blockSize / 64);
  l.wavesPerSimdByRegisters = occupancyFromRegisters(k.resources);
  l.ldsBytes = k.resources.ldsBytes;
  l.bytes = kernelBytes(k.family, spec, tokens, routing);

  WaveConfig cfg;
  cfg.kernarg = kernargValues(k.signature, tokens);
  int64_t total = 0;
  switch (k.family) {
  case KernelFamily::SortCount:
  case KernelFamily::SortScan:
  case KernelFamily::Sort: {
    // templates/sort/SortKernel.h: loops over a chunk's entries, over the
    // experts (per thread), over the chunks (sort_scan's groups), and in sort
    // the rounds of 64 entries with their placing steps (nested) and the
    // per-expert block/padding loops.
    SortPlan sp = planSort(spec, target, issues);
    const int64_t entries =
        k.family == KernelFamily::Sort
            ? std::max<int64_t>(1, sp.workgroupEntries(tokens))
            : std::min(sp.chunkEntries(), std::max<int64_t>(1, tokens) * p.topk);
    const int64_t waves = sp.waves();
    const int64_t rounds = ceilDiv(ceilDiv(entries, waves), 64);
    // The placing loop runs once per lane sharing an expert, as often as the
    // most shared expert of 64 entries: about the largest m with
    // n^m / (m! E^(m-1)) >= 1/2 for n uniform draws over E experts.
    const double n = double(std::min<int64_t>(64, ceilDiv(entries, waves)));
    int64_t steps = 1;
    for (double m = 2, term = n * n / (2 * double(p.experts)); term >= 0.5 && m <= n;
         ++m, term *= n / (m * double(p.experts)))
      steps = int64_t(m);
    const double perExpert = double(std::max<int64_t>(1, tokens) * p.topk) /
                             std::max(1.0, routing.activeExperts); // rows of a routed expert
    const int64_t perExpertBlocks = std::max<int64_t>(1, int64_t(std::ceil(perExpert / bm)));
    const int64_t padding = std::max<int64_t>(1, std::llround(perExpertBlocks * bm - perExpert));
    const int64_t perExpertLane = ceilDiv(p.experts, sp.threads);
    const int64_t histLane = ceilDiv(sp.histRow() * waves, 4 * sp.threads); // 4 of both rows a step
    const int64_t presentExperts = std::max<int64_t>(1, std::llround(routing.activeExperts));
    const int64_t chunkGroups = ceilDiv(sp.chunks(tokens), sp.scanThreads * sp.scanPerLane);
    const KernelFamily family = k.family;
    // A loop is told by what it holds (templates/sort/SortKernel.h).
    cfg.tripHint = [=](const Program &prog, const Loop &L) -> int64_t {
      SortLoop c = sortLoopOf(prog, L);
      if (family == KernelFamily::SortScan)
        return chunkGroups;
      if (family == KernelFamily::SortCount)
        return c.ldsAdds ? ceilDiv(entries, sp.threads) : perExpertLane;
      if (c.firstBits) // wave 0 alone (SortPlan::tinyEntries): one trip an expert present
        return presentExperts;
      if (c.ldsMins)
        return L.depth >= 2 ? steps : rounds; // the placing steps; the rounds of 64
      if (c.ldsAdds) // counting the wave's part, partPerLane x 64 entries a step
        return ceilDiv(rounds, sp.partPerLane());
      if (c.globalStores && !c.globalLoads) // padding rows, 4 a store; or block ids
        return c.wideStores ? ceilDiv(padding, 4) : perExpertBlocks;
      if (c.globalLoads)
        return perExpertLane; // the per-wave bases of the thread's experts
      return histLane;        // clearing the per-wave rows
    };
    if (k.family == KernelFamily::SortScan)
      total = l.workgroups = sp.scanGrid(tokens)[0];
    else if (k.family == KernelFamily::SortCount)
      total = l.workgroups = sp.countGrid(tokens)[0];
    else
      total = l.workgroups = sp.scatterGrid(tokens)[0];
    if (total == 0)
      return e; // not launched: no time
    break;
  }
  case KernelFamily::QuantInput:
  case KernelFamily::QuantInter: {
    auto q = k.family == KernelFamily::QuantInput ? planInputQuant(spec, target, issues)
                                                  : planInterQuant(spec, target, issues);
    total = l.workgroups = q ? q->grid(tokens)[0] : 1;
    break;
  }
  case KernelFamily::Stage1:
  case KernelFamily::Stage2: {
    StageId stage = k.family == KernelFamily::Stage1 ? StageId::Stage1 : StageId::Stage2;
    GemmPlan g = planGemm(spec, stage, target, issues);
    // The runtime's persistent grid (MoeLayer: cuNum x 4 workgroups at
    // most); each workgroup row loops over the M tiles in use with grid.y as
    // its step.
    std::array<int64_t, 3> grid = g.grid(maxBlocks, mm.cus * kPersistentWorkgroupsPerCU);
    int64_t usedTiles = g.gridM(blocks);
    int64_t rows = std::min(grid[1], usedTiles);
    total = grid[0] * grid[1] * grid[2];
    l.workgroups = grid[0] * rows * grid[2];
    int64_t tilesPerRow = std::max<int64_t>(1, ceilDiv(usedTiles, grid[1]));
    int64_t kIter = std::max<int64_t>(1, g.kIterations);
    // The outermost MFMA loop is the persistent M loop, a nested one the K
    // loop (unrolled away when a tile has a single K step).
    cfg.tripHint = [kIter, tilesPerRow](const Program &, const Loop &L) {
      return !L.hasMfma ? 1 : L.depth == 1 ? tilesPerRow : kIter;
    };
    break;
  }
  case KernelFamily::Finish: {
    total = finishGrid(spec, maxPaddedRows)[0];
    l.workgroups = ceilDiv(total * blocks * bm, maxPaddedRows);
    break;
  }
  case KernelFamily::Reduce: {
    auto r = planReduce(spec, target, issues);
    auto grid = r ? r->grid(tokens) : std::array<int64_t, 3>{1, tokens, 1};
    total = l.workgroups = grid[0] * grid[1] * grid[2];
    break;
  }
  }
  l.idleWorkgroups = total - l.workgroups;

  auto wave = simulateWave(*k.program, mm, cfg);
  if (!wave)
    return wave.takeError();
  e.wave = *wave;
  std::optional<WaveResult> idle;
  if (l.idleWorkgroups > 0) {
    WaveConfig exitCfg = cfg;
    exitCfg.exitEarly = true;
    auto w = simulateWave(*k.program, mm, exitCfg);
    if (!w)
      return w.takeError();
    idle = *w;
  }
  e.time = kernelTime(mm, l, e.wave, idle);
  return e;
}

} // namespace moegen::latency
