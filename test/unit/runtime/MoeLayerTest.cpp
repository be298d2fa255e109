//===- MoeLayerTest.cpp - Dispatch, argument checks and launch ------------===//

#include "runtime/api/MoeLayer.h"
#include "runtime/jit/Compiler.h"
#include "templates/gemm/GemmPlan.h"
#include "templates/quant/QuantPlan.h"

#include "runtime/api/LayerSchedule.h"

#include "CacheTestUtil.h"

#include "compiler/spec/DslParser.h"
#include "runtime/api/Backends.h"

#include <thread>

using namespace moegen;
using namespace moegen::runtime;

namespace {

std::string source(llvm::StringRef rel) {
  const char *src = std::getenv("MOEGEN_SOURCE_DIR");
  return std::string(src ? src : ".") + "/" + rel.str();
}

MoeSpec kimi() {
  auto spec = parseMoeSpecFile(source("examples/kimi_k3_tp8_a4w4.moe"));
  EXPECT_TRUE(bool(spec));
  return spec ? *spec : MoeSpec();
}

std::shared_ptr<Compiler> memoryCompiler() {
  CompilerOptions o;
  o.diskCache = false;
  return std::make_shared<Compiler>(o);
}

LayerOptions withKimiTable() {
  LayerOptions o;
  o.tunedTables = {source("data/aiter-configs/kimik3_a4w4_tuned_fmoe.csv")};
  return o;
}

/// Routes runtime notes into a list for the duration of a test.
struct NoteCapture {
  test::LogCapture log;
  NoteCapture() { setLogHandler(log.handler()); }
  ~NoteCapture() { setLogHandler(nullptr); }
};

struct Fixture : ::testing::Test {
  std::unique_ptr<Backend> backend;
  void SetUp() override {
    auto b = createBackend("emu");
    ASSERT_TRUE(bool(b));
    backend = std::move(*b);
  }
  std::unique_ptr<MoeLayer> layer(const MoeSpec &spec, LayerOptions o = {},
                                  std::shared_ptr<Compiler> jit = memoryCompiler()) {
    auto l = MoeLayer::create(std::move(jit), *backend, spec, std::move(o));
    EXPECT_TRUE(bool(l)) << (l ? "" : llvm::toString(l.takeError()));
    return l ? std::move(*l) : nullptr;
  }
};

using MoeLayerDispatch = Fixture;

/// The schedule decision alone (no compile): what a tier would run first.
LayerScheduler::Candidate firstChoice(const MoeSpec &spec, int64_t tokens,
                                      LayerOptions o = withKimiTable()) {
  auto s = LayerScheduler::create(spec, o);
  EXPECT_TRUE(bool(s));
  auto c = (*s)->candidates(tokens);
  EXPECT_FALSE(c.empty());
  EXPECT_EQ(c.back().source, ScheduleSource::SpecDefault); // always the last resort
  return c.front();
}

TEST_F(MoeLayerDispatch, TheTunedRowOfTheTierIsUsed) {
  auto c = firstChoice(kimi(), 3); // tier 4
  EXPECT_EQ(c.source, ScheduleSource::Tuned);
  EXPECT_NE(c.origin.find("kimik3_a4w4_tuned_fmoe.csv:5"), std::string::npos) << c.origin;
  // flydsl_moe1_afp4_wfp4_bf16_t32x32x256_w3_kw2_fp4
  EXPECT_EQ(c.spec.stage1.tileN, 32);
  EXPECT_EQ(c.spec.stage1.kWave, 2);
  EXPECT_EQ(c.spec.stage1.wavesPerEU, 3);
  EXPECT_EQ(c.spec.stage1.fusedQuant, FusedQuant::FP4);
  EXPECT_EQ(firstChoice(kimi(), 20000).spec.stage1.tileM, 64); // tier 32768: block_m 64

  // The layer runs what was chosen: its sort kernel follows block_m.
  auto l = layer(kimi(), withKimiTable());
  auto d = l->dispatch(3);
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  EXPECT_EQ(d->tier, 4);
  ASSERT_TRUE(d->kernels->find(KernelFamily::Sort));
  EXPECT_EQ(d->kernels->find(KernelFamily::Sort)->meta.symbol,
            "moe_sort_e896_k16_bm" + std::to_string(d->spec.stage1.tileM));
  auto big = l->dispatch(20000);
  ASSERT_TRUE(bool(big));
  EXPECT_EQ(big->tier, 32768);
  EXPECT_EQ(big->kernels->find(KernelFamily::Sort)->meta.symbol,
            "moe_sort_e896_k16_bm" + std::to_string(big->spec.stage1.tileM));
  EXPECT_TRUE(d->notLaunched.empty()); // every family moegen plans has a launcher
}

TEST_F(MoeLayerDispatch, TierFallbackWithTheRealTable) {
  NoteCapture notes;
  auto c = firstChoice(kimi(), 200000); // tier 131072 has no row: 32768's is used
  EXPECT_EQ(c.source, ScheduleSource::Tuned);
  EXPECT_NE(c.origin.find("kimik3_a4w4_tuned_fmoe.csv:18 (tier 131072 -> 32768)"),
            std::string::npos)
      << c.origin;
  EXPECT_EQ(c.spec.stage1.tileM, 64);
  EXPECT_EQ(notes.log.count("fallback"), 0u); // a tuned choice is not a fallback
  auto l = layer(kimi(), withKimiTable());
  auto d = l->dispatch(200000);
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  EXPECT_EQ(d->tier, 131072);
}

TEST_F(MoeLayerDispatch, ActTypeFallbackWithTheRealTable) {
  MoeSpec spec = kimi();
  ASSERT_FALSE(bool(applySpecOverride(spec, "activation=silu")));
  auto c = firstChoice(spec, 1);
  EXPECT_EQ(c.source, ScheduleSource::TunedActAgnostic);
  EXPECT_NE(c.origin.find("act_type-agnostic: the row is ActivationType.Situv2"), std::string::npos)
      << c.origin;
  EXPECT_EQ(c.spec.activation.name, "silu"); // the layer keeps its activation
  EXPECT_EQ(c.spec.stage1.wavesPerEU, 4);
}

TEST_F(MoeLayerDispatch, NoRowUsesTheHeuristicAndSaysSoOncePerShape) {
  NoteCapture notes;
  MoeSpec spec = kimi();
  spec.problem.experts = 384; // not in the table
  for (int64_t tokens : {5, 7, 8}) {
    auto c = firstChoice(spec, tokens);
    EXPECT_EQ(c.source, ScheduleSource::Heuristic);
    EXPECT_NE(c.origin.find("block_m=32"), std::string::npos) << c.origin;
    EXPECT_EQ(c.spec.stage1.tileM, 32);
  }
  EXPECT_EQ(notes.log.count("fallback heuristic"), 1u);
  EXPECT_EQ(notes.log.count("expert=384"), 1u);
  EXPECT_EQ(firstChoice(spec, 3000).spec.stage1.tileM, 128); // tier 4096, another note
  EXPECT_EQ(notes.log.count("fallback heuristic"), 2u);
  // No table at all: the spec's schedules are the configuration, silently.
  EXPECT_EQ(firstChoice(kimi(), 1, LayerOptions()).source, ScheduleSource::SpecDefault);
  EXPECT_EQ(notes.log.count("fallback heuristic"), 2u);
}

TEST_F(MoeLayerDispatch, AUserActivationFallsBackToTheSpecSchedules) {
  NoteCapture notes;
  MoeSpec spec = kimi();
  ASSERT_FALSE(bool(applySpecOverride(spec, "activation=act(g, u) = g * u")));
  auto c = firstChoice(spec, 1);
  EXPECT_EQ(c.source, ScheduleSource::SpecDefault);
  EXPECT_EQ(notes.log.count("using the spec's schedules"), 1u);
  auto l = layer(spec, withKimiTable());
  auto d = l->dispatch(1);
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  EXPECT_EQ(d->source, ScheduleSource::SpecDefault);
}

TEST_F(MoeLayerDispatch, ConcurrentCallsResolveEachTierOnce) {
  auto jit = memoryCompiler();
  auto l = layer(kimi(), withKimiTable(), jit);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] { EXPECT_TRUE(bool(l->dispatch(t % 2 ? 1 : 5000))); });
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(jit->stats().compiles, 2u);
}

TEST_F(MoeLayerDispatch, CreateChecksItsArguments) {
  auto bad = MoeLayer::create(nullptr, *backend, kimi());
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("argument 'kernels' is null"), std::string::npos);
  MoeSpec spec = kimi();
  spec.problem.topk = 0;
  auto badSpec = MoeLayer::create(memoryCompiler(), *backend, spec);
  ASSERT_FALSE(bool(badSpec));
  EXPECT_NE(llvm::toString(badSpec.takeError()).find("topk=0"), std::string::npos);
  MoeSpec unverifiable = kimi();
  unverifiable.stage1.kBatch = 3;
  auto badSchedule = MoeLayer::create(memoryCompiler(), *backend, unverifiable);
  ASSERT_FALSE(bool(badSchedule));
  std::string msg = llvm::toString(badSchedule.takeError());
  EXPECT_NE(msg.find("argument 'spec'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("k_batch=3"), std::string::npos) << msg;
  LayerOptions o;
  o.tunedTables = {"/nonexistent/table.csv"};
  auto badTable = MoeLayer::create(memoryCompiler(), *backend, kimi(), o);
  ASSERT_FALSE(bool(badTable));
  EXPECT_NE(llvm::toString(badTable.takeError()).find("options.tunedTables"), std::string::npos);
}

/// Accepts everything and runs nothing: argument checks and launch plans
/// without executing kernels. `log` lists the calls in order; launches and
/// memsets made while a graph is captured go to the graph, and a launch of
/// the graph appends them to `launches`.
class RecordingBackend final : public Backend {
public:
  llvm::StringRef name() const override { return "recording"; }
  llvm::Expected<ModuleHandle> loadCode(const CodeBundle &) override {
    log.push_back("load");
    return ModuleHandle{0};
  }
  llvm::Expected<KernelHandle> getKernel(ModuleHandle, llvm::StringRef s) override {
    return KernelHandle{0, s.str(), 0};
  }
  llvm::Expected<DevicePtr> allocate(size_t) override { return next += 1 << 24; }
  llvm::Error free(DevicePtr) override { return llvm::Error::success(); }
  llvm::Error copyToDevice(DevicePtr, const void *, size_t) override {
    return llvm::Error::success();
  }
  llvm::Error copyToHost(void *, DevicePtr, size_t) override { return llvm::Error::success(); }
  llvm::Error memset(DevicePtr p, uint8_t, size_t bytes) override {
    log.push_back("memset");
    if (!recording)
      memsets.push_back({p, bytes});
    return llvm::Error::success();
  }
  llvm::Error launch(const KernelHandle &k, Dim3 grid, Dim3 block, uint32_t,
                     llvm::ArrayRef<uint8_t> kernarg) override {
    log.push_back("launch");
    (recording ? graphs.back() : launches)
        .push_back({k.Symbol, grid, block, std::vector<uint8_t>(kernarg.begin(), kernarg.end())});
    return llvm::Error::success();
  }
  llvm::Error synchronize() override { return llvm::Error::success(); }

  llvm::Expected<GraphHandle> captureGraph(llvm::function_ref<llvm::Error()> record) override {
    if (!hasGraphs)
      return Backend::captureGraph(record);
    log.push_back("begin capture");
    graphs.emplace_back();
    recording = true;
    llvm::Error e = record();
    recording = false;
    log.push_back("end capture");
    if (e) {
      graphs.pop_back();
      return std::move(e);
    }
    return GraphHandle{uint32_t(graphs.size() - 1)};
  }
  llvm::Error launchGraph(GraphHandle g) override {
    launches.insert(launches.end(), graphs[g.Id].begin(), graphs[g.Id].end());
    return llvm::Error::success();
  }
  bool capturing() const override { return recording; }

  struct Launch {
    std::string symbol;
    Dim3 grid, block;
    std::vector<uint8_t> kernarg;
  };
  std::vector<Launch> launches;
  std::vector<std::pair<DevicePtr, size_t>> memsets;
  std::vector<std::string> log;
  std::vector<std::vector<Launch>> graphs;
  bool hasGraphs = true;
  bool recording = false;

private:
  DevicePtr next = 1 << 24;
};

struct MoeLayerRun : ::testing::Test {
  RecordingBackend backend;
  std::unique_ptr<MoeLayer> l;
  LayerArgs args;
  void SetUp() override {
    CompilerOptions o;
    o.diskCache = false;
    auto layer = MoeLayer::create(std::make_shared<Compiler>(o), backend, kimi(), withKimiTable());
    ASSERT_TRUE(bool(layer)) << llvm::toString(layer.takeError());
    l = std::move(*layer);
    args.tokens = 4;
    for (DevicePtr *p : {&args.topkIds, &args.topkWeights, &args.hidden, &args.w1, &args.w1Scale,
                         &args.w2, &args.w2Scale, &args.output})
      *p = llvm::cantFail(backend.allocate(1));
    auto ws = l->workspaceLayout(args.tokens);
    ASSERT_TRUE(bool(ws));
    args.workspace = llvm::cantFail(backend.allocate(ws->total));
    args.workspaceBytes = ws->total;
  }
  std::string runError(const LayerArgs &a) {
    llvm::Error e = l->run(a);
    return e ? llvm::toString(std::move(e)) : "";
  }
};

TEST_F(MoeLayerRun, LaunchesEveryFamilyInOrderWithTheTemplatesGrids) {
  ASSERT_EQ(runError(args), "");
  auto d = l->dispatch(args.tokens);
  ASSERT_TRUE(bool(d));
  EXPECT_TRUE(d->notLaunched.empty());
  // The sort: 4 tokens are one token chunk, so sort_count and sort_scan have
  // empty grids and are not launched; sort alone sorts them.
  const auto &kernels = d->kernels->kernels;
  ASSERT_GE(kernels.size(), 3u);
  EXPECT_TRUE(llvm::StringRef(kernels[0]->meta.symbol).starts_with("moe_sort_count_"));
  EXPECT_TRUE(llvm::StringRef(kernels[1]->meta.symbol).starts_with("moe_sort_scan_"));
  ASSERT_EQ(backend.launches.size(), kernels.size() - 2);
  for (size_t i = 0; i < backend.launches.size(); ++i) {
    EXPECT_EQ(backend.launches[i].symbol, kernels[i + 2]->meta.symbol);
    EXPECT_EQ(int64_t(backend.launches[i].block.X), kernels[i + 2]->meta.blockSize);
  }
  auto ws = l->workspaceLayout(args.tokens);
  ASSERT_TRUE(bool(ws));
  const MoeSpec &s = d->spec;
  EXPECT_TRUE(llvm::StringRef(backend.launches[0].symbol).starts_with("moe_sort_e"));
  EXPECT_EQ(backend.launches[0].grid.X, 1u);
  EXPECT_EQ(int64_t(ws->sortCounts.bytes), 4 * s.problem.experts);
  EXPECT_EQ(int64_t(ws->sortTotals.bytes), 4 * s.problem.experts);
  // gfx950's stage 2 starts after stage 1: no stage_ready counters.
  EXPECT_EQ(ws->stageReady.bytes, 0u);
  EXPECT_EQ(ws->stageReadyCount, 0);
  // The GEMMs are persistent over M: at most 256 CUs x 4 workgroups, never
  // more rows than M tiles.
  const int64_t cap = 256 * moegen::kPersistentWorkgroupsPerCU;
  for (const auto &k : backend.launches)
    if (llvm::StringRef(k.symbol).starts_with("moe_stage1")) {
      int64_t n = s.problem.interDim / s.stage1.tileN;
      EXPECT_EQ(int64_t(k.grid.X), n);
      EXPECT_EQ(int64_t(k.grid.Y), std::min(ws->maxBlocks, cap / (n * s.stage1.kBatch)));
      EXPECT_EQ(int64_t(k.grid.Z), s.stage1.kBatch);
    } else if (llvm::StringRef(k.symbol).starts_with("moe_stage2")) {
      int64_t n = s.problem.modelDim / s.stage2.tileN;
      EXPECT_EQ(int64_t(k.grid.X), n);
      EXPECT_EQ(int64_t(k.grid.Y), std::min(ws->maxBlocks, cap / n));
    }
  // Atomic stage 2 on gfx950: the output is cleared first (sm_90a's stage 1
  // clears it itself: MoeLayerRun.Sm90aStage1ClearsTheOutput).
  ASSERT_EQ(s.stage2.reduce, ReduceMode::Atomic);
  bool cleared = false;
  for (auto [p, bytes] : backend.memsets)
    cleared |= p == args.output && bytes == size_t(args.tokens * s.problem.modelDim * 2);
  EXPECT_TRUE(cleared);
}

TEST_F(MoeLayerRun, Sm90aStage1ClearsTheOutput) {
  // On sm_90a stage 1 zeroes the output for the atomic stage 2 (its
  // clear_out, the last pointer before tokens): no memset of it.
  CompilerOptions o;
  o.diskCache = false;
  LayerOptions sm90;
  sm90.target.chip = "sm_90a";
  auto layer = MoeLayer::create(std::make_shared<Compiler>(o), backend, kimi(), sm90);
  ASSERT_TRUE(bool(layer)) << llvm::toString(layer.takeError());
  auto ws = (*layer)->workspaceLayout(args.tokens);
  ASSERT_TRUE(bool(ws));
  LayerArgs a = args;
  a.workspace = llvm::cantFail(backend.allocate(ws->total));
  a.workspaceBytes = ws->total;
  ASSERT_FALSE(bool((*layer)->run(a)));
  for (auto [p, bytes] : backend.memsets)
    EXPECT_NE(p, a.output);
  // Stage 2 follows stage 1 directly (the fused quantization writes its
  // rows): the sort, stage 1 and stage 2 share the stage_ready counters, one
  // per sorted block, bound just before tokens (templates/gemm/StageReady.h).
  ASSERT_EQ(int64_t(ws->stageReady.bytes), 4 * ws->maxBlocks);
  EXPECT_EQ(ws->stageReadyCount, kimi().problem.interDim / kimi().stage1.tileN);
  auto pointerAt = [](const auto &k, size_t index) {
    uint64_t p;
    std::memcpy(&p, k.kernarg.data() + index * 8, 8);
    return p;
  };
  const uint64_t ready = a.workspace + ws->stageReady.offset;
  int stage1Launches = 0, sharing = 0;
  for (const auto &k : backend.launches) {
    llvm::StringRef symbol(k.symbol);
    if (symbol.starts_with("moe_stage1")) {
      ++stage1Launches;
      ASSERT_EQ(k.kernarg.size(), 12 * 8 + 4u);
      EXPECT_EQ(pointerAt(k, 10), a.output);
      sharing += pointerAt(k, 11) == ready;
    } else if (symbol.starts_with("moe_stage2")) {
      ASSERT_EQ(k.kernarg.size(), 10 * 8 + 4u);
      sharing += pointerAt(k, 9) == ready;
    } else if (symbol.starts_with("moe_sort_e")) {
      ASSERT_EQ(k.kernarg.size(), 9 * 8 + 4u);
      sharing += pointerAt(k, 8) == ready;
    }
  }
  EXPECT_EQ(stage1Launches, 1);
  EXPECT_EQ(sharing, 3);
}

TEST_F(MoeLayerRun, Sm90aInterQuantCountsBlocksDownBetweenTheStages) {
  // Kimi a4w4 without stage 1's fused quantization: the inter-stage
  // quantization runs between the stages, a persistent grid over the sorted
  // blocks, and takes the last of each block's counter (stage 1's 12 N tiles + 1) before
  // stage 2 reads the block; with stage 2's wait = grid, no counters.
  MoeSpec spec = kimi();
  spec.stage1.fusedQuant = FusedQuant::None;
  LayerOptions sm90;
  sm90.target.chip = "sm_90a";
  auto layer = MoeLayer::create(memoryCompiler(), backend, spec, sm90);
  ASSERT_TRUE(bool(layer)) << llvm::toString(layer.takeError());
  auto ws = (*layer)->workspaceLayout(args.tokens);
  ASSERT_TRUE(bool(ws));
  ASSERT_EQ(int64_t(ws->stageReady.bytes), 4 * ws->maxBlocks);
  EXPECT_EQ(ws->stageReadyCount, spec.problem.interDim / spec.stage1.tileN + 1);
  EXPECT_EQ(ws->stageReadyQuant, 1);
  LayerArgs a = args;
  a.workspace = llvm::cantFail(backend.allocate(ws->total));
  a.workspaceBytes = ws->total;
  ASSERT_FALSE(bool((*layer)->run(a)));
  const uint64_t ready = a.workspace + ws->stageReady.offset;
  int quantLaunches = 0;
  for (const auto &k : backend.launches) {
    if (!llvm::StringRef(k.symbol).contains("_sorted_"))
      continue;
    ++quantLaunches;
    EXPECT_TRUE(llvm::StringRef(k.symbol).ends_with("_ready_bm32")) << k.symbol;
    // Persistent: two workgroups an SM of the default 256, fewer than the blocks.
    EXPECT_EQ(int64_t(k.grid.X), 256 * QuantPlan::kStageReadyWorkgroupsPerSM);
    EXPECT_GT(ws->maxBlocks, int64_t(k.grid.X));
    // x, q (decoded: no scales), sorted_ids, num_valid_ids, stage_ready, tokens.
    ASSERT_EQ(k.kernarg.size(), 5 * 8 + 4u);
    uint64_t p;
    std::memcpy(&p, k.kernarg.data() + 4 * 8, 8);
    EXPECT_EQ(p, ready);
  }
  EXPECT_EQ(quantLaunches, 1);

  spec.stage2.wait = Stage2Wait::Grid;
  auto after = MoeLayer::create(memoryCompiler(), backend, spec, sm90);
  ASSERT_TRUE(bool(after)) << llvm::toString(after.takeError());
  auto ws2 = (*after)->workspaceLayout(args.tokens);
  ASSERT_TRUE(bool(ws2));
  EXPECT_EQ(ws2->stageReady.bytes, 0u);
  EXPECT_EQ(ws2->stageReadyCount, 0);
  EXPECT_EQ(ws2->stageReadyQuant, 0);
}

TEST_F(MoeLayerRun, Sm90aCarriesMxActivationsDecoded) {
  // Kimi a4w4 on sm_90a: the input quantization writes bf16 rows (the
  // decoded values) and no scales, stage 1 reads them with the never-read
  // stand-in scale, and its fused quantization writes bf16 rows too; no
  // scale region is cleared.
  LayerOptions sm90;
  sm90.target.chip = "sm_90a";
  auto layer = MoeLayer::create(memoryCompiler(), backend, kimi(), sm90);
  ASSERT_TRUE(bool(layer)) << llvm::toString(layer.takeError());
  const MoeSpec spec = kimi();
  const int64_t T = args.tokens, K = spec.problem.modelDim, I = spec.problem.interDim;
  auto ws = (*layer)->workspaceLayout(T);
  ASSERT_TRUE(bool(ws));
  EXPECT_TRUE(ws->decodedMx);
  EXPECT_EQ(int64_t(ws->inputQ.bytes), T * K * 2);
  EXPECT_EQ(ws->inputQScale.bytes, 0u);
  EXPECT_EQ(int64_t(ws->stage1Out.bytes), T * spec.problem.topk * I * 2);
  EXPECT_FALSE(ws->stage1OutScale.zeroed);
  EXPECT_GT(ws->noScale.bytes, 0u);
  LayerArgs a = args;
  a.workspace = llvm::cantFail(backend.allocate(ws->total));
  a.workspaceBytes = ws->total;
  ASSERT_FALSE(bool((*layer)->run(a)));
  EXPECT_TRUE(backend.memsets.empty());
  auto pointerArg = [](const auto &launch, size_t i) {
    uint64_t v;
    std::memcpy(&v, launch.kernarg.data() + 8 * i, 8);
    return v;
  };
  int quant = 0, stage1 = 0;
  for (const auto &k : backend.launches) {
    llvm::StringRef symbol(k.symbol);
    if (symbol.starts_with("moe_quant")) {
      ++quant;
      EXPECT_EQ(symbol, "moe_quant_mxfp4_c" + std::to_string(K) + "_bf16");
      ASSERT_EQ(k.kernarg.size(), 2 * 8 + 4u); // x, q, rows
      EXPECT_EQ(pointerArg(k, 1), a.workspace + ws->inputQ.offset);
    } else if (symbol.starts_with("moe_stage1")) {
      ++stage1;
      EXPECT_EQ(pointerArg(k, 0), a.workspace + ws->inputQ.offset);
      EXPECT_EQ(pointerArg(k, 1), a.workspace + ws->noScale.offset);
    }
  }
  EXPECT_EQ(quant, 1);
  EXPECT_EQ(stage1, 1);
}

TEST_F(MoeLayerRun, LaunchersArePluggable) {
  NoteCapture notes;
  // A replaced launcher is used by layers that resolve a tier afterwards.
  registerFamilyLauncher(KernelFamily::Sort,
                         [](const MoeSpec &, const KernelSet &,
                            const TargetInfo &) -> llvm::Expected<FamilyLaunch> {
                           return FamilyLaunch{[](const LaunchShape &s) {
                                                 return Dim3{uint32_t(s.tokens), 1, 1};
                                               },
                                               {}};
                         });
  registerFamilyLauncher(KernelFamily::Stage2, nullptr); // and a family without one is reported
  CompilerOptions o;
  o.diskCache = false;
  auto layer = MoeLayer::create(std::make_shared<Compiler>(o), backend, kimi(), withKimiTable());
  ASSERT_TRUE(bool(layer));
  llvm::Error e = (*layer)->run(args);
  resetFamilyLaunchers();
  ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
  auto d = (*layer)->dispatch(args.tokens);
  ASSERT_TRUE(bool(d));
  EXPECT_EQ(d->notLaunched, std::vector<KernelFamily>{KernelFamily::Stage2});
  EXPECT_EQ(notes.log.count("no launcher for kernel family stage2"), 1u);
  // Without stage 2, and without sort_count and sort_scan (one token chunk).
  ASSERT_EQ(backend.launches.size(), d->kernels->kernels.size() - 3);
  ASSERT_GE(backend.launches.size(), 1u);
  EXPECT_TRUE(llvm::StringRef(backend.launches[0].symbol).starts_with("moe_sort_e"));
  EXPECT_EQ(backend.launches[0].grid.X, uint32_t(args.tokens));
  for (const auto &k : backend.launches)
    EXPECT_FALSE(llvm::StringRef(k.symbol).starts_with("moe_stage2"));
  // The output is not cleared for a stage 2 that does not run.
  for (auto [p, bytes] : backend.memsets)
    EXPECT_NE(p, args.output);
}

TEST_F(MoeLayerRun, ArgumentErrorsNameTheArgument) {
  LayerArgs a = args;
  a.tokens = 0;
  EXPECT_NE(runError(a).find("argument 'tokens' is 0"), std::string::npos);
  a = args;
  a.topkIds = 0;
  EXPECT_NE(runError(a).find("argument 'topkIds' is null"), std::string::npos);
  a = args;
  a.topkWeights += 2;
  EXPECT_NE(runError(a).find("argument 'topkWeights'"), std::string::npos);
  EXPECT_NE(runError(a).find("not 4-byte aligned"), std::string::npos);
  for (auto [field, name] : {std::pair{&LayerArgs::hidden, "hidden"},
                             {&LayerArgs::w1, "w1"},
                             {&LayerArgs::w1Scale, "w1Scale"},
                             {&LayerArgs::w2, "w2"},
                             {&LayerArgs::w2Scale, "w2Scale"},
                             {&LayerArgs::output, "output"}}) {
    a = args;
    a.*field = 0;
    EXPECT_NE(runError(a).find("argument '" + std::string(name) + "' is null"), std::string::npos)
        << name;
  }
  a = args;
  a.w1 += 8;
  EXPECT_NE(runError(a).find("argument 'w1' (0x"), std::string::npos);
  EXPECT_NE(runError(a).find("not 16-byte aligned"), std::string::npos);
  a = args;
  a.workspaceBytes = 100;
  EXPECT_NE(runError(a).find("argument 'workspaceBytes' is 100"), std::string::npos);
  a = args;
  a.workspace = 0;
  EXPECT_NE(runError(a).find("argument 'workspace' is null"), std::string::npos);
  a = args;
  a.workspace += 4;
  EXPECT_NE(runError(a).find("not 256-byte aligned"), std::string::npos);
  EXPECT_TRUE(backend.launches.empty()); // nothing ran
  EXPECT_EQ(runError(args), "");
}

std::string launchList(const std::vector<RecordingBackend::Launch> &launches) {
  std::string out;
  for (const RecordingBackend::Launch &k : launches)
    out += k.symbol + " " + std::to_string(k.grid.X) + "x" + std::to_string(k.grid.Y) + "x" +
           std::to_string(k.grid.Z) + "\n";
  return out;
}

TEST_F(MoeLayerRun, CapturedRunsLoadTheirKernelsFirstAndReplayAsRun) {
  // Two calls of two tiers: 4 tokens (resolved by SetUp) and 16 (not yet).
  LayerArgs more = args;
  more.tokens = 16;
  more.workspaceBytes = 1 << 24; // the recording backend's allocations are 16 MiB apart
  more.workspace = llvm::cantFail(backend.allocate(more.workspaceBytes));
  backend.log.clear();
  auto g = l->captureRuns({args, more});
  ASSERT_TRUE(bool(g)) << llvm::toString(g.takeError());
  EXPECT_TRUE(backend.launches.empty()); // recorded, not run
  // Kernels are loaded before the capture; inside it only memsets and launches.
  auto begin = llvm::find(backend.log, "begin capture"),
       end = llvm::find(backend.log, "end capture");
  ASSERT_NE(begin, backend.log.end());
  ASSERT_NE(end, backend.log.end());
  EXPECT_GT(std::count(backend.log.begin(), begin, "load"), 0);
  EXPECT_EQ(std::count(begin, end, "load"), 0);
  for (auto it = begin + 1; it != end; ++it)
    EXPECT_TRUE(*it == "launch" || *it == "memset") << *it;
  EXPECT_EQ(end + 1, backend.log.end());

  // A replay issues what the two runs issue, in order.
  ASSERT_FALSE(bool(l->run(args)));
  ASSERT_FALSE(bool(l->run(more)));
  std::string direct = launchList(backend.launches);
  EXPECT_NE(direct.find("moe_stage2_"), std::string::npos);
  backend.launches.clear();
  ASSERT_FALSE(bool(backend.launchGraph(*g)));
  EXPECT_EQ(launchList(backend.launches), direct);
  ASSERT_FALSE(bool(backend.launchGraph(*g)));
  EXPECT_EQ(launchList(backend.launches), direct + direct);
}

TEST_F(MoeLayerRun, ARunInsideACaptureNeedsItsTierResolved) {
  LayerArgs unresolved = args;
  unresolved.tokens = 64;
  backend.log.clear();
  auto g = backend.captureGraph([&] { return l->run(unresolved); });
  ASSERT_FALSE(bool(g));
  EXPECT_EQ(llvm::toString(g.takeError()),
            "MoeLayer::run: 64 tokens (tier 64) during a graph capture, but the tier's kernels "
            "are not loaded yet; resolve it before the capture (dispatch(64), or captureRuns)");
  EXPECT_EQ(llvm::count(backend.log, "load"), 0);
  // A resolved tier records.
  ASSERT_TRUE(bool(l->dispatch(args.tokens)));
  auto ok = backend.captureGraph([&] { return l->run(args); });
  EXPECT_TRUE(bool(ok)) << llvm::toString(ok.takeError());
}

TEST_F(MoeLayerRun, CaptureRunsErrors) {
  auto none = l->captureRuns({});
  ASSERT_FALSE(bool(none));
  EXPECT_EQ(llvm::toString(none.takeError()), "MoeLayer::captureRuns: argument 'calls' is empty");
  LayerArgs bad = args;
  bad.output = 0;
  auto refused = l->captureRuns({args, bad});
  ASSERT_FALSE(bool(refused));
  EXPECT_NE(llvm::toString(refused.takeError()).find("argument 'output' is null"),
            std::string::npos);
  EXPECT_FALSE(backend.capturing()); // the capture ended
  EXPECT_TRUE(backend.launches.empty());
  backend.hasGraphs = false;
  auto unsupported = l->captureRuns({args});
  ASSERT_FALSE(bool(unsupported));
  EXPECT_EQ(
      llvm::toString(unsupported.takeError()),
      "recording backend: device graphs are not supported (the cuda and hip backends have them)");
}

} // namespace
