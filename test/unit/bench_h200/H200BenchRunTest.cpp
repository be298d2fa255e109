//===- H200BenchRunTest.cpp - moegen-bench-h200's runs without a GPU ------===//
//
// A token count of the small layer as the bench runs it, from a cache the
// JIT filled in another process (moegen-test-prefill): on the emulator, the
// check alone (it has no graphs), which must pass; over the stand-in libcuda
// (it runs no kernel, its clock advances a set time per launch), the graph of
// the rotated calls, its replays and their times. And the check of a part of
// the tokens: a wrong row of a checked token fails, of another does not.
//
//===----------------------------------------------------------------------===//

#include "bench/h200/LayerBench.h"
#include "bench/h200/RotatedInputs.h"
#include "compiler/spec/DslParser.h"
#include "runtime/api/Backends.h"
#include "runtime/check/DeviceArena.h"
#include "runtime/cuda/CudaBackend.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <dlfcn.h>
#include <tuple>

using namespace moegen;
using namespace moegen::bench;

namespace {

std::string smallSpecPath() {
  const char *src = std::getenv("MOEGEN_SOURCE_DIR");
  return std::string(src ? src : ".") + "/test/lit/Inputs/small.moe";
}

MoeSpec smallSpec() {
  auto spec = loadMoeSpec(smallSpecPath(), {});
  EXPECT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  return *spec;
}

/// A kernel cache the JIT filled for `chip`, removed at the end.
struct PrefilledCache {
  std::string path;
  explicit PrefilledCache(const std::string &chip) {
    llvm::SmallString<128> p;
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("moegen-h200-bench", p));
    path = std::string(p);
    add(chip);
  }
  /// Adds the small layer for `chip`, with the spec overrides `set`.
  void add(const std::string &chip, const std::string &set = "") {
    std::string spec = smallSpecPath();
    std::vector<llvm::StringRef> args = {MOEGEN_TEST_PREFILL, spec, path, chip};
    if (!set.empty())
      args.insert(args.end(), {"--set", set});
    std::string err;
    ASSERT_EQ(llvm::sys::ExecuteAndWait(MOEGEN_TEST_PREFILL, args, std::nullopt, {}, 0, 0, &err), 0)
        << err;
  }
  ~PrefilledCache() { llvm::sys::fs::remove_directories(path); }
  std::shared_ptr<runtime::KernelSource> kernels() const {
    runtime::KernelSourceOptions o;
    o.cacheDir = path;
    return std::make_shared<runtime::KernelSource>(o);
  }
};

std::unique_ptr<runtime::MoeLayer> makeLayer(const PrefilledCache &cache, runtime::Backend &b,
                                             const std::string &chip) {
  runtime::LayerOptions o;
  o.target.chip = chip;
  auto layer = runtime::MoeLayer::create(cache.kernels(), b, smallSpec(), o);
  EXPECT_TRUE(bool(layer)) << llvm::toString(layer.takeError());
  return layer ? std::move(*layer) : nullptr;
}

TEST(H200BenchRun, OnTheEmulatorTheCheckedCallPasses) {
  PrefilledCache cache("gfx950");
  auto emu = runtime::createBackend("emu");
  ASSERT_TRUE(bool(emu));
  auto weights = uploadWeights(smallSpec(), **emu);
  ASSERT_TRUE(bool(weights)) << llvm::toString(weights.takeError());
  auto layer = makeLayer(cache, **emu, "gfx950");
  ASSERT_TRUE(layer);
  BenchOptions o;
  o.time = false;
  for (auto [tokens, checkTokens, compared] :
       {std::tuple{5, 0, 5}, std::tuple{40, 6, 6}, std::tuple{40, 0, 40}}) {
    o.checkTokens = checkTokens;
    auto row = benchTokens(*layer, **emu, **weights, tokens, o, runtime::EventPair{});
    ASSERT_TRUE(bool(row)) << llvm::toString(row.takeError());
    ASSERT_TRUE(row->check);
    EXPECT_TRUE(row->check->passed()) << tokens << " tokens:\n" << row->check->table();
    EXPECT_EQ(row->check->checkedTokens, compared);
    EXPECT_EQ(row->sets, 8);
    EXPECT_GT(row->expertsHit, 1.0);
    EXPECT_TRUE(row->callMs.empty());
    for (const StageCheck &s : row->check->stages)
      if (s.stage == "layer")
        EXPECT_EQ(s.result.compared, compared * smallSpec().problem.modelDim);
  }
  // With timing, the emulator's missing graphs are the row's error.
  o.time = true;
  auto timed = benchTokens(*layer, **emu, **weights, 5, o, runtime::EventPair{});
  ASSERT_FALSE(bool(timed));
  EXPECT_EQ(llvm::toString(timed.takeError()),
            "emu backend: device graphs are not supported (the cuda and hip backends have them)");
}

TEST(H200BenchRun, ATunedRowsSchedulesRunAndAreChecked) {
  // A table row for tier 8 (5..8 tokens) names block_m 64 schedules; the
  // bench runs them, checks the call against them (the sorting's blocks are
  // 64 rows) and says where they came from; tier 1 has no row and keeps the
  // spec's (the fallback heuristic's names are not in the cache).
  PrefilledCache cache("gfx950");
  const std::string row64 = "stage1.tile=64x32x128; stage1.waves_per_eu=2; stage2.tile=64x64x128";
  ASSERT_NO_FATAL_FAILURE(cache.add("gfx950", row64));
  std::string table = cache.path + "/tuned.csv";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(table, ec);
    ASSERT_FALSE(ec);
    os << "gfx,cu_num,token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,"
          "q_type,use_g1u1,doweight_stage1,block_m,ksplit,us1,kernelName1,err1,us2,kernelName2,"
          "err2,us,tflops,bw,_tag\n"
          "gfx950,256,8,256,128,8,2,ActivationType.Situv2,torch.bfloat16,"
          "torch.float4_e2m1fn_x2,torch.float4_e2m1fn_x2,QuantType.per_1x32,1,0,64,0,1.0,"
          "flydsl_moe1_afp4_wfp4_bf16_t64x32x128_w2_fp4,0.0%,1.0,"
          "flydsl_moe2_afp4_wfp4_bf16_t64x64x128_atomic_sbm64,0.0%,2.0,0,0,test\n";
  }
  auto emu = runtime::createBackend("emu");
  ASSERT_TRUE(bool(emu));
  auto weights = uploadWeights(smallSpec(), **emu);
  ASSERT_TRUE(bool(weights)) << llvm::toString(weights.takeError());
  BenchOptions o;
  o.time = false;
  o.cuNum = 256;
  o.chip = "gfx950";
  o.tokens = {6, 1};
  o.tunedTables = {table};
  std::string log;
  llvm::raw_string_ostream os(log);
  std::vector<BenchRow> rows = benchLayer(smallSpec(), cache.kernels(), **emu, **weights, o, os);
  ASSERT_EQ(rows.size(), 2u);
  for (const BenchRow &r : rows) {
    ASSERT_TRUE(r.error.empty()) << r.error;
    ASSERT_TRUE(r.check);
    EXPECT_TRUE(r.check->passed()) << r.tokens << " tokens:\n" << r.check->table();
  }
  EXPECT_EQ(rows[0].schedules, "tuned: bm64 t64x32x128 w2 / t64x64x128");
  EXPECT_EQ(rows[1].schedules, "spec: bm32 t32x32x256 / t32x128x128");
  EXPECT_NE(log.find("6 tokens: check PASS (6 of 6 tokens compared), tuned: bm64"),
            std::string::npos)
      << log;
}

TEST(H200BenchRun, ACheckOfSomeTokensComparesTheirRowsOnly) {
  PrefilledCache cache("gfx950");
  auto emu = runtime::createBackend("emu");
  ASSERT_TRUE(bool(emu));
  runtime::Backend &b = **emu;
  const MoeSpec spec = smallSpec();
  const int64_t T = 9, K = spec.problem.modelDim;
  auto weights = uploadWeights(spec, b);
  ASSERT_TRUE(bool(weights));
  auto layer = makeLayer(cache, b, "gfx950");
  ASSERT_TRUE(layer);
  RotatedInputs in = makeRotatedInputs(spec.problem, T, 0);
  auto ws = layer->workspaceLayout(T);
  ASSERT_TRUE(bool(ws));
  DeviceArena arena(b);
  runtime::LayerArgs args;
  args.tokens = T;
  args.topkIds = llvm::cantFail(arena.upload(in.topkIds));
  args.topkWeights = llvm::cantFail(arena.upload(in.topkWeights));
  args.hidden = llvm::cantFail(arena.upload(in.hidden));
  args.w1 = (*weights)->w1Dev;
  args.w1Scale = (*weights)->w1Scale;
  args.w2 = (*weights)->w2Dev;
  args.w2Scale = (*weights)->w2Scale;
  args.output = llvm::cantFail(arena.alloc(T * K * 2));
  args.workspace = llvm::cantFail(arena.alloc(ws->total));
  args.workspaceBytes = ws->total;
  ASSERT_FALSE(bool(layer->run(args)));
  ASSERT_FALSE(bool(b.synchronize()));
  // Token 8's output row overwritten.
  std::vector<uint16_t> ones(K, 0x4700); // 32768.0
  ASSERT_FALSE(bool(b.copyToDevice(args.output + 8 * K * 2, ones.data(), K * 2)));
  auto d = layer->dispatch(T);
  ASSERT_TRUE(bool(d));
  auto check = [&](std::vector<int64_t> checked) -> std::string {
    auto a1 = stage1Input(spec, in, checked.empty() ? spreadTokens(T, 0) : checked);
    EXPECT_TRUE(bool(a1));
    RunInputs run;
    run.tokens = T;
    run.topkIds = in.topkIds;
    run.topkWeights = in.topkWeights;
    run.checked = checked;
    run.a1 = &*a1;
    run.w1 = &(*weights)->w1;
    run.w2 = &(*weights)->w2;
    auto r = checkLayerRun(spec, b, *d->kernels, *ws, args, run);
    if (!r)
      return llvm::toString(r.takeError());
    std::string failed;
    for (const StageCheck &s : r->stages)
      if (!s.result.passed)
        failed += s.stage + " ";
    return failed.empty() ? "PASS" : failed;
  };
  EXPECT_EQ(check({0, 4}), "PASS");
  EXPECT_EQ(check({0, 8}), "stage2 layer ");
  EXPECT_EQ(check({8}), "stage2 layer ");
  EXPECT_EQ(check({}), "stage2 layer ");
  EXPECT_EQ(check({4, 2}), "checkLayerRun: checked token 2 (#1) is not ascending in [0, 9)");
}

/// The stand-in libcuda, and the launch time its clock charges.
struct FakeCuda {
  explicit FakeCuda(const char *launchMs) {
    ::setenv("MOEGEN_CUDA_LIB", MOEGEN_FAKE_CUDA, 1);
    ::setenv("FAKE_CUDA_LAUNCH_MS", launchMs, 1);
  }
  ~FakeCuda() { ::unsetenv("FAKE_CUDA_LAUNCH_MS"); }
  template <class F> F fn(const char *name) {
    void *h = dlopen(MOEGEN_FAKE_CUDA, RTLD_NOW | RTLD_NOLOAD);
    return h ? reinterpret_cast<F>(dlsym(h, name)) : nullptr;
  }
};

TEST(H200BenchRun, TheRotatedCallsAreOneGraphReplayedBetweenEvents) {
  PrefilledCache cache("sm_90a");
  FakeCuda fake("moe_stage1_=3,moe_=1");
  auto cuda = runtime::createCudaBackend();
  ASSERT_TRUE(bool(cuda)) << llvm::toString(cuda.takeError());
  auto weights = uploadWeights(smallSpec(), **cuda);
  ASSERT_TRUE(bool(weights));
  auto layer = makeLayer(cache, **cuda, "sm_90a");
  ASSERT_TRUE(layer);
  auto events = runtime::createEventPair(**cuda);
  ASSERT_TRUE(bool(events));
  auto launches = fake.fn<size_t (*)()>("fakeCudaLaunchCount");
  auto graphLaunches = fake.fn<size_t (*)()>("fakeCudaGraphLaunches");
  ASSERT_TRUE(launches && graphLaunches);
  BenchOptions o;
  o.warmupReplays = 1;
  o.minReplays = 3;
  o.maxReplays = 4;
  o.targetMs = 1; // a replay of 8 calls takes 48 ms: the fewest replays
  const size_t launchesBefore = launches(), graphsBefore = graphLaunches();
  auto row = benchTokens(*layer, **cuda, **weights, 5, o, *events);
  ASSERT_TRUE(bool(row)) << llvm::toString(row.takeError());
  // The small layer at 5 tokens launches sort, quant_input, stage1 (3 ms),
  // stage2: 6 ms a call; 8 sets in each replay.
  EXPECT_EQ(row->sets, 8);
  EXPECT_EQ(row->callMs, std::vector<float>(3, 6.0f));
  EXPECT_EQ(row->medianUs(), 6000.0);
  EXPECT_EQ(graphLaunches() - graphsBefore, 1u + 3u);
  EXPECT_EQ(launches() - launchesBefore, 4u + (1 + 3) * 8 * 4u); // the checked call, the replays
  // The stand-in runs no kernel: the check fails, and says so.
  ASSERT_TRUE(row->check);
  EXPECT_FALSE(row->check->passed());
  EXPECT_FALSE(row->passed());

  // Above 64 tokens, 2 sets; the replay count follows the target time.
  o.check = false;
  o.targetMs = 40; // a replay: 2 calls of 6 ms
  o.maxReplays = 60;
  auto big = benchTokens(*layer, **cuda, **weights, 100, o, *events);
  ASSERT_TRUE(bool(big)) << llvm::toString(big.takeError());
  EXPECT_EQ(big->sets, 2);
  EXPECT_FALSE(big->check);
  EXPECT_EQ(big->callMs.size(), 4u); // ceil(40 / 12)
  EXPECT_TRUE(big->passed());
}

/// The small layer with spec overrides, for sm_90a on the stand-in libcuda
/// (which runs no kernel), from a cache the JIT filled.
struct StandInLayer {
  PrefilledCache cache{"sm_90a"};
  FakeCuda fake{"moe_=1"};
  MoeSpec spec;
  std::unique_ptr<runtime::Backend> backend;
  std::unique_ptr<runtime::MoeLayer> layer;

  void create(const std::string &overrides, int64_t cuNum = 0) {
    ASSERT_NO_FATAL_FAILURE(cache.add("sm_90a", overrides));
    auto s = loadMoeSpec(smallSpecPath(), {overrides});
    ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
    spec = *s;
    auto cuda = runtime::createCudaBackend();
    ASSERT_TRUE(bool(cuda)) << llvm::toString(cuda.takeError());
    backend = std::move(*cuda);
    runtime::LayerOptions lo;
    lo.target.chip = "sm_90a";
    if (cuNum)
      lo.cuNum = cuNum;
    auto l = runtime::MoeLayer::create(cache.kernels(), *backend, spec, lo);
    ASSERT_TRUE(bool(l)) << llvm::toString(l.takeError());
    layer = std::move(*l);
  }
  /// One call at `T` tokens: inputs from makeRotatedInputs, the weights mere
  /// addresses.
  llvm::Error run(int64_t T);
};

llvm::Error StandInLayer::run(int64_t T) {
  auto ws = layer->workspaceLayout(T);
  if (!ws)
    return ws.takeError();
  runtime::Backend &b = *backend;
  DeviceArena arena(b);
  RotatedInputs in = makeRotatedInputs(spec.problem, T, 0);
  runtime::LayerArgs args;
  args.tokens = T;
  args.topkIds = llvm::cantFail(arena.upload(in.topkIds));
  args.topkWeights = llvm::cantFail(arena.upload(in.topkWeights));
  args.hidden = llvm::cantFail(arena.upload(in.hidden));
  args.w1 = args.w1Scale = args.w2 = args.w2Scale = llvm::cantFail(arena.alloc(256));
  args.output = llvm::cantFail(arena.alloc(T * spec.problem.modelDim * 2));
  args.workspace = llvm::cantFail(arena.alloc(ws->total));
  args.workspaceBytes = ws->total;
  return layer->run(args);
}

TEST(H200BenchRun, ASortInDynamicSharedMemoryIsLaunchedWithIt) {
  // 3000 experts: sort's two warps need 60024 bytes of histograms, beyond
  // the 48 KiB a kernel declares statically. MoeLayer's launch provides them
  // and the backend opts the kernel in (the stand-in refuses the launch
  // otherwise, as the driver does).
  StandInLayer l;
  ASSERT_NO_FATAL_FAILURE(l.create("experts=3000; topk=8"));
  auto launches = l.fake.fn<size_t (*)()>("fakeCudaLaunchCount");
  auto shared = l.fake.fn<unsigned (*)(size_t)>("fakeCudaLaunchShared");
  ASSERT_TRUE(launches && shared);
  const size_t before = launches();
  llvm::Error e = l.run(5);
  ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
  // sort alone (40 entries), then quant_input, stage1, stage2.
  ASSERT_EQ(launches() - before, 4u);
  // Segment starts, two warps' histogram and owner rows (3001 x 2 words, in
  // whole 16-byte units: 6004), the warps' totals (2, in one unit: 4).
  EXPECT_EQ(shared(before), 4u * (3000 + 2 * 6004 + 4));
  EXPECT_EQ(shared(before + 2), 0u); // the small layer's stage 1 is static
}

TEST(H200BenchRun, AStage2LoopingOverNTilesIsLaunchedForItsTokens) {
  // Stage 2 over K = 384 (three 128-wide steps) stages its 64-row M tile's A
  // rows for all of K in 52224 bytes of dynamic shared memory and loops over
  // N tiles (Sm90GemmLayout::loopN); the launch chooses grid.x by the token
  // count: both N tiles a workgroup of their own at 5 tokens (7 M tiles
  // expected: one round over the 9 sorting blocks there may be), one
  // workgroup for both at 65536 (2052 M tiles: 5 rounds of 528 along M
  // against 9 of 264). (The arithmetic decoding keeps the 64-row tile on
  // mma.sync; on wgmma its rows take 48 KiB, static.)
  StandInLayer l;
  ASSERT_NO_FATAL_FAILURE(l.create("inter_dim=384; stage1.tile=64x32x256; stage2.tile=64x128x128; "
                                   "stage2.weight_decode=arithmetic",
                                   /*cuNum=*/132));
  auto launches = l.fake.fn<size_t (*)()>("fakeCudaLaunchCount");
  auto shared = l.fake.fn<unsigned (*)(size_t)>("fakeCudaLaunchShared");
  auto grid = l.fake.fn<const unsigned *(*)(size_t)>("fakeCudaLaunchGrid");
  ASSERT_TRUE(launches && shared && grid);
  for (auto [T, gridX, gridY] : {std::tuple{5, 2u, 9u}, std::tuple{65536, 1u, 528u}}) {
    SCOPED_TRACE(T);
    llvm::Error e = l.run(T);
    ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
    const size_t stage2 = launches() - 1;
    EXPECT_EQ(shared(stage2), 3u * 64 * 272);
    EXPECT_EQ(grid(stage2)[0], gridX);
    EXPECT_EQ(grid(stage2)[1], gridY);
  }
}

TEST(H200BenchRun, ALayerMissingFromTheCacheIsEveryRowsError) {
  PrefilledCache cache("gfx950"); // nothing for sm_90a
  FakeCuda fake("moe_=1");
  auto cuda = runtime::createCudaBackend();
  ASSERT_TRUE(bool(cuda));
  auto weights = uploadWeights(smallSpec(), **cuda);
  ASSERT_TRUE(bool(weights));
  BenchOptions o;
  o.tokens = {1, 16};
  std::string log;
  llvm::raw_string_ostream os(log);
  std::vector<BenchRow> rows = benchLayer(smallSpec(), cache.kernels(), **cuda, **weights, o, os);
  ASSERT_EQ(rows.size(), 2u);
  for (const BenchRow &r : rows) {
    EXPECT_NE(r.error.find("is not in the kernel cache"), std::string::npos) << r.error;
    EXPECT_FALSE(r.passed());
  }
  EXPECT_NE(log.find("small, 16 tokens: error:"), std::string::npos) << log;
}

} // namespace
