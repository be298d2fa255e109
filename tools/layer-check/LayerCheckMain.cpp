//===- LayerCheckMain.cpp - moegen-layer-check: whole layers from a cache -===//
//
//   moegen-layer-check SPEC.moe --cache DIR [--backend cuda|emu] [--target CHIP] [--tokens N,...]
//                      [--kernels FAMILY,...] [--time N [--time-steps]] [--seed S]
//                      [--weight-scale F] [--poison]
//                      [--check-tokens N] [--resources] [--max-local-bytes N]
//                      [--load-only]
//                      [--set key=value ...] [--table CSV ...]
//                      [--table CSV --time N --retime OUT.csv]
//
// Runs a layer the way a deployment does: its kernels come from the prefilled
// kernel cache DIR (`moegen cache prefill`, or a JIT run, of the same moegen
// build: the cache keys carry the build id), MoeLayer::run launches them on
// the backend (cuda: the first sm_90a GPU; emu: the emulator, running gfx950
// kernels or, with --target sm_90a, sm_90a ones), and
// every stage is compared with the reference exactly as `moegen run` does
// (runtime/check/LayerCheck.h), on every token or, with --check-tokens N, on N
// evenly spaced ones (the sorting is always compared whole); --poison fills
// the output and the workspace with NaN bytes first. --kernels runs
// only those families (a target
// that has templates for some families only); the stages of the others are
// listed as not run. --time N then times N runs of the whole layer between
// device events, inputs rotated over copies larger than the L2, and prints the
// median and the minimum; --time-steps adds an event after every clear and
// launch and prints each step's median. --table runs each token count with
// the schedules of its tier's row in aiter-format tuned tables (keyed by the
// chip and --cu-num; the cache must hold them: `moegen cache prefill --table`)
// and checks against those. --resources prints what each kernel of the tier
// uses (sm_90a: the driver's registers, local memory (spills and stack) and
// shared memory for the code it compiled from the PTX; gfx950: the code
// object's); --max-local-bytes N fails a layer any of whose kernels uses
// more local memory a thread than N (0: no spills at all). --load-only
// resolves each token count's tier and loads its kernels without running or
// checking anything: with --resources, an audit of a whole table's kernels in
// seconds. --retime OUT.csv times the rows of the one --table again (each
// token count must be a row's own token; their steps timed, as --time-steps)
// and writes the table to OUT.csv with those rows' us1, us2, us, err1, err2,
// tflops and bw replaced (moegen tune's stage split; the schedules kept),
// written whole and then renamed over OUT.csv; a row whose check fails keeps
// its times. Exits 1 when a stage fails, a kernel is over --max-local-bytes,
// or the layer cannot run.
//
// MLIR-free and without the compiler: tools/layer-check/build-static.sh links
// it without libLLVM.so, to be copied to a GPU machine with the cache.
//
//===----------------------------------------------------------------------===//

#include "compiler/spec/DslParser.h"
#include "compiler/spec/SpecLimits.h"
#include "runtime/api/KernelSource.h"
#include "runtime/cache/CacheKey.h"
#include "runtime/check/LayerCheck.h"
#include "runtime/cuda/CudaBackend.h"
#include "runtime/dispatch/Lookup.h"
#include "tools/common/DeviceTool.h"
#include "tune/Measured.h"
#ifdef MOEGEN_HAVE_EMU_BACKEND
#include "runtime/backend/EmuBackend.h"
#endif

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <optional>

using namespace moegen;
namespace cl = llvm::cl;

static cl::opt<std::string> specArg(cl::Positional, cl::desc("<spec.moe>"));
static cl::opt<std::string> cacheArg("cache",
                                     cl::desc("the prefilled kernel cache (as for "
                                              "$MOEGEN_CACHE_DIR); nothing is compiled"),
                                     cl::value_desc("dir"));
static cl::opt<std::string> backendArg("backend",
                                       cl::desc("cuda (the default: the first sm_90a GPU) or emu "
                                                "(the emulator)"),
                                       cl::value_desc("name"), cl::init("cuda"));
static cl::opt<std::string>
    targetArg("target",
              cl::desc("the chip of the cache's kernels: sm_90a (cuda's) or, on emu, gfx950 (the "
                       "default there) or sm_90a"),
              cl::value_desc("chip"));
static cl::list<int64_t> tokensArg("tokens", cl::desc("token counts (default 16)"),
                                   cl::CommaSeparated);
static cl::list<std::string> kernelsArg("kernels",
                                        cl::desc("only these kernel families (default: all)"),
                                        cl::CommaSeparated, cl::value_desc("family,..."));
static cl::opt<unsigned> timeArg("time",
                                 cl::desc("time this many runs of the layer after the check "
                                          "(device events; not on emu)"),
                                 cl::init(0));
static cl::opt<bool> timeStepsArg("time-steps",
                                  cl::desc("with --time: an event after every clear and launch, "
                                           "each step's median printed"),
                                  cl::init(false));
static cl::opt<unsigned> warmupArg("warmup", cl::desc("untimed runs before --time's (default 3)"),
                                   cl::init(3));
static cl::opt<unsigned long long> rotateArg("rotate-bytes",
                                             cl::desc("timed runs rotate over input copies "
                                                      "larger than this (default: 50 MiB, the "
                                                      "H200's L2)"),
                                             cl::init(50ull << 20));
static cl::opt<unsigned long long> seedArg("seed", cl::desc("seed of the inputs (default 0)"),
                                           cl::init(0));
static cl::opt<double> weightScaleArg("weight-scale",
                                      cl::desc("multiply the generated weights' standard "
                                               "deviations by this (default 1; 64 gives MX "
                                               "scales above 2)"),
                                      cl::value_desc("F"), cl::init(1.0));
static cl::opt<bool> poisonArg("poison",
                               cl::desc("fill the output and the workspace with 0xff bytes (NaN) "
                                        "before the checked run, so that a value a kernel should "
                                        "write but does not fails"),
                               cl::init(false));
static cl::opt<long long> cuNumArg("cu-num",
                                   cl::desc("the device's CU/SM count the layer launches for "
                                            "(default 256)"),
                                   cl::init(256));
static cl::opt<long long> checkTokensArg("check-tokens",
                                         cl::desc("compare this many tokens, evenly spaced "
                                                  "(default 0: all)"),
                                         cl::init(0));
static cl::opt<bool> resourcesArg("resources",
                                  cl::desc("print each kernel's registers, local memory "
                                           "(spills, stack) and shared memory"),
                                  cl::init(false));
static cl::opt<long long> maxLocalArg("max-local-bytes",
                                      cl::desc("fail when a kernel uses more local memory a "
                                               "thread than this (0: no spills; implies "
                                               "--resources)"),
                                      cl::init(-1));
static cl::opt<bool> loadOnlyArg("load-only",
                                 cl::desc("load each tier's kernels and run nothing (for "
                                          "--resources and --max-local-bytes)"),
                                 cl::init(false));
static cl::list<std::string> setArgs("set", cl::desc("spec override key=value"));
static cl::list<std::string> tableArgs("table",
                                       cl::desc("an aiter-format tuned table (repeatable): each "
                                                "token count runs and checks its tier's row, "
                                                "keyed by the chip and --cu-num"),
                                       cl::value_desc("csv"));
static cl::opt<std::string> retimeArg("retime",
                                      cl::desc("write the --table with the rows of the token "
                                               "counts timed again (their steps, --time runs) "
                                               "to this CSV"),
                                      cl::value_desc("csv"));

static int fail(const llvm::Twine &msg) {
  return tools::reportToolError("moegen-layer-check", msg);
}

int main(int argc, char **argv) {
  tools::parseDeviceToolOptions(argc, argv, "moegen-layer-check", MOEGEN_VERSION,
                                "whole layers from a kernel cache");
  if (specArg.empty())
    return fail("no spec given; usage: moegen-layer-check SPEC.moe --cache DIR [--backend "
                "cuda|emu] [--tokens N,...] [--kernels F,...] [--time N]");
  if (cacheArg.empty())
    return fail("--cache: the prefilled kernel cache directory is required (this tool "
                "compiles nothing)");
  const std::string backendName = backendArg;
  if (backendName != "cuda" && backendName != "emu")
    return fail("--backend: '" + backendName + "' is not a backend here; backends: cuda, emu");
#ifndef MOEGEN_HAVE_EMU_BACKEND
  if (backendName == "emu")
    return fail("--backend: this build has no emu backend (the static device build leaves the "
                "emulator out)");
#endif

  LayerCheckOptions options;
  options.seed = seedArg;
  options.weightScale = weightScaleArg;
  options.poison = poisonArg;
  options.cuNum = cuNumArg;
  options.timedRuns = static_cast<int>(timeArg);
  if (timeStepsArg && timeArg == 0)
    return fail("--time-steps: needs --time N (the runs whose steps it times)");
  options.timeSteps = timeStepsArg;
  options.warmupRuns = static_cast<int>(warmupArg);
  options.rotateBytes = rotateArg;
  if (checkTokensArg < 0)
    return fail("--check-tokens: " + llvm::Twine(checkTokensArg) + " is negative");
  options.checkTokens = checkTokensArg;
  if (loadOnlyArg && (timeArg > 0 || checkTokensArg > 0))
    return fail("--load-only: runs nothing, so --time and --check-tokens do not apply");
  if (maxLocalArg < -1)
    return fail("--max-local-bytes: " + llvm::Twine(maxLocalArg) + " is negative");
  options.kernelResources = resourcesArg || maxLocalArg >= 0;
  options.tunedTables.assign(tableArgs.begin(), tableArgs.end());
  if (!retimeArg.empty()) {
    if (tableArgs.size() != 1)
      return fail("--retime: needs exactly one --table (the table whose rows it times again), "
                  "not " +
                  llvm::Twine(tableArgs.size()));
    if (timeArg == 0 || loadOnlyArg)
      return fail("--retime: needs --time N (the runs whose step times' medians it writes)");
    options.timeSteps = true;
  }
  const llvm::StringRef hopper = TargetInfo::kHopperChip;
  options.target.chip = !targetArg.empty()      ? std::string(targetArg)
                        : backendName == "cuda" ? hopper.str()
                                                : TargetInfo::kDefaultChip.str();
  if (options.target.chip != hopper &&
      (backendName == "cuda" || options.target.chip != TargetInfo::kDefaultChip))
    return fail("--target: '" + options.target.chip + "' on " + backendName + "; the " +
                backendName + " backend runs " +
                (backendName == "cuda" ? hopper.str()
                                       : TargetInfo::kDefaultChip.str() + " or " + hopper.str()) +
                " kernels");
  auto families = parseKernelFamilies(kernelsArg);
  if (!families)
    return fail("--kernels: " + llvm::toString(families.takeError()));
  options.families = std::move(*families);
  if (!retimeArg.empty() && !options.families.empty())
    return fail("--retime: times whole layers, and --kernels runs a part of one");
  std::vector<int64_t> tokenCounts(tokensArg.begin(), tokensArg.end());
  if (tokenCounts.empty())
    tokenCounts.push_back(16);
  for (int64_t t : tokenCounts)
    if (llvm::Error e = checkTokenCount(t, "--tokens"))
      return fail(llvm::toString(std::move(e)));

  auto spec = loadMoeSpec(specArg, std::vector<std::string>(setArgs.begin(), setArgs.end()));
  if (!spec)
    return fail(llvm::toString(spec.takeError()));

  // --retime: each token count's row, which must be its own token's.
  std::optional<dispatch::TunedTable> retimed;
  std::map<int64_t, const dispatch::TunedRow *> retimedRows;
  if (!retimeArg.empty()) {
    auto table = dispatch::TunedTable::load(tableArgs.front());
    if (!table)
      return fail("--retime: " + llvm::toString(table.takeError()));
    retimed = std::move(*table);
    auto key = dispatch::aiterKeyFor(*spec, options.target.chip, options.cuNum);
    if (!key)
      return fail("--retime: " + llvm::toString(key.takeError()));
    for (int64_t t : tokenCounts) {
      const dispatch::TunedRow *row = retimed->lookup(*key, t).row;
      if (!row || row->key.token != t)
        return fail("--retime: " + llvm::Twine(t) + " tokens: " +
                    (row ? "the row that runs them is token " + std::to_string(row->key.token) +
                               "'s (" + row->location() + ")"
                         : "no row of " + tableArgs.front() + " runs them") +
                    "; --retime times each row at its own token count");
      retimedRows[t] = row;
    }
  }
  std::vector<tune::TunedResult> retimes;

  // The ahead-of-time source: a layer missing from the cache is an error
  // naming its key and the directory.
  runtime::KernelSourceOptions sourceOptions;
  sourceOptions.cacheDir = cacheArg;
  options.kernels = std::make_shared<runtime::KernelSource>(sourceOptions);

  std::unique_ptr<runtime::Backend> backend;
  if (backendName == "cuda") {
    auto b = runtime::createCudaBackend();
    if (!b)
      return fail(llvm::toString(b.takeError()));
    backend = std::move(*b);
  } else {
#ifdef MOEGEN_HAVE_EMU_BACKEND
    backend = runtime::createEmuBackend();
#endif
  }

  bool ok = true;
  // A failure of one token count: reported, and the exit status is 1.
  auto failAt = [&](int64_t tokens, const llvm::Twine &what) {
    fail(spec->name + ", " + llvm::Twine(tokens) + " tokens: " + what);
    ok = false;
  };
  // Kernels over --max-local-bytes fail the layer, named.
  auto checkLocalBytes = [&](int64_t tokens, llvm::ArrayRef<runtime::TierKernel> kernels) {
    for (const runtime::TierKernel &k : kernels)
      if (maxLocalArg >= 0 && k.resources.localBytes > maxLocalArg)
        failAt(tokens, toString(k.family) + " kernel " + k.symbol + " uses " +
                           llvm::Twine(k.resources.localBytes) +
                           " bytes of local memory a thread (register spills or a stack frame; " +
                           llvm::Twine(k.resources.registers) +
                           " registers), over --max-local-bytes " + llvm::Twine(maxLocalArg));
  };

  if (loadOnlyArg) {
    auto layer =
        runtime::MoeLayer::create(options.kernels, *backend, *spec, layerOptionsOf(options));
    if (!layer)
      return fail(llvm::toString(layer.takeError()));
    for (int64_t tokens : tokenCounts) {
      // Resolving the tier loads its kernels; the dispatch names its schedules.
      auto used = (*layer)->kernelResources(tokens);
      if (!used) {
        failAt(tokens, llvm::toString(used.takeError()));
        continue;
      }
      auto dispatch = (*layer)->dispatch(tokens);
      if (!dispatch) {
        failAt(tokens, llvm::toString(dispatch.takeError()));
        continue;
      }
      llvm::outs() << spec->name << " on " << backendName << " (" << options.target.chip << "), "
                   << tokens << " tokens (tier " << dispatch->tier << "), loaded, not run\n"
                   << "schedules: " << dispatch->origin << "\n";
      if (options.kernelResources)
        llvm::outs() << kernelResourceTable(*used);
      checkLocalBytes(tokens, *used);
    }
    return ok ? 0 : 1;
  }
  for (int64_t tokens : tokenCounts) {
    options.tokens = tokens;
    auto result = runLayerCheck(*spec, *backend, options);
    if (!result) {
      failAt(tokens, llvm::toString(result.takeError()));
      continue;
    }
    llvm::outs() << spec->name << " on " << backendName << " (" << options.target.chip << "), "
                 << result->tokens << " tokens";
    if (result->checkedTokens < result->tokens)
      llvm::outs() << " (" << result->checkedTokens << " compared)";
    llvm::outs() << ", " << generatedInputsOf(options) << ", kernels from " << cacheArg << "\n";
    if (!options.tunedTables.empty())
      llvm::outs() << "schedules: " << result->schedules << "\n";
    if (!result->stages.empty())
      llvm::outs() << result->table();
    else
      llvm::outs() << "no stage compared\n";
    if (!result->notRun.empty()) {
      llvm::outs() << "not run:";
      for (const std::string &s : result->notRun)
        llvm::outs() << " " << s;
      llvm::outs() << "\n";
    }
    if (options.kernelResources)
      llvm::outs() << kernelResourceTable(result->kernels);
    checkLocalBytes(tokens, result->kernels);
    if (result->timing) {
      const LayerTiming &t = *result->timing;
      llvm::outs() << llvm::format("time: %zu runs over %d copies of %.1f MB: median %.4f ms, "
                                   "min %.4f ms\n",
                                   t.runsMs.size(), t.copies, t.copyBytes / 1e6, t.medianMs(),
                                   t.minMs());
      if (!t.steps.empty())
        llvm::outs() << "steps (median of the runs, each from the previous step's event):\n"
                     << t.stepTable();
    }
    // A partial layer may compare nothing (reduce alone); it still ran.
    ok = ok && (result->stages.empty() || result->passed());
    if (retimed) {
      auto row = tune::retimedRow(*retimedRows[tokens], *spec, *result);
      if (!row)
        failAt(tokens, "--retime: " + llvm::toString(row.takeError()));
      else
        retimes.push_back(std::move(*row));
    }
  }
  if (retimed && !retimes.empty()) {
    tune::MergeReport merge;
    if (llvm::Error e =
            tune::writeTunedCsv(retimeArg, tune::mergeTunedRows(&*retimed, retimes, merge)))
      return fail("--retime: " + llvm::toString(std::move(e)));
    llvm::outs() << "wrote " << retimeArg << ": " << merge.replaced << " of "
                 << retimed->rows().size() << " rows of " << tableArgs.front() << " retimed\n";
  }
  return ok ? 0 : 1;
}
