//===- BenchH200Main.cpp - moegen-bench-h200: whole layers on an H200 -----===//
//
//   moegen-bench-h200 [SPEC.moe ...] --cache DIR [--tokens N,...] [--baseline CSV]
//                     [--check-tokens N] [--no-check | --check-only] [--target-ms MS]
//                     [--cu-num N] [--table CSV ...]
//   moegen-bench-h200 [SPEC.moe ...] --plan [--baseline CSV]
//
// Times whole MoE layers on the first sm_90a GPU the way
// shared/design/PEERS-H200.md times its peers (bench/h200/LayerBench.h): the
// kernels from the kernel cache DIR that `moegen cache prefill --target
// sm_90a` of the same build filled, MoeLayer::run on the cuda backend, one
// call per token count checked against the reference, then CUDA graphs of R
// rotated calls replayed between events. Prints one markdown table per
// layer (bench/h200/Report.h). Without specs: the five layers of Plan.h,
// from the repository root. --baseline adds the torch baseline's column
// (torch_baseline.py's CSV); --table runs each token count with the
// schedules of an sm_90a tuned table's row, as a deployment does (the cache
// must hold them: prefill.sh with the same tables). --plan prints what would run, without a GPU,
// and with --baseline checks that the baseline has every row with the same
// rotation. Exits 1 when a check fails or a row cannot run.
//
// MLIR-free: tools/layer-check/build-static.sh links it without libLLVM.so.
//
//===----------------------------------------------------------------------===//

#include "bench/h200/Baseline.h"
#include "bench/h200/DeviceWeights.h"
#include "bench/h200/LayerBench.h"
#include "bench/h200/Peers.h"
#include "bench/h200/Plan.h"
#include "bench/h200/Report.h"
#include "compiler/spec/DslParser.h"
#include "compiler/spec/SpecLimits.h"
#include "runtime/api/KernelSource.h"
#include "runtime/cache/CacheKey.h"
#include "runtime/cuda/CudaBackend.h"
#include "tools/common/DeviceTool.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace moegen;
using namespace moegen::bench;
namespace cl = llvm::cl;

static cl::list<std::string> specArgs(cl::Positional, cl::desc("[spec.moe ...]"));
static cl::opt<std::string> cacheArg("cache",
                                     cl::desc("the kernel cache `moegen cache prefill --target "
                                              "sm_90a` filled (nothing is compiled)"),
                                     cl::value_desc("dir"));
static cl::list<int64_t> tokensArg("tokens",
                                   cl::desc("token counts (default 1,4,16,64,256,1024,2048,4096,"
                                            "8192,16384)"),
                                   cl::CommaSeparated);
static cl::opt<std::string> baselineArg("baseline",
                                        cl::desc("torch_baseline.py's CSV, for the torch column"),
                                        cl::value_desc("csv"));
static cl::opt<long long> checkTokensArg("check-tokens",
                                         cl::desc("tokens of the checked call compared with the "
                                                  "reference, evenly spaced (default 16; 0: all)"),
                                         cl::init(16));
static cl::opt<bool> noCheckArg("no-check", cl::desc("time without checking a call first"));
static cl::opt<bool> checkOnlyArg("check-only",
                                  cl::desc("check one call per token count; no timing"));
static cl::opt<double> targetMsArg("target-ms",
                                   cl::desc("device time of the timed replays per token count "
                                            "(default 100 ms; at least --min-replays)"),
                                   cl::init(100));
static cl::opt<int> minReplaysArg("min-replays", cl::desc("default 5"), cl::init(5));
static cl::opt<int> maxReplaysArg("max-replays", cl::desc("default 60"), cl::init(60));
static cl::opt<int> warmupArg("warmup", cl::desc("untimed replays first (default 2)"), cl::init(2));
static cl::opt<long long> cuNumArg("cu-num",
                                   cl::desc("SMs the persistent GEMM grids are capped at "
                                            "(default 132, the H200's)"),
                                   cl::init(132));
static cl::list<std::string> tableArgs("table",
                                       cl::desc("an aiter-format tuned table for sm_90a (gfx "
                                                "sm_90a, cu_num --cu-num; repeatable): each "
                                                "token count runs its row's schedules"),
                                       cl::value_desc("csv"));
static cl::opt<bool> planArg("plan", cl::desc("print what would run; no GPU needed"));

static int fail(const llvm::Twine &msg) { return tools::reportToolError("moegen-bench-h200", msg); }

/// The plan: one line per (layer, token count); with a baseline, every line
/// must have its row there with the same rotation.
static int printPlan(llvm::ArrayRef<MoeSpec> specs, llvm::ArrayRef<int64_t> tokens,
                     const Baseline *baseline) {
  llvm::outs() << "layer,shape,model_dim,inter_dim,experts,topk,tokens,sets\n";
  int missing = 0;
  for (const MoeSpec &spec : specs) {
    const Problem &p = spec.problem;
    std::optional<PeerShape> shape = peerShapeOf(p);
    for (int64_t t : tokens) {
      llvm::outs() << spec.name << "," << (shape ? shape->name : "-") << "," << p.modelDim << ","
                   << p.interDim << "," << p.experts << "," << p.topk << "," << t << ","
                   << rotatedSets(t) << "\n";
      if (!baseline)
        continue;
      const BaselineRow *row = baseline->find(p, t);
      if (!row || row->sets != rotatedSets(t)) {
        ++missing;
        llvm::errs() << "moegen-bench-h200: the baseline "
                     << (row ? "rotates " + std::to_string(row->sets) + " sets" : "has no row")
                     << " for " << spec.name << " at " << t << " tokens (the bench rotates "
                     << rotatedSets(t) << ")\n";
      }
    }
  }
  return missing ? 1 : 0;
}

int main(int argc, char **argv) {
  tools::parseDeviceToolOptions(argc, argv, "moegen-bench-h200", MOEGEN_VERSION,
                                "whole MoE layers on an H200, against the peers");
  std::vector<std::string> paths(specArgs.begin(), specArgs.end());
  if (paths.empty())
    for (const char *p : defaultSpecs())
      paths.push_back(p);
  std::vector<MoeSpec> specs;
  for (const std::string &path : paths) {
    auto spec = parseMoeSpecFile(path);
    if (!spec)
      return fail(llvm::toString(spec.takeError()) +
                  (specArgs.empty() ? " (without specs the bench reads the default layers from "
                                      "the repository root)"
                                    : ""));
    specs.push_back(std::move(*spec));
  }
  std::vector<int64_t> tokens(tokensArg.begin(), tokensArg.end());
  if (tokens.empty())
    tokens.assign(defaultTokenCounts().begin(), defaultTokenCounts().end());
  for (int64_t t : tokens)
    if (llvm::Error e = checkTokenCount(t, "--tokens"))
      return fail(llvm::toString(std::move(e)));
  if (checkTokensArg < 0)
    return fail("--check-tokens: " + llvm::Twine(checkTokensArg) + " is negative");
  if (minReplaysArg < 1 || maxReplaysArg < minReplaysArg || warmupArg < 0)
    return fail("--min-replays, --max-replays, --warmup: need 1 <= min <= max and warmup >= 0");
  if (!(targetMsArg > 0))
    return fail("--target-ms: must be positive");
  if (cuNumArg < 1)
    return fail("--cu-num: must be positive");

  std::optional<Baseline> baseline;
  if (!baselineArg.empty()) {
    auto b = Baseline::read(baselineArg);
    if (!b)
      return fail(llvm::toString(b.takeError()));
    baseline = std::move(*b);
  }
  if (planArg)
    return printPlan(specs, tokens, baseline ? &*baseline : nullptr);
  if (cacheArg.empty())
    return fail("--cache: the prefilled kernel cache directory is required (this tool compiles "
                "nothing)");

  runtime::KernelSourceOptions sourceOptions;
  sourceOptions.cacheDir = cacheArg;
  auto kernels = std::make_shared<runtime::KernelSource>(sourceOptions);
  auto backend = runtime::createCudaBackend();
  if (!backend)
    return fail(llvm::toString(backend.takeError()));

  BenchOptions options;
  options.tokens = tokens;
  options.cuNum = cuNumArg;
  options.tunedTables.assign(tableArgs.begin(), tableArgs.end());
  options.warmupReplays = warmupArg;
  options.minReplays = minReplaysArg;
  options.maxReplays = maxReplaysArg;
  options.targetMs = targetMsArg;
  options.checkTokens = checkTokensArg;
  options.check = !noCheckArg;
  options.time = !checkOnlyArg;
  if (noCheckArg && checkOnlyArg)
    return fail("--no-check and --check-only leave nothing to do");

  llvm::outs() << "moegen-bench-h200 " << MOEGEN_VERSION << " (build " << cache::buildId()
               << "), kernels from " << cacheArg << ", grids for " << options.cuNum
               << " SMs. Times: median per call over CUDA-graph replays of R calls on rotated "
                  "inputs; peers: shared/design/PEERS-H200.md (`core`, without routing prep; "
                  "moegen includes its sorting); floor: mxfp4 weights of the experts hit, "
                  "x, out and the bf16 intermediate at 4278 GB/s, or the FLOPs at 794 TFLOP/s.\n\n";
  int failures = 0;
  std::vector<LayerRows> results;
  std::unique_ptr<DeviceWeights> weights;
  for (const MoeSpec &spec : specs) {
    if (!weights || !weights->serves(spec)) {
      weights.reset(); // free the device memory first
      auto start = std::chrono::steady_clock::now();
      auto w = uploadWeights(spec, **backend);
      if (!w)
        return fail(spec.name + ": weights: " + llvm::toString(w.takeError()));
      weights = std::move(*w);
      llvm::errs()
          << spec.name << ": "
          << llvm::format(
                 "%.2f GB of weights generated and uploaded in %.1f s\n",
                 weights->deviceBytes / 1e9,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::vector<BenchRow> rows =
        benchLayer(spec, kernels, **backend, *weights, options, llvm::errs());
    printLayerTable(llvm::outs(), spec, rows, baseline ? &*baseline : nullptr);
    llvm::outs().flush();
    for (const BenchRow &r : rows)
      failures += !r.passed();
    results.push_back({spec, std::move(rows)});
  }
  weights.reset();
  printShapeSummaries(llvm::outs(), results, baseline ? &*baseline : nullptr);
  if (failures)
    llvm::outs() << failures << " row(s) failed their check or could not run (marked above)\n";
  return failures ? 1 : 0;
}
