//===- AotLayerCheckTest.cpp - The layer check on a prefilled cache -------===//
//
// What moegen-layer-check does on a GPU machine, without MLIR in this
// program: the kernels come from a cache that the JIT filled in another
// process (moegen-test-prefill), MoeLayer::run launches them, every stage is
// compared with the reference; timing rotates over input copies between
// device events (the stand-in libcuda's clock), and the emu backend refuses
// to time.
//
//===----------------------------------------------------------------------===//

#include "compiler/spec/DslParser.h"
#include "runtime/api/Backends.h"
#include "runtime/check/LayerCheck.h"
#include "runtime/cuda/CudaBackend.h"
#include "runtime/dispatch/Lookup.h"
#include "tune/Measured.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

using namespace moegen;

namespace {

std::string sourceDir() {
  const char *src = std::getenv("MOEGEN_SOURCE_DIR");
  return src ? src : ".";
}

std::string smallSpecPath() { return sourceDir() + "/test/lit/Inputs/small.moe"; }

/// A fresh private directory, removed at the end.
struct TempDir {
  std::string path;
  TempDir() {
    llvm::SmallString<128> p;
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("moegen-aot-check", p));
    path = std::string(p);
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
};

/// Fills `dir` with the JIT in another process.
void prefill(const std::string &dir, llvm::ArrayRef<std::string> extra) {
  std::string spec = smallSpecPath();
  std::vector<llvm::StringRef> args = {MOEGEN_TEST_PREFILL, spec, dir};
  for (const std::string &a : extra)
    args.push_back(a);
  std::string err;
  int rc = llvm::sys::ExecuteAndWait(MOEGEN_TEST_PREFILL, args, std::nullopt, {}, 0, 0, &err);
  ASSERT_EQ(rc, 0) << err;
}

MoeSpec smallSpec(llvm::ArrayRef<std::string> sets = {}) {
  auto spec = loadMoeSpec(smallSpecPath(), sets);
  EXPECT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  return *spec;
}

LayerCheckOptions fromCache(const std::string &dir) {
  LayerCheckOptions o;
  runtime::KernelSourceOptions k;
  k.cacheDir = dir;
  o.kernels = std::make_shared<runtime::KernelSource>(k);
  o.tokens = 5;
  o.seed = 3;
  return o;
}

std::unique_ptr<runtime::Backend> emuBackend() {
  auto b = runtime::createBackend("emu");
  EXPECT_TRUE(bool(b)) << llvm::toString(b.takeError());
  return std::move(*b);
}

TEST(AotLayerCheck, NeedsAKernelSource) {
  auto emu = emuBackend();
  LayerCheckOptions o;
  o.tokens = 2;
  auto r = runLayerCheck(smallSpec(), *emu, o);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("no kernel source"), std::string::npos);
}

TEST(AotLayerCheck, ALayerMissingFromTheCacheNamesItsKeyAndTheDirectory) {
  TempDir dir;
  auto emu = emuBackend();
  auto r = runLayerCheck(smallSpec(), *emu, fromCache(dir.path));
  ASSERT_FALSE(bool(r));
  std::string msg = llvm::toString(r.takeError());
  EXPECT_NE(
      msg.find("layer 'small' for amdgcn-amd-amdhsa--gfx950;cov6 is not in the kernel cache '" +
               dir.path),
      std::string::npos)
      << msg;
  EXPECT_NE(msg.find("(key "), std::string::npos) << msg;
}

TEST(AotLayerCheck, ATunedRowMissingFromTheCacheIsNamedFirst) {
  // The row's kernels are the usual miss (a cache prefilled without that
  // table): the error names the row before the spec's own schedules.
  TempDir dir;
  auto emu = emuBackend();
  LayerCheckOptions o = fromCache(dir.path);
  o.target.chip = "sm_90a";
  o.cuNum = 132;
  o.tokens = 4;
  std::string table =
      sourceDir() + "/test/lit/Inputs/small-sm90a-tables/a/small_sm90a_tuned_fmoe.csv";
  o.tunedTables = {table};
  auto r = runLayerCheck(smallSpec(), *emu, o);
  ASSERT_FALSE(bool(r));
  std::string msg = llvm::toString(r.takeError());
  EXPECT_EQ(msg.find("MoeLayer: no kernels at 4 tokens: " + table +
                     ":3 has no kernels: layer "
                     "'small' for nvptx64-nvidia-cuda--sm_90a;cov6 is not in the kernel cache"),
            0u)
      << msg;
  EXPECT_NE(msg.find("; nor for the layer's own schedules: layer 'small'"), std::string::npos)
      << msg;
}

TEST(AotLayerCheck, APrefilledCacheRunsOnEmuAndMatchesTheReference) {
  TempDir dir;
  prefill(dir.path, {});
  auto emu = emuBackend();
  auto r = runLayerCheck(smallSpec(), *emu, fromCache(dir.path));
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_TRUE(r->passed()) << r->table();
  std::vector<std::string> stages;
  for (const StageCheck &s : r->stages)
    stages.push_back(s.stage);
  EXPECT_EQ(llvm::join(stages, ","), "sort,quant1,stage1,stage2,layer");
  EXPECT_TRUE(r->notRun.empty());
  EXPECT_FALSE(r->timing);
}

TEST(AotLayerCheck, APartOfTheTokensIsComparedAfterTheWholeSorting) {
  TempDir dir;
  prefill(dir.path, {});
  auto emu = emuBackend();
  LayerCheckOptions o = fromCache(dir.path);
  o.tokens = 40;
  o.checkTokens = 6;
  auto part = runLayerCheck(smallSpec(), *emu, o);
  ASSERT_TRUE(bool(part)) << llvm::toString(part.takeError());
  EXPECT_TRUE(part->passed()) << part->table();
  EXPECT_EQ(part->tokens, 40);
  EXPECT_EQ(part->checkedTokens, 6);
  o.checkTokens = 0;
  auto all = runLayerCheck(smallSpec(), *emu, o);
  ASSERT_TRUE(bool(all)) << llvm::toString(all.takeError());
  EXPECT_TRUE(all->passed()) << all->table();
  EXPECT_EQ(all->checkedTokens, 40);
  ASSERT_EQ(part->stages.size(), all->stages.size());
  const int64_t K = smallSpec().problem.modelDim;
  for (size_t i = 0; i < all->stages.size(); ++i) {
    const StageCheck &p = part->stages[i], &a = all->stages[i];
    ASSERT_EQ(p.stage, a.stage);
    if (p.stage == "sort") // always whole
      EXPECT_EQ(p.result.compared, a.result.compared);
    else
      EXPECT_LT(p.result.compared, a.result.compared) << p.stage;
  }
  EXPECT_EQ(all->stages.back().stage, "layer");
  EXPECT_EQ(all->stages.back().result.compared, 40 * K);
  EXPECT_EQ(part->stages.back().result.compared, 6 * K);
}

TEST(AotLayerCheck, ChecksOfOneProblemShareTheGeneratedInputs) {
  // A tuner's candidates: two schedules of one layer at one token count draw
  // the inputs once; another seed draws (and keeps) its own. The shared set
  // gives the same comparisons as a check that drew its own.
  TempDir dir;
  std::vector<std::string> other = {"stage2.tile=32x64x128"};
  prefill(dir.path, {});
  prefill(dir.path, {"--set", other[0]});
  auto emu = emuBackend();
  auto cache = std::make_shared<GeneratedInputsCache>();
  LayerCheckOptions o = fromCache(dir.path);
  o.inputsCache = cache;
  auto first = runLayerCheck(smallSpec(), *emu, o);
  ASSERT_TRUE(bool(first)) << llvm::toString(first.takeError());
  EXPECT_EQ(cache->hits(), 0);
  auto second = runLayerCheck(smallSpec(other), *emu, o);
  ASSERT_TRUE(bool(second)) << llvm::toString(second.takeError());
  EXPECT_TRUE(second->passed()) << second->table();
  EXPECT_EQ(cache->hits(), 1);
  LayerCheckOptions own = fromCache(dir.path);
  auto alone = runLayerCheck(smallSpec(other), *emu, own);
  ASSERT_TRUE(bool(alone)) << llvm::toString(alone.takeError());
  ASSERT_EQ(alone->stages.size(), second->stages.size());
  for (size_t i = 0; i < alone->stages.size(); ++i) {
    EXPECT_EQ(alone->stages[i].result.compared, second->stages[i].result.compared);
    EXPECT_EQ(alone->stages[i].result.mismatches, second->stages[i].result.mismatches);
    EXPECT_EQ(alone->stages[i].result.maxAbs, second->stages[i].result.maxAbs);
  }
  o.seed = 4;
  ASSERT_TRUE(bool(runLayerCheck(smallSpec(), *emu, o)));
  EXPECT_EQ(cache->hits(), 1);
  o.seed = 3; // the seed-3 set was released for seed 4's
  ASSERT_TRUE(bool(runLayerCheck(smallSpec(), *emu, o)));
  EXPECT_EQ(cache->hits(), 1);
}

TEST(AotLayerCheck, ChecksOfOneProblemShareThePackedWeights) {
  // The packed weights stay on the device for the next check of the same
  // inputs, another schedule (block_m 64 here) included; another seed packs
  // its own (a stale set would fail the check), and the cache holds one set.
  TempDir dir;
  std::vector<std::string> other = {"stage1.tile=64x32x128; stage2.tile=64x64x128"};
  prefill(dir.path, {});
  prefill(dir.path, {"--set", other[0]});
  auto emu = emuBackend();
  auto weights = std::make_shared<DeviceWeightsCache>();
  LayerCheckOptions o = fromCache(dir.path);
  o.inputsCache = std::make_shared<GeneratedInputsCache>();
  o.weightsCache = weights;
  auto first = runLayerCheck(smallSpec(), *emu, o);
  ASSERT_TRUE(bool(first)) << llvm::toString(first.takeError());
  EXPECT_TRUE(first->passed()) << first->table();
  EXPECT_EQ(weights->hits(), 0);
  auto second = runLayerCheck(smallSpec(other), *emu, o);
  ASSERT_TRUE(bool(second)) << llvm::toString(second.takeError());
  EXPECT_TRUE(second->passed()) << second->table();
  EXPECT_EQ(weights->hits(), 1);
  LayerCheckOptions own = fromCache(dir.path);
  auto alone = runLayerCheck(smallSpec(other), *emu, own);
  ASSERT_TRUE(bool(alone)) << llvm::toString(alone.takeError());
  ASSERT_EQ(alone->stages.size(), second->stages.size());
  for (size_t i = 0; i < alone->stages.size(); ++i) {
    EXPECT_EQ(alone->stages[i].result.mismatches, second->stages[i].result.mismatches);
    EXPECT_EQ(alone->stages[i].result.maxAbs, second->stages[i].result.maxAbs);
  }
  o.seed = 7;
  auto reseeded = runLayerCheck(smallSpec(), *emu, o);
  ASSERT_TRUE(bool(reseeded)) << llvm::toString(reseeded.takeError());
  EXPECT_TRUE(reseeded->passed()) << reseeded->table();
  EXPECT_EQ(weights->hits(), 1);
  o.tokens = 9; // another token count: other routed experts
  auto fewer = runLayerCheck(smallSpec(), *emu, o);
  ASSERT_TRUE(bool(fewer)) << llvm::toString(fewer.takeError());
  EXPECT_TRUE(fewer->passed()) << fewer->table();
  EXPECT_EQ(weights->hits(), 1);
}

TEST(SpreadTokens, EvenlySpacedWithBothEnds) {
  EXPECT_EQ(spreadTokens(10, 0), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(spreadTokens(3, 5), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(spreadTokens(100, 4), (std::vector<int64_t>{0, 33, 66, 99}));
  EXPECT_EQ(spreadTokens(100, 1), (std::vector<int64_t>{0}));
  EXPECT_EQ(spreadTokens(5, 4), (std::vector<int64_t>{0, 1, 2, 4}));
}

TEST(AotLayerCheck, SomeFamiliesCheckTheirStagesAndListTheRest) {
  // Without fused quantization the layer has quant_inter; run only the
  // quantizations: quant2 quantizes the reference's stage-1 output.
  TempDir dir;
  std::vector<std::string> sets = {"stage1.fused_quant=none"};
  prefill(dir.path, {"gfx950", "quant_input,quant_inter", "--set", sets[0]});
  auto emu = emuBackend();
  LayerCheckOptions o = fromCache(dir.path);
  o.families = {KernelFamily::QuantInput, KernelFamily::QuantInter};
  auto r = runLayerCheck(smallSpec(sets), *emu, o);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_TRUE(r->passed()) << r->table();
  std::vector<std::string> stages;
  for (const StageCheck &s : r->stages)
    stages.push_back(s.stage);
  EXPECT_EQ(llvm::join(stages, ","), "quant1,quant2");
  EXPECT_EQ(llvm::join(r->notRun, ","), "sort,stage1,stage2,layer");
  // The whole layer is another cache entry: not there.
  o.families.clear();
  auto whole = runLayerCheck(smallSpec(sets), *emu, o);
  ASSERT_FALSE(bool(whole));
  EXPECT_NE(llvm::toString(whole.takeError()).find("is not in the kernel cache"),
            std::string::npos);
}

TEST(AotLayerCheck, EmuRefusesToTimeBeforeRunning) {
  auto emu = emuBackend();
  LayerCheckOptions o = fromCache("/nonexistent-moegen-cache");
  o.timedRuns = 3;
  auto r = runLayerCheck(smallSpec(), *emu, o);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("emu backend: cannot time kernels"),
            std::string::npos);
}

TEST(AotLayerCheck, TimedRunsRotateOverCopiesBetweenEvents) {
  // The sm_90a input quantization, from the cache, on the stand-in libcuda
  // (whose clock advances 1.5 ms per launch and which runs no kernel).
  TempDir dir;
  prefill(dir.path, {"sm_90a", "quant_input"});
  ::setenv("MOEGEN_CUDA_LIB", MOEGEN_FAKE_CUDA, 1);
  auto cuda = runtime::createCudaBackend();
  ASSERT_TRUE(bool(cuda)) << llvm::toString(cuda.takeError());
  LayerCheckOptions o = fromCache(dir.path);
  o.target.chip = "sm_90a";
  o.families = {KernelFamily::QuantInput};
  o.timedRuns = 5;
  o.warmupRuns = 2;
  o.rotateBytes = 4 << 20;
  auto r = runLayerCheck(smallSpec(), **cuda, o);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  ASSERT_TRUE(r->timing);
  const LayerTiming &t = *r->timing;
  EXPECT_EQ(t.runsMs, std::vector<float>(5, 1.5f)); // one launch per run
  EXPECT_EQ(t.medianMs(), 1.5f);
  EXPECT_EQ(t.minMs(), 1.5f);
  ASSERT_GT(t.copyBytes, 0u);
  // Enough copies to exceed the bytes to rotate over, never fewer than two.
  EXPECT_GE(size_t(t.copies) * t.copyBytes, o.rotateBytes);
  EXPECT_GE(t.copies, 2);
  EXPECT_LE(size_t(t.copies - 1) * t.copyBytes, o.rotateBytes);
  EXPECT_EQ(llvm::join(r->notRun, ","), "sort,stage1,stage2,layer");
}

TEST(LayerTiming, MedianAndMinimum) {
  LayerTiming t;
  t.runsMs = {3, 1, 2, 10};
  EXPECT_EQ(t.medianMs(), 2.5f);
  EXPECT_EQ(t.minMs(), 1.0f);
  t.runsMs = {4, 2, 9};
  EXPECT_EQ(t.medianMs(), 4.0f);
}

} // namespace

namespace {

/// Launch times of the stand-in driver by kernel name, for one test.
struct FakeLaunchTimes {
  explicit FakeLaunchTimes(const char *rules) { ::setenv("FAKE_CUDA_LAUNCH_MS", rules, 1); }
  ~FakeLaunchTimes() { ::unsetenv("FAKE_CUDA_LAUNCH_MS"); }
};

std::unique_ptr<runtime::Backend> fakeCuda() {
  ::setenv("MOEGEN_CUDA_LIB", MOEGEN_FAKE_CUDA, 1);
  auto cuda = runtime::createCudaBackend();
  EXPECT_TRUE(bool(cuda)) << llvm::toString(cuda.takeError());
  return cuda ? std::move(*cuda) : nullptr;
}

/// sm_90a kernels from `dir`, three runs timed step by step.
LayerCheckOptions timedStepsFrom(const std::string &dir) {
  LayerCheckOptions o = fromCache(dir);
  o.target.chip = "sm_90a";
  o.timedRuns = 3;
  o.warmupRuns = 1;
  o.rotateBytes = 1 << 20;
  o.timeSteps = true;
  return o;
}

TEST(MeasuredTune, EachStepIsTimedAndChargedToItsStage) {
  // The whole sm_90a layer; the stand-in driver's launches take 4 ms for
  // stage 1, 2 ms for stage 2, 0.5 ms for a quantization, 1.5 ms else; a
  // clear takes no time on its clock.
  TempDir dir;
  prefill(dir.path, {"sm_90a"});
  FakeLaunchTimes times("moe_stage1_=4,moe_stage2_=2,moe_quant_=0.5");
  auto cuda = fakeCuda();
  LayerCheckOptions o = timedStepsFrom(dir.path);
  auto r = runLayerCheck(smallSpec(), *cuda, o);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_FALSE(r->passed()); // the stand-in runs no kernel
  ASSERT_TRUE(r->timing);
  const LayerTiming &t = *r->timing;
  ASSERT_EQ(t.stepMs.size(), 3u);
  double want1 = 0, want2 = 0;
  std::vector<std::string> names;
  for (size_t i = 0; i < t.steps.size(); ++i) {
    const runtime::RunStep &s = t.steps[i];
    float ms = s.kind == runtime::RunStep::Kind::Clear ? 0
               : s.family == KernelFamily::Stage1      ? 4
               : s.family == KernelFamily::Stage2      ? 2
               : s.family == KernelFamily::QuantInput || s.family == KernelFamily::QuantInter
                   ? 0.5f
                   : 1.5f;
    for (const std::vector<float> &run : t.stepMs)
      EXPECT_EQ(run[i], ms) << "step " << i << " (" << toString(s.family).str() << ")";
    (tune::measuredStage(s.family) == 1 ? want1 : want2) += ms * 1000;
    names.push_back((s.kind == runtime::RunStep::Kind::Clear ? "clear:" : "") +
                    toString(s.family).str());
  }
  // The small layer at 5 tokens on sm_90a: nothing cleared (MX activations
  // carried decoded have no scales; stage 1 zeroes the atomic output
  // itself); one sort chunk (count and scan have nothing to do).
  EXPECT_EQ(llvm::join(names, ","), "sort,quant_input,stage1,stage2");
  tune::StageTimes st = tune::measuredStageTimes(t);
  EXPECT_EQ(st.us1, want1); // sort 1.5 + quant_input 0.5 + stage1 4 ms
  EXPECT_EQ(st.us2, want2); // stage2 2 ms
  EXPECT_EQ(st.us1, 6000);
  EXPECT_EQ(st.us2, 2000);
  // Whole runs still measured start to end.
  EXPECT_EQ(t.medianMs(), 8.0f);
  EXPECT_TRUE(t.graphCallMs.empty()); // no graph asked for

  // The same layer replayed as a graph of one run per copy: each replay's
  // time is over its calls, the stand-in's clock the same launches.
  o.graphReplays = 4;
  auto g = runLayerCheck(smallSpec(), *cuda, o);
  ASSERT_TRUE(bool(g)) << llvm::toString(g.takeError());
  ASSERT_TRUE(g->timing);
  EXPECT_GE(g->timing->copies, 2);
  ASSERT_EQ(g->timing->graphCallMs.size(), 4u);
  for (float ms : g->timing->graphCallMs)
    EXPECT_FLOAT_EQ(ms, 8.0f);
  EXPECT_FLOAT_EQ(g->timing->medianGraphCallMs(), 8.0f);
  // moegen-layer-check --time-steps prints each step's median in launch order.
  EXPECT_EQ(t.stepTable(), "  sort                            1.5000 ms\n"
                           "  quant_input                     0.5000 ms\n"
                           "  stage1                          4.0000 ms\n"
                           "  stage2                          2.0000 ms\n"
                           "  sum of the step medians         8.0000 ms\n");
}

// moegen-layer-check --retime: a tuned row's own kernels timed again. The
// stand-in driver's launches take 4 ms (stage 1), 2 ms (stage 2), 0.5 ms (a
// quantization), 1.5 ms else; it runs no kernel, so the check fails and the
// row keeps its times. The same timing with every stage passed retimes it:
// us1 / us2 as moegen tune splits them, the schedules and the tag kept.
TEST(MeasuredTune, ARetimedRowKeepsItsSchedulesAndTakesTheStepTimes) {
  TempDir dir;
  prefill(dir.path, {"sm_90a"});
  FakeLaunchTimes times("moe_stage1_=4,moe_stage2_=2,moe_quant_=0.5");
  auto cuda = fakeCuda();
  LayerCheckOptions o = timedStepsFrom(dir.path);
  MoeSpec spec = smallSpec();
  auto r = runLayerCheck(spec, *cuda, o);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  ASSERT_TRUE(r->timing);

  auto key = dispatch::aiterKeyFor(spec, "sm_90a", 132);
  ASSERT_TRUE(bool(key)) << llvm::toString(key.takeError());
  key->token = 5;
  tune::TunedResult old;
  old.key = *key;
  old.blockM = 32;
  old.us1 = 1.0;
  old.us2 = 1.0;
  old.kernelName1 = "flydsl_moe1_afp4_wfp4_bf16_t32x32x256_w4_fp4";
  old.kernelName2 = "flydsl_moe2_afp4_wfp4_bf16_t32x128x128_atomic_sbm32";
  old.tag = "ours";
  tune::MergeReport none;
  auto table = dispatch::TunedTable::parse(tune::mergeTunedRows(nullptr, {old}, none), "t.csv");
  ASSERT_TRUE(bool(table)) << llvm::toString(table.takeError());
  const dispatch::TunedRow &row = *table->rows()[0];

  auto failed = tune::retimedRow(row, spec, *r);
  ASSERT_FALSE(bool(failed));
  EXPECT_NE(llvm::toString(failed.takeError()).find("t.csv:2: its check failed (sort"),
            std::string::npos);

  LayerCheckResult passed = *r;
  for (StageCheck &s : passed.stages) {
    s.result.passed = true;
    s.result.mismatches = 0;
  }
  ASSERT_TRUE(passed.passed());
  auto retimed = tune::retimedRow(row, spec, passed);
  ASSERT_TRUE(bool(retimed)) << llvm::toString(retimed.takeError());
  EXPECT_EQ(retimed->us1, 6000); // sort 1.5 + quant_input 0.5 + stage1 4 ms
  EXPECT_EQ(retimed->us2, 2000);
  tune::MergeReport merge;
  auto out = dispatch::TunedTable::parse(tune::mergeTunedRows(&*table, {*retimed}, merge), "o.csv");
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  EXPECT_EQ(merge.replaced, 1); // slower than the row, and still written
  ASSERT_EQ(out->rows().size(), 1u);
  const dispatch::TunedRow &now = *out->rows()[0];
  EXPECT_EQ(now.get("us1"), "6000.0000");
  EXPECT_EQ(now.get("us2"), "2000.0000");
  EXPECT_EQ(now.get("us"), "8000.0000");
  EXPECT_EQ(now.get("err1"), "0.0%");
  EXPECT_EQ(now.get("kernelName1"), old.kernelName1);
  EXPECT_EQ(now.get("kernelName2"), old.kernelName2);
  EXPECT_EQ(now.get("block_m"), "32");
  EXPECT_EQ(now.get("_tag"), "ours");
  // 6 x 5 tokens x top-2 x inter_dim x model_dim FLOPs in 8 ms.
  const Problem &p = spec.problem;
  double tflops = 6.0 * 5 * p.topk * p.interDim * p.modelDim / 8e-3 / 1e12;
  EXPECT_EQ(now.get("tflops"), llvm::formatv("{0:f2}", tflops).str());
}

/// Two stage-1 and two stage-2 schedules on block_m 32 and their four pairs,
/// prefilled into `dir` for sm_90a with their manifest: stage 1 of a.moe
/// (the spec's, t32x32x256, candidate 0, kernel_a) or of b.moe (t32x64x256,
/// candidate 1, kernel_b); stage 2 of a.moe (t32x128x128, candidate 2,
/// kernel_c) or of d.moe (t32x64x128, candidate 3, kernel_d); at 5 tokens.
void prefillFourPairs(const TempDir &dir) {
  const std::vector<std::string> s1b = {"--set", "stage1.tile=32x64x256"},
                                 s2d = {"--set", "stage2.tile=32x64x128"};
  std::vector<std::string> both = s1b;
  both.insert(both.end(), s2d.begin(), s2d.end());
  auto write = [&](const std::string &file, const std::vector<std::string> &sets) {
    std::vector<std::string> kv;
    for (size_t i = 1; i < sets.size(); i += 2)
      kv.push_back(sets[i]);
    std::error_code ec;
    llvm::raw_fd_ostream os(dir.path + "/" + file, ec);
    ASSERT_FALSE(ec);
    os << printMoeSpec(smallSpec(kv));
    std::vector<std::string> args = {"sm_90a"};
    args.insert(args.end(), sets.begin(), sets.end());
    prefill(dir.path, args);
  };
  write("a.moe", {});
  write("b.moe", s1b);
  write("d.moe", s2d);
  write("bd.moe", both);
  std::string manifest = "moegen-tune-manifest\t1\nspec\ta.moe\ntarget\tsm_90a\tsm_90a\t132\n"
                         "tokens\t5\n"
                         "candidate\t0\ts1\t32\ta.moe\tkernel_a\ts1 a\n"
                         "candidate\t1\ts1\t32\tb.moe\tkernel_b\ts1 b\n"
                         "candidate\t2\ts2\t32\ta.moe\tkernel_c\ts2 c\n"
                         "candidate\t3\ts2\t32\td.moe\tkernel_d\ts2 d\n"
                         "order\t5\t0,1,2,3\n"
                         "pair\t32\t0\t2\ta.moe\ts1 a\n"
                         "pair\t32\t0\t3\td.moe\ts2 d\n"
                         "pair\t32\t1\t2\tb.moe\ts1 b\n"
                         "pair\t32\t1\t3\tbd.moe\tlayer b + d\n";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(dir.path + "/" + tune::kManifestName, ec);
    ASSERT_FALSE(ec);
    os << manifest;
  }
}

/// The four pairs' cache, the stand-in driver, and tuning options that
/// measure from the cache into DIR/tuned.csv.
struct FourPairTune : testing::Test {
  TempDir dir;
  std::unique_ptr<runtime::Backend> cuda = fakeCuda();
  std::shared_ptr<runtime::KernelSource> kernels;
  tune::MeasuredTuneOptions o;
  void SetUp() override {
    prefillFourPairs(dir);
    runtime::KernelSourceOptions k;
    k.cacheDir = dir.path;
    kernels = std::make_shared<runtime::KernelSource>(k);
    o.manifestDir = dir.path;
    o.outPath = dir.path + "/tuned.csv";
    o.tag = "moegen_cuda_sm_90a";
  }
  /// Runs the tuning and returns its output; every token count must get a row.
  std::string tuneAll() {
    std::string log;
    llvm::raw_string_ostream out(log);
    auto missing = tune::runMeasuredTune(o, kernels, *cuda, out);
    if (!missing)
      ADD_FAILURE() << llvm::toString(missing.takeError());
    else
      EXPECT_EQ(*missing, 0u) << log;
    return log;
  }
};

TEST_F(FourPairTune, TheFastestMeasuredCandidateOfEachStageWins) {
  // The stand-in driver's clock makes the spec's own stage 1 (t32x32x256)
  // the slower one and stage 2 t32x64x128 the faster.
  FakeLaunchTimes times("t32x32x256=9,t32x64x256=3,t32x128x128=5,t32x64x128=1,moe_=0");
  o.timedRuns = 3;
  o.warmupRuns = 1;
  o.rotateBytes = 1 << 20;
  // The stand-in runs no kernel, so its checks fail: this measurer takes the
  // times from the stand-in's clock and calls every layer correct but the
  // one whose stage 2 is t32x256x128 (none here).
  std::vector<std::string> measured;
  o.measurer = [&](const MoeSpec &layer, int64_t T, bool) -> llvm::Expected<tune::Measurement> {
    LayerCheckOptions c;
    c.tokens = T;
    c.kernels = kernels;
    c.target.chip = "sm_90a";
    c.timedRuns = 3;
    c.warmupRuns = 1;
    c.rotateBytes = 1 << 20;
    c.timeSteps = true;
    auto r = runLayerCheck(layer, *cuda, c);
    if (!r)
      return r.takeError();
    tune::Measurement m;
    m.check.passed = true;
    m.times = tune::measuredStageTimes(*r->timing);
    measured.push_back(llvm::formatv("{0}x{1}x{2}/{3}x{4}x{5}", layer.stage1.tileM,
                                     layer.stage1.tileN, layer.stage1.tileK, layer.stage2.tileM,
                                     layer.stage2.tileN, layer.stage2.tileK)
                           .str());
    return m;
  };
  std::string log = tuneAll();
  // The baseline, the four candidates (a.moe is measured once: the journal
  // keys by id, and "s1 a" and "s2 c" are two ids of one layer), the pair.
  EXPECT_EQ(llvm::join(measured, ","), "32x32x256/32x128x128,32x32x256/32x128x128,"
                                       "32x64x256/32x128x128,32x32x256/32x128x128,"
                                       "32x32x256/32x64x128,32x64x256/32x64x128");
  auto csv = llvm::MemoryBuffer::getFile(o.outPath);
  ASSERT_TRUE(bool(csv));
  llvm::StringRef row = (*csv)->getBuffer().split('\n').second;
  // Stage 1 of b (3 ms) and stage 2 of d (1 ms), measured as one layer.
  EXPECT_NE(row.find(",3000.0000,kernel_b,0.0%,1000.0000,kernel_d,0.0%,4000.0000,"),
            llvm::StringRef::npos)
      << row.str();
  EXPECT_TRUE(row.trim().ends_with(",moegen_cuda_sm_90a")) << row.str();
  EXPECT_NE(log.find("| 5 | 32 | 3000.0 | 1000.0 | 4000.0 | 9000.0 | 5000.0 | 14000.0 | 3.50x |"),
            std::string::npos)
      << log;
}

/// Graph times by the stages' tiles: stage 1 a 4000 or b 7000, stage 2 c
/// `cUs` or d 1000; step times a 9000, b 3000, c 5000, d 1000.
std::function<llvm::Expected<tune::Measurement>(const MoeSpec &, int64_t, bool)>
tileMeasurer(double cUs) {
  return [cUs](const MoeSpec &layer, int64_t, bool graph) -> llvm::Expected<tune::Measurement> {
    bool a = layer.stage1.tileN == 32, c = layer.stage2.tileN == 128;
    tune::Measurement m;
    m.check.passed = true;
    m.times.us1 = a ? 9000 : 3000;
    m.times.us2 = c ? 5000 : 1000;
    if (graph)
      m.graphUs = (a ? 4000 : 7000) + (c ? cUs : 1000);
    return m;
  };
}

TEST_F(FourPairTune, GraphRankChoosesThePairFastestOverGraphReplays) {
  // By the step times stage 1 of b (3 ms) beats a's (9 ms) and stage 2 of d
  // (1 ms) c's (5 ms), as a tuner timing step by step would pick b + d; over
  // graph replays a + d is the fastest layer (the times are the measurer's,
  // by the stages' tiles).
  std::vector<std::string> measured;
  auto times = tileMeasurer(3000);
  o.measurer = [&](const MoeSpec &layer, int64_t T,
                   bool graph) -> llvm::Expected<tune::Measurement> {
    bool a = layer.stage1.tileN == 32, c = layer.stage2.tileN == 128;
    measured.push_back(std::string(a ? "a" : "b") + (c ? "c" : "d") + (graph ? " graph" : ""));
    return times(layer, T, graph);
  };
  // First by the step times: b + d, 4 ms.
  std::string log = tuneAll();
  EXPECT_EQ(llvm::join(measured, ","), "ac,ac,bc,ac,ad,bd") << log;
  auto rowOf = [&]() {
    auto csv = llvm::MemoryBuffer::getFile(o.outPath);
    EXPECT_TRUE(bool(csv));
    return csv ? (*csv)->getBuffer().split('\n').second.str() : std::string();
  };
  EXPECT_NE(rowOf().find(",3000.0000,kernel_b,0.0%,1000.0000,kernel_d,0.0%,4000.0000,"),
            std::string::npos)
      << rowOf();

  // Then ranking the two fastest stage-1 candidates by graph replays, on the
  // same journal: the step times are read back, the spec's layer and the
  // two pairs with d (b's first) replayed, and a + d replaces the row whose
  // step times were lower.
  measured.clear();
  o.graphRank = 2;
  log = tuneAll();
  EXPECT_EQ(llvm::join(measured, ","), "ac graph,bd graph,ad graph") << log;
  EXPECT_NE(rowOf().find(",9000.0000,kernel_a,0.0%,1000.0000,kernel_d,0.0%,10000.0000,"),
            std::string::npos)
      << rowOf();
  EXPECT_NE(log.find("tokens 5: layer b + d: 8000.00 us a call over graph replays"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("tokens 5: 5000.00 us a call over graph replays (the spec's: 7000.00)"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("0 added, 1 replaced (ranked by graph replays), 0 kept"), std::string::npos)
      << log;
  EXPECT_NE(log.find("| 5 | 5000.0 | 7000.0 | 1.40x |"), std::string::npos) << log;

  // A third run finds every time in the journal and measures nothing.
  measured.clear();
  tuneAll();
  EXPECT_TRUE(measured.empty()) << llvm::join(measured, ",");
}

/// Appends the --out table's row at 5 tokens (the spec's a + c) to the
/// manifest, as `moegen tune --prefill-only` lists it: the spec's layer.
void addIncumbent(const TempDir &dir) {
  std::error_code ec;
  llvm::raw_fd_ostream os(dir.path + "/" + tune::kManifestName, ec, llvm::sys::fs::OF_Append);
  ASSERT_FALSE(ec);
  os << "incumbent\t5\ta.moe\tkernel_a\tkernel_c\tspec\n";
}

TEST_F(FourPairTune, TheTablesRowStaysWhereItIsFasterOverGraphReplays) {
  // The ranked pairs are b + d (8000 us) and a + d (5000); the table's a + c,
  // never a ranked pair, replays in 4500: it stays, with its step times.
  addIncumbent(dir);
  o.graphRank = 2;
  o.measurer = tileMeasurer(500);
  std::string log = tuneAll();
  EXPECT_NE(log.find("tokens 5: the table's row kernel_a + kernel_c: 4500.00 us a call over "
                     "graph replays"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("tokens 5: the table's row stays (4500.00 us against the best candidate's "
                     "5000.00), its columns measured again"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("; 1 row(s) stayed, faster than every candidate in this run, with their "
                     "columns measured again"),
            std::string::npos)
      << log;
  auto csv = llvm::MemoryBuffer::getFile(o.outPath);
  ASSERT_TRUE(bool(csv));
  EXPECT_NE(
      (*csv)->getBuffer().find(",9000.0000,kernel_a,0.0%,5000.0000,kernel_c,0.0%,14000.0000,"),
      llvm::StringRef::npos)
      << (*csv)->getBuffer().str();
}

/// The b + d row's columns as the step times give them.
const char *const kBAndD = ",3000.0000,kernel_b,0.0%,1000.0000,kernel_d,0.0%,4000.0000,";

void expectTableHas(const std::string &path, llvm::StringRef columns) {
  auto csv = llvm::MemoryBuffer::getFile(path);
  ASSERT_TRUE(bool(csv));
  EXPECT_NE((*csv)->getBuffer().find(columns), llvm::StringRef::npos) << (*csv)->getBuffer().str();
}

/// Tunes once by the step times (b + d, 4000 us), then makes the table's row
/// a + c with 1 us in its columns (as if measured elsewhere) and lists it as
/// the incumbent, with a fresh measurement journal (the manifest changed).
void tuneThenStaleRow(FourPairTune &t) {
  t.o.measurer = tileMeasurer(3000);
  t.tuneAll();
  auto csv = llvm::MemoryBuffer::getFile(t.o.outPath);
  ASSERT_TRUE(bool(csv));
  std::string table = (*csv)->getBuffer().str();
  const std::string bd = kBAndD;
  size_t at = table.find(bd);
  ASSERT_NE(at, std::string::npos) << table;
  table.replace(at, bd.size(), ",0.5000,kernel_a,0.0%,0.5000,kernel_c,0.0%,1.0000,");
  std::error_code ec;
  llvm::raw_fd_ostream os(t.o.outPath, ec);
  ASSERT_FALSE(ec);
  os << table;
  os.close();
  addIncumbent(t.dir);
  llvm::sys::fs::remove(t.o.outPath + ".measured.journal");
}

TEST_F(FourPairTune, ARowMeasuredSlowerInTheSameRunIsReplacedWhateverItsUsColumn) {
  // By the step times: the table's a + c (14000 us measured now, 1 us in its
  // column) loses to b + d (4000), which replaces it.
  tuneThenStaleRow(*this);
  std::string log = tuneAll();
  EXPECT_NE(log.find("tokens 5: the table's row kernel_a + kernel_c: 14000.00 us measured"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("0 added, 1 replaced, 0 kept"), std::string::npos) << log;
  expectTableHas(o.outPath, kBAndD);
}

TEST_F(FourPairTune, ARowThatFailsItsCheckIsReplaced) {
  // The a + c layer fails its check (the spec's, the table's row, and the
  // candidates of a.moe): b + d replaces the row, whose column says 1 us.
  tuneThenStaleRow(*this);
  auto times = tileMeasurer(3000);
  o.measurer = [&](const MoeSpec &layer, int64_t T,
                   bool graph) -> llvm::Expected<tune::Measurement> {
    auto m = times(layer, T, graph);
    if (m && layer.stage1.tileN == 32 && layer.stage2.tileN == 128) {
      m->check.passed = false;
      m->check.detail = "stage2";
    }
    return m;
  };
  std::string log = tuneAll();
  EXPECT_NE(log.find("tokens 5: FAIL the table's row kernel_a + kernel_c: stage2"),
            std::string::npos)
      << log;
  expectTableHas(o.outPath, kBAndD);
}

/// Rewrites the four pairs' manifest for a row at `tokens` tokens.
void moveManifestTo(const TempDir &dir, int64_t tokens) {
  std::string path = dir.path + "/" + tune::kManifestName;
  auto text = llvm::MemoryBuffer::getFile(path);
  ASSERT_TRUE(bool(text));
  std::string m = (*text)->getBuffer().str();
  for (const char *field : {"tokens\t", "order\t"}) {
    size_t at = m.find(std::string(field) + "5");
    ASSERT_NE(at, std::string::npos) << m;
    m.replace(at, std::strlen(field) + 1, field + std::to_string(tokens));
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  ASSERT_FALSE(ec);
  os << m;
}

TEST_F(FourPairTune, TierPointsRankByTheMeanOverTheRowsTier) {
  // A row at 8 tokens serves 5 to 8. Stage 1 of b is the faster at 8 tokens
  // (3000 us against a's 4000) and the slower at 5 (9000 against 4000): over
  // the tier a wins. Stage 2: c 5000, d 1000 at both counts.
  moveManifestTo(dir, 8);
  o.tierPoints = 2;
  std::vector<std::string> measured;
  o.measurer = [&](const MoeSpec &layer, int64_t T, bool) -> llvm::Expected<tune::Measurement> {
    bool a = layer.stage1.tileN == 32, c = layer.stage2.tileN == 128;
    measured.push_back(llvm::formatv("{0}{1}@{2}", a ? "a" : "b", c ? "c" : "d", T).str());
    tune::Measurement m;
    m.check.passed = true;
    m.times.us1 = a ? 4000 : (T == 8 ? 3000 : 9000);
    m.times.us2 = c ? 5000 : 1000;
    return m;
  };
  std::string log = tuneAll();
  // Count by count (the checks of one count share their inputs); the pair
  // a + d is candidate "s2 d", already measured.
  EXPECT_EQ(llvm::join(measured, ","), "ac@5,ac@5,bc@5,ac@5,ad@5,ac@8,ac@8,bc@8,ac@8,ad@8") << log;
  // Each count's time beside the mean.
  EXPECT_NE(log.find("tokens 8: s1 b: 6000.00 us measured (the mean over 5, 8 tokens: 9000.00, "
                     "3000.00)"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("tokens 8: ranked by 5000.00 us (the mean over 5, 8 tokens: 5000.00, "
                     "5000.00); the spec's: 9000.00"),
            std::string::npos)
      << log;
  // The row's columns are its own count's.
  expectTableHas(o.outPath, ",4000.0000,kernel_a,0.0%,1000.0000,kernel_d,0.0%,5000.0000,");
}

TEST_F(FourPairTune, TierPointsByGraphReplaysGiveEachCountsTime) {
  // Ranked by graph replays over the tier: the line gives each count's
  // time over graph replays beside their mean (here the pair's steps plus
  // the token count).
  moveManifestTo(dir, 8);
  o.tierPoints = 2;
  o.graphRank = 1;
  o.measurer = [&](const MoeSpec &layer, int64_t T,
                   bool graph) -> llvm::Expected<tune::Measurement> {
    bool a = layer.stage1.tileN == 32, c = layer.stage2.tileN == 128;
    tune::Measurement m;
    m.check.passed = true;
    m.times.us1 = a ? 4000 : (T == 8 ? 3000 : 9000);
    m.times.us2 = c ? 5000 : 1000;
    if (graph)
      m.graphUs = m.times.us() + double(T);
    return m;
  };
  std::string log = tuneAll();
  EXPECT_NE(log.find("tokens 8: ranked by 5006.50 us (the mean over 5, 8 tokens: 5005.00, "
                     "5008.00); the spec's: "),
            std::string::npos)
      << log;
}

TEST_F(FourPairTune, TierPointsFailACandidateThatFailsAnyCount) {
  moveManifestTo(dir, 8);
  o.tierPoints = 3; // 5, 7 (6.5 rounded up) and 8
  o.measurer = [&](const MoeSpec &layer, int64_t T, bool) -> llvm::Expected<tune::Measurement> {
    bool a = layer.stage1.tileN == 32, c = layer.stage2.tileN == 128;
    tune::Measurement m;
    m.check.passed = a || T != 7;
    m.check.detail = m.check.passed ? "" : "stage1";
    m.times.us1 = a ? 4000 : 1000;
    m.times.us2 = c ? 5000 : 1000;
    return m;
  };
  std::string log = tuneAll();
  EXPECT_NE(log.find("tokens 8: FAIL s1 b: at 7 tokens: stage1"), std::string::npos) << log;
  expectTableHas(o.outPath, ",4000.0000,kernel_a,0.0%,1000.0000,kernel_d,0.0%,5000.0000,");
}

TEST_F(FourPairTune, TierPointsOnARowThatIsNoTierRankAtItsCount) {
  // No token count pads to 5 (aiter's padded M is 8 there): said, and ranked
  // at 5 alone.
  o.tierPoints = 2;
  o.measurer = tileMeasurer(3000);
  std::string log = tuneAll();
  EXPECT_NE(log.find("tokens 5: no token count pads to it (aiter's padded M); ranked at this count "
                     "alone"),
            std::string::npos)
      << log;
  expectTableHas(o.outPath, kBAndD);
}

TEST_F(FourPairTune, GraphRankNeedsAGraphTime) {
  // A measurer that gives no graph time is an error naming the layer, not a
  // silent ranking by the step times.
  o.graphRank = 1;
  o.measurer = [&](const MoeSpec &, int64_t, bool) -> llvm::Expected<tune::Measurement> {
    tune::Measurement m;
    m.check.passed = true;
    m.times.us1 = m.times.us2 = 1000;
    return m;
  };
  std::string log;
  llvm::raw_string_ostream out(log);
  auto missing = tune::runMeasuredTune(o, kernels, *cuda, out);
  ASSERT_FALSE(bool(missing));
  EXPECT_EQ(llvm::toString(missing.takeError()),
            "'spec' at 5 tokens: the measurer gave no time over graph replays");
  EXPECT_FALSE(llvm::sys::fs::exists(o.outPath));
}

} // namespace
