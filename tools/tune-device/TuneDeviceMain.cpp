//===- TuneDeviceMain.cpp - moegen-tune-device: measure tuning candidates -===//
//
//   moegen-tune-device --cache DIR --out TUNED.csv [--tokens N,...] [--top N]
//                      [--time N] [--warmup N] [--rotate-bytes B] [--seed S]
//                      [--launch-cu-num N] [--check-tokens N] [--graph-rank N]
//                      [--graph-replays N] [--tier-points N] [--device N]
//
// The part of `moegen tune --backend cuda` after compiling, for a GPU machine
// where only a static MLIR-free binary runs: `moegen tune ... --prefill-only
// --cache-dir DIR` compiled the candidates into DIR and wrote its manifest
// (tune/Manifest.h); this checks and times them on the first sm_90a GPU
// (tune/Measured.h) and writes the tuned CSV (tag moegen_cuda_<chip>) and its
// journal. A candidate the manifest lists but the cache lacks is an error
// naming it. Exits 1 when a token count gets no row.
//
//===----------------------------------------------------------------------===//

#include "compiler/spec/SpecLimits.h"
#include "runtime/api/KernelSource.h"
#include "runtime/cache/CacheKey.h"
#include "runtime/cuda/CudaBackend.h"
#include "tools/common/DeviceTool.h"
#include "tune/Measured.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace moegen;
namespace cl = llvm::cl;

static cl::opt<std::string> cacheArg("cache",
                                     cl::desc("the kernel cache `moegen tune --prefill-only` "
                                              "filled, with its manifest"),
                                     cl::value_desc("dir"));
static cl::opt<std::string> outArg("out", cl::desc("the tuned CSV to write (merged where faster)"),
                                   cl::value_desc("csv"));
static cl::list<int64_t> tokensArg("tokens", cl::desc("only these of the manifest's token counts"),
                                   cl::CommaSeparated);
static cl::opt<unsigned> topArg("top",
                                cl::desc("candidates checked per stage and block_m (default: the "
                                         "manifest's order, 8 at most)"),
                                cl::init(8));
static cl::opt<unsigned> timeArg("time", cl::desc("timed runs per candidate (default 20)"),
                                 cl::init(20));
static cl::opt<unsigned> warmupArg("warmup", cl::desc("untimed runs first (default 3)"),
                                   cl::init(3));
static cl::opt<unsigned long long> rotateArg("rotate-bytes",
                                             cl::desc("rotate over input copies larger than "
                                                      "this (default 50 MiB, the H200's L2)"),
                                             cl::init(50ull << 20));
static cl::opt<unsigned long long> seedArg("seed", cl::desc("seed of the inputs (default 0)"),
                                           cl::init(0));
static cl::opt<long long> launchCuArg("launch-cu-num",
                                      cl::desc("the SMs the layer launches for (default 132, "
                                               "the H200's)"),
                                      cl::init(132));
static cl::opt<unsigned long long>
    checkTokensArg("check-tokens",
                   cl::desc("compare at most this many tokens per check, evenly spaced (default "
                            "1024; 0: all)"),
                   cl::init(tune::kDefaultCheckTokens));
static cl::opt<unsigned> graphRankArg(
    "graph-rank",
    cl::desc("choose among this many of the fastest stage-1 candidates per block_m by the "
             "layer's time over CUDA-graph replays, as host applications replay it (default 0: "
             "by the step times)"),
    cl::init(0));
static cl::opt<unsigned> graphReplaysArg("graph-replays",
                                         cl::desc("timed graph replays per ranked pair (default "
                                                  "20)"),
                                         cl::init(20));
static cl::opt<unsigned> tierPointsArg(
    "tier-points",
    cl::desc("rank each row's candidates by their mean time over this many token counts spread "
             "over the row's tier, from the least count aiter pads to the row's to the row's own "
             "(default 1: the row's count only)"),
    cl::init(1));
static cl::opt<int> deviceArg("device", cl::desc("the device ordinal (default: the first sm_90a)"),
                              cl::init(-1));

static int fail(const llvm::Twine &msg) {
  return tools::reportToolError("moegen-tune-device", msg);
}

int main(int argc, char **argv) {
  tools::parseDeviceToolOptions(argc, argv, "moegen-tune-device", MOEGEN_VERSION,
                                "measure tuning candidates");
  if (cacheArg.empty() || outArg.empty())
    return fail("usage: moegen-tune-device --cache DIR --out TUNED.csv (DIR: filled by `moegen "
                "tune --backend cuda --prefill-only --cache-dir DIR`)");
  if (timeArg == 0 || topArg == 0 || graphReplaysArg == 0 || tierPointsArg == 0)
    return fail("--time, --top, --graph-replays and --tier-points must be positive");
  if (tierPointsArg > tune::kMaxTierPoints)
    return fail("--tier-points " + llvm::Twine(tierPointsArg) + " is over " +
                llvm::Twine(tune::kMaxTierPoints));

  tune::MeasuredTuneOptions options;
  options.manifestDir = cacheArg;
  options.outPath = outArg;
  options.tokens.assign(tokensArg.begin(), tokensArg.end());
  options.top = topArg;
  options.seed = seedArg;
  options.launchCuNum = launchCuArg;
  options.timedRuns = int(timeArg);
  options.warmupRuns = int(warmupArg);
  options.rotateBytes = rotateArg;
  if (checkTokensArg > uint64_t(limits::kMaxTokens))
    return fail("--check-tokens " + llvm::Twine(checkTokensArg) + " is over the " +
                llvm::Twine(limits::kMaxTokens) + " tokens a layer can have");
  options.checkTokens = int64_t(checkTokensArg);
  options.graphRank = graphRankArg;
  options.graphReplays = int(graphReplaysArg);
  options.tierPoints = tierPointsArg;
  // A record checked on other tokens is not this run's.
  options.journalPrefix = cache::buildId().str() + "\ncuda\n" + std::to_string(options.seed) +
                          "\n" + std::to_string(options.checkTokens);

  runtime::KernelSourceOptions sourceOptions;
  sourceOptions.cacheDir = cacheArg;
  auto kernels = std::make_shared<runtime::KernelSource>(sourceOptions);
  auto manifest = tune::Manifest::load(cacheArg + "/" + tune::kManifestName);
  if (!manifest)
    return fail(llvm::toString(manifest.takeError()));
  options.tag = "moegen_cuda_" + manifest->chip;
  runtime::CudaBackendOptions cudaOptions;
  cudaOptions.chip = manifest->chip;
  cudaOptions.device = deviceArg;
  auto backend = runtime::createCudaBackend(cudaOptions);
  if (!backend)
    return fail(llvm::toString(backend.takeError()));
  auto missing = tune::runMeasuredTune(options, kernels, **backend, llvm::outs());
  if (!missing)
    return fail(llvm::toString(missing.takeError()));
  return *missing ? 1 : 0;
}
