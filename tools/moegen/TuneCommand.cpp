//===- TuneCommand.cpp - moegen tune --------------------------------------===//
//
//   moegen tune --spec SPEC.moe --untuned UNTUNED.csv --out TUNED.csv
//               [--backend emu|hip|cuda] [--devices N,...] [--top N] [--tokens N,...]
//               [--axis key=v1,v2 ...] [--jobs N] [--compile-timeout S]
//               [--cache-dir DIR] [--set key=value ...] [--list] [--prefill-only]
//               [--graph-rank N] [--tier-points N]
//
// For each row of an aiter untuned table (its key must be the spec's layer):
//   1. candidates per stage and block_m from the templates' rules
//      (tune/Space.h): pruned before any compile, counts reported;
//   2. every kept candidate compiled once, in child processes
//      (`moegen tune-worker`: crash and timeout isolation), each kernel's
//      time by the latency model at the row's token count;
//   3. per stage and block_m the top N by modelled time checked in rank
//      order through MoeLayer::run against the reference of the same spec
//      (runtime/check/LayerCheck.h: decode-first, unwritten output
//      poisoned, NaN fails); the first that passes is the stage's choice;
//   4. the best pair compiled and checked again as one layer, then written
//      as an aiter tuned row, merged into --out only where faster.
// Compiles and checks are journaled next to --out (TUNED.csv.journal), so
// an interrupted run resumes. Ties are broken by the candidate's id.
//
// On emu the times are the model's (the emulator does not time kernels);
// the output says so and tags the rows `moegen_model`.
//
// On hip and cuda the times are measured (tune/Measured.h): the compiled
// candidates are listed in a manifest in the cache directory (tune/Manifest.h;
// on hip each token count's order is the model's ranking, on cuda -- sm_90a,
// which the gfx950 model does not describe -- the space's own order), the
// first --top of each stage per block_m and their pairs are compiled, and the
// MLIR-free measuring part checks and times them on the device. With
// --prefill-only the run stops after compiling: `moegen-tune-device --cache
// DIR` measures on a machine where only a static binary runs.
//
//===----------------------------------------------------------------------===//

#include "tools/moegen/Args.h"

#include "bench/latency_model/Routing.h"
#include "bench/latency_model/Traffic.h"
#include "compiler/spec/DslParser.h"
#include "compiler/spec/SpecLimits.h"
#include "runtime/api/LayerSchedule.h"
#include "runtime/backend/EmuBackend.h"
#include "runtime/cache/CacheKey.h"
#include "runtime/check/LayerCheck.h"
#include "runtime/cuda/CudaBackend.h"
#include "runtime/dispatch/Lookup.h"
#include "runtime/dispatch/Tiers.h"
#include "runtime/hip/HipBackend.h"
#include "runtime/jit/Compiler.h"
#include "templates/LayerRules.h"
#include "tune/Journal.h"
#include "tune/Manifest.h"
#include "tune/Measured.h"
#include "tune/Pool.h"
#include "tune/Space.h"
#include "tune/TunedRows.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/xxhash.h"

#include <chrono>
#include <map>
#include <set>

namespace moegen::cli {

namespace cl = llvm::cl;

static int runTune();
static cl::SubCommand command("tune", "tune a layer's schedules per token count into an aiter "
                                      "tuned table");
static CommandRegistration registration(command, runTune);

static cl::opt<std::string> specArg("spec", cl::desc("the layer (problem, formats, activation)"),
                                    cl::value_desc("spec.moe"), cl::sub(command),
                                    cl::cat(moegenCategory()));
static cl::opt<std::string> untunedArg("untuned",
                                       cl::desc("aiter untuned table: the token counts to tune"),
                                       cl::value_desc("csv"), cl::sub(command),
                                       cl::cat(moegenCategory()));
static cl::opt<std::string> outArg("out",
                                   cl::desc("the tuned table to write (rows merged into it "
                                            "where faster); its journal is <out>.journal"),
                                   cl::value_desc("csv"), cl::sub(command),
                                   cl::cat(moegenCategory()));
static cl::opt<std::string> backendArg("backend",
                                       cl::desc("where candidates are checked: emu (default), "
                                                "hip, cuda"),
                                       cl::value_desc("name"), cl::init("emu"), cl::sub(command),
                                       cl::cat(moegenCategory()));
static cl::list<std::string> devicesArg("devices", cl::desc("devices to check on (hip)"),
                                        cl::CommaSeparated, cl::value_desc("ids"), cl::sub(command),
                                        cl::cat(moegenCategory()));
static cl::opt<long long, false, PositiveParser>
    topArg("top",
           cl::desc("candidates checked per stage and block_m, best modelled first "
                    "(default 8)"),
           cl::init(8), cl::sub(command), cl::cat(moegenCategory()));
static cl::list<long long> tokensArg("tokens",
                                     cl::desc("tune only these token counts of the table"),
                                     cl::CommaSeparated, cl::sub(command),
                                     cl::cat(moegenCategory()));
static cl::list<std::string> axisArgs("axis",
                                      cl::desc("values of a schedule parameter to try, e.g. "
                                               "stage1.k_batch=1,2 (repeatable)"),
                                      cl::value_desc("key=v1,v2"), cl::sub(command),
                                      cl::cat(moegenCategory()));
static cl::opt<long long, false, UnsignedParser>
    jobsArg("jobs", cl::desc("compiles at once (default: the host's cores)"), cl::init(0),
            cl::sub(command), cl::cat(moegenCategory()));
static cl::opt<long long, false, PositiveParser>
    timeoutArg("compile-timeout", cl::desc("seconds a compile may take (default 600)"),
               cl::init(600), cl::sub(command), cl::cat(moegenCategory()));
static cl::opt<std::string> cacheDirArg("cache-dir",
                                        cl::desc("the kernel cache candidates compile into "
                                                 "(default <out>.cache)"),
                                        cl::value_desc("dir"), cl::sub(command),
                                        cl::cat(moegenCategory()));
static cl::opt<std::string> gfxArg("gfx", cl::desc("the gfx column written (default gfx950)"),
                                   cl::value_desc("chip"), cl::init(TargetInfo::kDefaultChip.str()),
                                   cl::sub(command), cl::cat(moegenCategory()));
static cl::opt<long long, false, PositiveParser>
    cuNumArg("cu-num", cl::desc("the cu_num column written (default 256)"), cl::init(256),
             cl::sub(command), cl::cat(moegenCategory()));
static cl::opt<unsigned long long, false, UnsignedParser>
    seedArg("seed", cl::desc("seed of the checks' inputs (default 0)"), cl::init(0),
            cl::sub(command), cl::cat(moegenCategory()));
static cl::opt<bool> prefillOnlyArg("prefill-only",
                                    cl::desc("hip, cuda: compile the candidates into the cache "
                                             "directory with their manifest and stop (measure "
                                             "with moegen-tune-device --cache DIR)"),
                                    cl::sub(command), cl::cat(moegenCategory()));
static cl::opt<long long, false, PositiveParser>
    timedRunsArg("time", cl::desc("hip, cuda: timed runs per candidate (default 20)"), cl::init(20),
                 cl::sub(command), cl::cat(moegenCategory()));
static cl::opt<long long, false, UnsignedParser> graphRankArg(
    "graph-rank",
    cl::desc("hip, cuda: choose among this many of the fastest stage-1 candidates per block_m by "
             "the layer's time over graph replays (default 0: by the step times)"),
    cl::init(0), cl::sub(command), cl::cat(moegenCategory()));
static cl::opt<long long, false, PositiveParser> tierPointsArg(
    "tier-points",
    cl::desc("rank each row's candidates by their mean time (modelled on emu, measured on hip "
             "and cuda) over this many token counts spread over the row's tier, from the least "
             "count aiter pads to the row's to the row's own, each checked (default 1: the row's "
             "count only)"),
    cl::init(1), cl::sub(command), cl::cat(moegenCategory()));
static cl::opt<long long, false, UnsignedParser>
    checkTokensArg("check-tokens",
                   cl::desc("compare at most this many tokens per check, evenly spaced (default "
                            "1024; 0: all)"),
                   cl::init(tune::kDefaultCheckTokens), cl::sub(command),
                   cl::cat(moegenCategory()));
static cl::opt<bool> listArg("list",
                             cl::desc("print the kept candidates (id, aiter name) and stop before "
                                      "compiling"),
                             cl::sub(command), cl::cat(moegenCategory()));
static cl::opt<std::string>
    plantArg("test-plant-betas", cl::Hidden,
             cl::desc("test hook: build this candidate id with wrong activation parameters"),
             cl::sub(command), cl::cat(moegenCategory()));
static cl::opt<std::string>
    crashArg("test-crash-compile", cl::Hidden,
             cl::desc("test hook: the compile of this candidate id crashes"), cl::sub(command),
             cl::cat(moegenCategory()));
static SpecOverrideOption setArgs(command);

namespace {

using tune::Candidate;
using tune::CheckRecord;
using tune::CompileRecord;
using tune::StageTimes;

std::string hexHash(llvm::StringRef s) {
  return llvm::formatv("{0:x-16}", llvm::xxh3_64bits(s)).str();
}

/// A progress line on stderr with the rate so far as the ETA.
class Progress {
public:
  Progress(std::string what, size_t total)
      : what(std::move(what)), total(total), start(std::chrono::steady_clock::now()) {}
  void step(size_t failed) {
    ++done;
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double eta = done ? elapsed / done * (total - done) : 0;
    bool tty = llvm::errs().is_displayed();
    llvm::errs() << (tty ? "\r" : "")
                 << llvm::formatv("moegen tune: {0} {1}/{2} ({3}%), {4} failed, eta {5}s", what,
                                  done, total, done * 100 / std::max<size_t>(1, total), failed,
                                  (long long)(eta + 0.5))
                 << (tty && done < total ? "" : "\n");
  }

private:
  std::string what;
  size_t total, done = 0;
  std::chrono::steady_clock::time_point start;
};

struct Runner {
  std::string program, cacheDir, plantId, crashId, chip = TargetInfo::kDefaultChip.str();
  unsigned jobs = 1, timeout = 600;
  /// The latency model knows the chip: the workers print modelled times.
  bool modelled() const { return chip == TargetInfo::kDefaultChip; }
  std::vector<int64_t> tokens;
  tune::Journal *journal = nullptr;

  std::string cacheFor(llvm::StringRef id) const {
    return id == plantId ? cacheDir + "/planted" : cacheDir;
  }

  /// Compiles the layers whose records are missing (or lack a token count)
  /// in child processes; records every outcome.
  llvm::Error compile(const std::vector<std::pair<std::string, MoeSpec>> &layers, size_t &ranOut,
                      size_t &failedOut) {
    std::vector<tune::ChildJob> work;
    std::vector<size_t> which;
    std::string dir = cacheDir + "/candidates";
    if (std::error_code ec = llvm::sys::fs::create_directories(dir))
      return llvm::createStringError(ec, "%s: %s", dir.c_str(), ec.message().c_str());
    std::string tokenList;
    for (int64_t t : tokens)
      tokenList += (tokenList.empty() ? "" : ",") + std::to_string(t);
    for (size_t i = 0; i < layers.size(); ++i) {
      const auto &[id, spec] = layers[i];
      if (const CompileRecord *r = journal->compiled(id)) {
        bool complete = !r->ok || !modelled() ||
                        llvm::all_of(tokens, [&](int64_t t) { return r->times.count(t); });
        if (complete)
          continue;
      }
      std::string base = dir + "/" + hexHash(id);
      std::error_code ec;
      llvm::raw_fd_ostream os(base + ".moe", ec);
      if (ec)
        return llvm::createStringError(ec, "%s.moe: %s", base.c_str(), ec.message().c_str());
      os << "# " << id << "\n" << printMoeSpec(spec);
      os.close();
      tune::ChildJob job;
      job.args = {program,      "tune-worker", "--spec",  base + ".moe", "--cache-dir",
                  cacheFor(id), "--tokens",    tokenList, "--chip",      chip};
      if (id == plantId)
        job.args.push_back("--plant-betas");
      if (id == crashId)
        job.args.push_back("--crash");
      job.stdoutPath = base + ".out";
      job.stderrPath = base + ".err";
      work.push_back(std::move(job));
      which.push_back(i);
    }
    if (work.empty())
      return llvm::Error::success();
    Progress progress("compiled", work.size());
    size_t failed = 0;
    llvm::Error err = llvm::Error::success();
    tune::runChildren(program, work, jobs, timeout, [&](size_t j, const tune::ChildResult &res) {
      const std::string &id = layers[which[j]].first;
      CompileRecord rec;
      auto out = llvm::MemoryBuffer::getFile(work[j].stdoutPath);
      auto errText = llvm::MemoryBuffer::getFile(work[j].stderrPath);
      if (res.exited && res.exitCode == 0 && out) {
        rec.ok = true;
        llvm::SmallVector<llvm::StringRef> lines;
        (*out)->getBuffer().split(lines, '\n', -1, false);
        for (llvm::StringRef line : lines) {
          llvm::SmallVector<llvm::StringRef> f;
          line.split(f, ' ');
          int64_t t;
          double us;
          std::optional<KernelFamily> fam = f.size() == 5 ? parseKernelFamily(f[1]) : std::nullopt;
          if (!fam || f[3].getAsInteger(10, t) || f[4].getAsDouble(us)) {
            rec.ok = false;
            rec.reason = "unreadable worker output '" + line.str() + "'";
            break;
          }
          rec.times[t].charge(*fam, us);
        }
        for (int64_t t : tokens)
          if (rec.ok && modelled() && !rec.times.count(t)) {
            rec.ok = false;
            rec.reason = "the worker modelled no kernel at " + std::to_string(t) + " tokens";
          }
      } else {
        // The child's first line of its own: an error, or what it said before
        // crashing (not LLVM's stack dump).
        std::string said;
        if (errText) {
          llvm::SmallVector<llvm::StringRef> lines;
          (*errText)->getBuffer().split(lines, '\n', -1, false);
          for (llvm::StringRef l : lines)
            if (!l.trim().empty() && !l.starts_with(" ") && !l.starts_with("#") &&
                !l.starts_with("PLEASE ") && !l.starts_with("Stack dump") && !l.starts_with("0.")) {
              said = l.trim().str();
              break;
            }
        }
        rec.reason = res.exited ? "exit status " + std::to_string(res.exitCode) : res.error;
        if (!said.empty())
          rec.reason += ": " + said;
      }
      if (!rec.ok)
        ++failed;
      if (llvm::Error e = journal->recordCompile(id, rec))
        err = llvm::joinErrors(std::move(err), std::move(e));
      progress.step(failed);
    });
    ranOut += work.size();
    failedOut += failed;
    return err;
  }
};

} // namespace

static int runTune() {
  const char *name = "tune";
  // Options are copied first: a link in this process (a cache entry that
  // must be compiled again) resets them.
  std::string specPath = specArg, untunedPath = untunedArg, outPath = outArg,
              backendName = backendArg, plantId = plantArg, crashId = crashArg;
  const std::vector<long long> onlyTokens(tokensArg.begin(), tokensArg.end());
  const std::vector<std::string> axes(axisArgs.begin(), axisArgs.end()),
      overrides = setArgs.values();
  const std::vector<std::string> deviceIds(devicesArg.begin(), devicesArg.end());
  const size_t top = size_t(topArg), devices = deviceIds.size();
  const uint64_t seed = seedArg;
  const bool listOnly = listArg;
  if (uint64_t(checkTokensArg) > uint64_t(limits::kMaxTokens))
    return usageError(name, "--check-tokens " + std::to_string(uint64_t(checkTokensArg)) +
                                " is over the " + std::to_string(limits::kMaxTokens) +
                                " tokens a layer can have");
  const int64_t checkTokens = int64_t(checkTokensArg);
  if (specPath.empty() || untunedPath.empty() || (outPath.empty() && !listOnly))
    return usageError(name, "usage: moegen tune --spec SPEC.moe --untuned UNTUNED.csv --out "
                            "TUNED.csv [--backend emu|hip|cuda]");
  if (backendName != "emu" && backendName != "hip" && backendName != "cuda")
    return usageError(name, "--backend '" + backendName + "': unknown (backends: emu, hip, cuda)");
  const bool measured = backendName != "emu", prefillOnly = prefillOnlyArg;
  if (prefillOnly && !measured)
    return usageError(name, "--prefill-only: only with --backend hip or cuda (emu checks in "
                            "this process)");
  if (uint64_t(tierPointsArg) > tune::kMaxTierPoints)
    return usageError(name, "--tier-points " + std::to_string(tierPointsArg) + " is over " +
                                std::to_string(tune::kMaxTierPoints));
  if (tierPointsArg > 1 && prefillOnly)
    return usageError(name, "--tier-points: the measuring part takes it (moegen-tune-device "
                            "--tier-points), not --prefill-only");
  if (backendName == "emu" && devices)
    return usageError(name, "--devices: the emu backend is one device");
  if (devices > 1)
    return usageError(name,
                      "--devices: one device per run for now (got " + llvm::Twine(devices) + ")");
  auto fail = [](const llvm::Twine &msg) {
    llvm::WithColor::error(llvm::errs(), "moegen tune") << msg << "\n";
    return 1;
  };

  // On cuda the key columns name the H200 (sm_90a, 132 SMs) unless given.
  const bool cuda = backendName == "cuda";
  auto targetInfo = TargetInfo::get(cuda ? "sm_90a" : TargetInfo::kDefaultChip);
  if (!targetInfo)
    return fail(llvm::toString(targetInfo.takeError()));
  const TargetInfo target = *targetInfo;
  tune::SearchSpace space = tune::SearchSpace::defaultsFor(target);
  for (const std::string &a : axes)
    if (llvm::Error e = space.setAxis(a))
      return usageError(name, llvm::toString(std::move(e)));
  auto spec = loadMoeSpec(specPath, overrides);
  if (!spec) {
    printError(spec.takeError());
    return 1;
  }
  const int64_t cuNum = cuda && !cuNumArg.getNumOccurrences() ? 132 : int64_t(cuNumArg);
  const std::string gfx = cuda && !gfxArg.getNumOccurrences() ? "sm_90a" : std::string(gfxArg);
  auto key = dispatch::aiterKeyFor(*spec, gfx, cuNum);
  if (!key)
    return fail(specPath + ": " + llvm::toString(key.takeError()));

  // The rows: the spec must be their layer (the row cannot carry the
  // activation's parameters, the spec can: the reference and the kernels
  // both take them from the spec).
  auto untuned = dispatch::TunedTable::load(untunedPath);
  if (!untuned)
    return fail(llvm::toString(untuned.takeError()));
  std::vector<int64_t> tokens;
  for (const auto &row : untuned->rows()) {
    const dispatch::TunedKey &k = row->key;
    std::vector<std::tuple<const char *, std::string, std::string>> cols = {
        {"model_dim", std::to_string(k.modelDim), std::to_string(key->modelDim)},
        {"inter_dim", std::to_string(k.interDim), std::to_string(key->interDim)},
        {"expert", std::to_string(k.expert), std::to_string(key->expert)},
        {"topk", std::to_string(k.topk), std::to_string(key->topk)},
        {"act_type", k.actType, key->actType},
        {"dtype", k.dtype, key->dtype},
        {"q_dtype_a", k.qDtypeA, key->qDtypeA},
        {"q_dtype_w", k.qDtypeW, key->qDtypeW},
        {"q_type", k.qType, key->qType},
        {"use_g1u1", std::to_string(k.useG1U1), std::to_string(key->useG1U1)},
        {"doweight_stage1", std::to_string(k.doweightStage1), std::to_string(key->doweightStage1)}};
    for (auto &[col, got, want] : cols)
      if (got != want)
        return fail(row->location() + ": column '" + col + "' is " + got + ", the spec " +
                    specPath + (overrides.empty() ? "" : " (with --set)") + " has " + want +
                    "; the spec must describe the row's layer");
    if (llvm::Error e = checkTokenCount(k.token, row->location()))
      return fail(llvm::toString(std::move(e)));
    if (onlyTokens.empty() || llvm::is_contained(onlyTokens, k.token))
      if (!llvm::is_contained(tokens, k.token))
        tokens.push_back(k.token);
  }
  for (long long t : onlyTokens)
    if (!llvm::is_contained(tokens, t))
      return fail("--tokens " + llvm::Twine(t) + ": no row of " + untunedPath + " has it");
  if (tokens.empty())
    return fail(untunedPath + ": no rows to tune");

  tune::SpaceReport report;
  std::vector<Candidate> candidates = tune::enumerateCandidates(*spec, space, target, report);
  llvm::outs() << "moegen tune: " << spec->name << " (" << precisionTag(spec->formats) << ") on "
               << backendName << " (" << target.chip << "), " << tokens.size()
               << " token count(s); "
               << (measured ? "times are measured with device events"
                            : "times are the latency model's estimates (bench/latency_model), "
                              "not measurements")
               << "\n";
  llvm::outs() << "candidates: " << report.summary() << "\n";
  for (const std::string &s : report.skipped)
    llvm::outs() << "  skipped " << s << "\n";
  for (const std::string &s : report.partners)
    llvm::outs() << "  " << s << "\n";
  if (listOnly) {
    for (const Candidate &c : candidates)
      llvm::outs() << c.id << "\t" << c.kernelName << "\n";
    return 0;
  }

  // Where the checks run (--prefill-only needs none: the device machine
  // measures).
  std::unique_ptr<runtime::Backend> backend;
  int deviceId = -1;
  if (devices) {
    if (llvm::StringRef(deviceIds[0]).getAsInteger(10, deviceId) || deviceId < 0)
      return usageError(name, "--devices: '" + deviceIds[0] + "' is not a device index");
  }
  if (prefillOnly) {
  } else if (cuda) {
    runtime::CudaBackendOptions o;
    o.chip = target.chip;
    o.device = deviceId;
    auto b = runtime::createCudaBackend(o);
    if (!b)
      return fail("--backend " + backendName + ": " + llvm::toString(b.takeError()));
    backend = std::move(*b);
  } else if (backendName == "emu") {
    emu::Options emuOptions;
    emuOptions.Threads = llvm::heavyweight_hardware_concurrency().compute_thread_count();
    backend = runtime::createEmuBackend(emuOptions);
  } else {
    runtime::HipBackendOptions hip;
    if (devices)
      hip.device = deviceId;
    auto b = runtime::createHipBackend(hip);
    if (!b)
      return fail("--backend " + backendName + ": " + llvm::toString(b.takeError()));
    backend = std::move(*b);
  }

  std::string cacheDir = cacheDirArg.empty() ? outPath + ".cache" : std::string(cacheDirArg);
  // The binary is part of the run: another build may compile or model
  // differently (the build id covers the compiler, not the latency model).
  std::string program = llvm::sys::fs::getMainExecutable(nullptr, (void *)&runTune);
  auto binary = llvm::MemoryBuffer::getFile(program, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!binary)
    return fail(program + ": " + binary.getError().message());
  // The compile records say what is in this cache directory: a journal
  // written for another one would skip compiles that directory lacks.
  llvm::SmallString<256> cacheAbs(cacheDir);
  llvm::sys::fs::make_absolute(cacheAbs);
  llvm::sys::path::remove_dots(cacheAbs, /*remove_dot_dot=*/true);
  std::string fingerprint = hexHash(printMoeSpec(*spec) + "\n" + cache::buildId().str() + "\n" +
                                    hexHash((*binary)->getBuffer()) + "\n" + backendName + "\n" +
                                    plantId + "\n" + std::to_string(seed) + "\n" +
                                    std::to_string(checkTokens) + "\n" + cacheAbs.str().str());
  auto journal = tune::Journal::open(outPath + ".journal", fingerprint);
  if (!journal)
    return fail(llvm::toString(journal.takeError()));
  if ((*journal)->resumedRecords())
    llvm::outs() << "journal: resumed " << (*journal)->resumedRecords() << " records from "
                 << (*journal)->path() << "\n";

  Runner runner;
  runner.program = program;
  runner.cacheDir = cacheDir;
  runner.plantId = plantId;
  runner.crashId = crashId;
  runner.jobs =
      jobsArg ? unsigned(jobsArg) : llvm::heavyweight_hardware_concurrency().compute_thread_count();
  runner.timeout = unsigned(timeoutArg);
  // The workers model every token count a row is ranked over.
  auto pointsOf = [&](int64_t T) { return dispatch::tierTokens(T, size_t(tierPointsArg)); };
  {
    std::set<int64_t> all;
    for (int64_t T : tokens)
      for (int64_t p : pointsOf(T))
        all.insert(p);
    runner.tokens.assign(all.begin(), all.end());
  }
  runner.chip = target.chip;
  runner.journal = journal->get();

  std::vector<std::pair<std::string, MoeSpec>> layers;
  for (const Candidate &c : candidates)
    layers.push_back({c.id, c.layer});
  size_t compiledNow = 0, compileFailures = 0;
  if (llvm::Error e = runner.compile(layers, compiledNow, compileFailures))
    return fail(llvm::toString(std::move(e)));
  size_t failedTotal = 0;
  for (const Candidate &c : candidates)
    if (const CompileRecord *r = runner.journal->compiled(c.id); r && !r->ok) {
      if (failedTotal++ < 5)
        llvm::outs() << "  compile failed: " << c.id << ": " << r->reason << "\n";
    }
  llvm::outs() << "compiled: " << candidates.size() - failedTotal << " of " << candidates.size()
               << " candidates (" << compiledNow << " compiled in this run, " << compileFailures
               << " of them failed; " << failedTotal << " failed in all)\n";

  if (measured) {
    // The manifest the measuring part reads: every compiled candidate, per
    // token count the order they are checked in, the pairs of each block_m's
    // first --top per stage, and the spec's own schedules (the baseline).
    tune::Manifest m;
    m.chip = target.chip;
    m.gfx = gfx;
    m.cuNum = cuNum;
    m.tokens = tokens;
    auto fileOf = [](const std::string &id) { return "candidates/" + hexHash(id) + ".moe"; };
    std::vector<const Candidate *> byIndex;
    for (const Candidate &c : candidates) {
      const CompileRecord *r = runner.journal->compiled(c.id);
      if (!r || !r->ok) {
        m.failed[c.id] = r ? r->reason : "not compiled";
        continue;
      }
      tune::ManifestCandidate mc;
      mc.file = fileOf(c.id);
      mc.id = c.id;
      mc.stage = c.stage;
      mc.blockM = c.blockM;
      mc.kernelName = c.kernelName;
      m.candidates.push_back(std::move(mc));
      byIndex.push_back(&c);
    }
    std::set<std::pair<size_t, size_t>> pairSet;
    for (int64_t T : tokens) {
      std::vector<size_t> &order = m.order[T];
      for (size_t n = 0; n < byIndex.size(); ++n)
        order.push_back(n);
      if (!cuda) // hip: the gfx950 model's ranking at T (ties: the id)
        llvm::stable_sort(order, [&](size_t a, size_t b) {
          const Candidate &ca = *byIndex[a], &cb = *byIndex[b];
          auto us = [&](const Candidate &c) {
            const StageTimes &t = runner.journal->compiled(c.id)->times.at(T);
            return c.stage == StageId::Stage1 ? t.us1 : t.us2;
          };
          return us(ca) != us(cb) ? us(ca) < us(cb) : ca.id < cb.id;
        });
      std::map<int64_t, std::array<std::vector<size_t>, 2>> firsts;
      for (size_t n : order) {
        auto &list = firsts[byIndex[n]->blockM][byIndex[n]->stage == StageId::Stage1 ? 0 : 1];
        if (list.size() < top)
          list.push_back(n);
      }
      for (auto &[bm, lists] : firsts)
        for (size_t a : lists[0])
          for (size_t b : lists[1])
            pairSet.insert({a, b});
    }
    std::vector<std::pair<std::string, MoeSpec>> toCompile = {{"spec", *spec}};
    std::vector<std::tuple<size_t, size_t, std::string>> pairIds;
    for (auto [a, b] : pairSet) {
      const Candidate &c1 = *byIndex[a], &c2 = *byIndex[b];
      MoeSpec layer = tune::combine(c1, c2);
      if (!checkLayer(layer, target).empty())
        continue; // the pair breaks a rule neither partner did
      std::string id = sameSpec(layer, c1.layer)   ? c1.id
                       : sameSpec(layer, c2.layer) ? c2.id
                                                   : "layer " + c1.id + " + " + c2.id;
      pairIds.push_back({a, b, id});
      toCompile.push_back({id, layer});
    }
    // The rows --out already has at these token counts: measured beside the
    // candidates, so that a row is replaced only by a faster one in the same
    // run (one that is a pair above is that pair's layer, measured once).
    std::vector<std::pair<int64_t, tune::ManifestIncumbent>> incumbents;
    if (llvm::sys::fs::exists(outPath)) {
      auto existing = dispatch::TunedTable::load(outPath);
      if (!existing)
        return fail(llvm::toString(existing.takeError()));
      for (int64_t T : tokens) {
        dispatch::LookupResult r = existing->lookup(*key, T);
        if (!r.row || r.row->key.token != T || r.viaActAgnostic())
          continue;
        tune::ManifestIncumbent inc;
        inc.kernelName1 = r.row->get("kernelName1");
        inc.kernelName2 = r.row->get("kernelName2");
        MoeSpec layer = *spec;
        std::string why;
        if (!runtime::applyKernelNames(layer, inc.kernelName1, inc.kernelName2, why)) {
          llvm::outs() << "tokens " << T << ": the row " << r.row->location()
                       << " is not measured: " << why << "\n";
          continue;
        }
        if (auto issues = checkLayer(layer, target); !issues.empty()) {
          llvm::outs() << "tokens " << T << ": the row " << r.row->location()
                       << " is not measured: " << issues.front().str() << "\n";
          continue;
        }
        auto same =
            llvm::find_if(toCompile, [&](const auto &l) { return sameSpec(l.second, layer); });
        if (same != toCompile.end()) {
          inc.id = same->first;
        } else {
          inc.id = "row " + inc.kernelName1 + " + " + inc.kernelName2;
          toCompile.push_back({inc.id, layer});
        }
        incumbents.push_back({T, inc});
      }
    }
    size_t ran = 0, pairFailures = 0;
    if (llvm::Error e = runner.compile(toCompile, ran, pairFailures))
      return fail(llvm::toString(std::move(e)));
    const CompileRecord *specRecord = runner.journal->compiled("spec");
    if (!specRecord || !specRecord->ok)
      return fail(specPath + ": the spec's own schedules do not compile for " + target.chip + ": " +
                  (specRecord ? specRecord->reason : std::string("not compiled")));
    m.specFile = fileOf("spec");
    for (auto &[a, b, id] : pairIds) {
      tune::ManifestPair p;
      p.blockM = byIndex[a]->blockM;
      p.s1 = a;
      p.s2 = b;
      p.file = fileOf(id);
      p.id = id;
      m.pairs.push_back(p);
      if (const CompileRecord *r = runner.journal->compiled(id); !r || !r->ok)
        m.failed[id] = r ? r->reason : "not compiled";
    }
    for (auto &[T, inc] : incumbents) {
      const CompileRecord *r = runner.journal->compiled(inc.id);
      if (!r || !r->ok) {
        llvm::outs() << "tokens " << T << ": the row's layer (" << inc.id
                     << ") is not measured: " << (r ? r->reason : "not compiled") << "\n";
        continue;
      }
      inc.file = fileOf(inc.id);
      m.incumbents[T] = inc;
    }
    std::string manifestPath = cacheDir + "/" + tune::kManifestName;
    {
      std::error_code ec;
      llvm::raw_fd_ostream os(manifestPath, ec);
      if (ec)
        return fail(manifestPath + ": " + ec.message());
      os << m.print();
    }
    llvm::outs() << "manifest: " << manifestPath << ": " << m.candidates.size() << " candidates, "
                 << m.pairs.size() << " pairs (" << pairFailures
                 << " failed to compile), the spec's own schedules, " << m.incumbents.size()
                 << " row(s) of " << outPath << "\n";
    if (prefillOnly) {
      llvm::outs() << "prefilled " << cacheDir << " for " << target.chip
                   << "; measure there with: moegen-tune-device --cache DIR --out TUNED.csv\n";
      return 0;
    }
    tune::MeasuredTuneOptions o;
    o.manifestDir = cacheDir;
    o.outPath = outPath;
    o.tag = "moegen_" + backendName + "_" + target.chip;
    o.journalPrefix = fingerprint;
    o.top = top;
    o.seed = seed;
    o.launchCuNum = cuNum;
    o.timedRuns = int(timedRunsArg);
    o.graphRank = size_t(graphRankArg);
    o.tierPoints = size_t(tierPointsArg);
    o.checkTokens = checkTokens;
    runtime::KernelSourceOptions ko;
    ko.cacheDir = cacheDir;
    auto missing = tune::runMeasuredTune(o, std::make_shared<runtime::KernelSource>(ko), *backend,
                                         llvm::outs());
    if (!missing)
      return fail(llvm::toString(missing.takeError()));
    return *missing ? 1 : 0;
  }

  // Checks go through the cache the children filled.
  auto kernelsIn = [&](const std::string &dir) {
    runtime::CompilerOptions o;
    o.cacheDir = dir;
    return std::make_shared<runtime::Compiler>(o);
  };
  std::shared_ptr<runtime::KernelSource> kernels = kernelsIn(cacheDir);
  std::shared_ptr<runtime::KernelSource> planted = kernelsIn(cacheDir + "/planted");
  // The candidates of a token count check on the same inputs.
  auto inputsCache = std::make_shared<GeneratedInputsCache>();
  auto check = [&](const std::string &id, const MoeSpec &layer, int64_t T) -> CheckRecord {
    if (const CheckRecord *r = runner.journal->checked(T, id))
      return *r;
    LayerCheckOptions o;
    o.tokens = T;
    o.seed = seed;
    o.poison = true;
    o.checkTokens = checkTokens;
    o.inputsCache = inputsCache;
    o.kernels = id == runner.plantId ? planted : kernels;
    CheckRecord rec;
    auto result = runLayerCheck(layer, *backend, o);
    if (!result) {
      rec.detail = "error: " + llvm::toString(result.takeError());
    } else {
      rec.passed = result->passed();
      rec.err1 = tune::mismatchFraction(*result, "stage1");
      rec.err2 = tune::mismatchFraction(*result, "stage2");
      rec.detail = rec.passed ? "" : tune::failingStages(*result);
    }
    if (llvm::Error e = runner.journal->recordCheck(T, id, rec)) {
      llvm::WithColor::warning(llvm::errs(), "moegen tune") << llvm::toString(std::move(e)) << "\n";
    }
    return rec;
  };

  std::vector<tune::TunedResult> results;
  int status = 0;
  Progress rowsProgress("tuned token counts", tokens.size());
  size_t rowsFailed = 0;
  for (int64_t T : tokens) {
    // Ranked by the model's mean over the row's tier (--tier-points), each
    // count checked.
    const std::vector<int64_t> points = pointsOf(T);
    if (auto note = tune::tierPointsNote(T, size_t(tierPointsArg)))
      llvm::outs() << "tokens " << T << ": " << *note << "\n";
    auto meanOf = [&](const CompileRecord &r) {
      StageTimes mean;
      for (int64_t p : points) {
        mean.us1 += r.times.at(p).us1 / double(points.size());
        mean.us2 += r.times.at(p).us2 / double(points.size());
      }
      return mean;
    };
    // A check at every count: the first that fails is the record, naming
    // its count; else the row's own count's (the last of the points).
    auto checkOver = [&](const std::string &id, const MoeSpec &layer) {
      CheckRecord r;
      for (int64_t p : points) {
        r = check(id, layer, p);
        if (!r.passed) {
          if (points.size() > 1)
            r.detail = "at " + std::to_string(p) + " tokens: " + r.detail;
          return r;
        }
      }
      return r;
    };
    // Per block_m: the stage candidates that compiled, best modelled first
    // (ties: the id).
    std::map<int64_t, std::array<std::vector<const Candidate *>, 2>> ranked;
    auto timeOf = [&](const Candidate &c) {
      StageTimes t = meanOf(*runner.journal->compiled(c.id));
      return c.stage == StageId::Stage1 ? t.us1 : t.us2;
    };
    for (const Candidate &c : candidates)
      if (const CompileRecord *r = runner.journal->compiled(c.id); r && r->ok)
        ranked[c.blockM][c.stage == StageId::Stage1 ? 0 : 1].push_back(&c);
    struct Choice {
      int64_t blockM;
      const Candidate *s[2];
      double us;
    };
    std::vector<Choice> choices;
    size_t checked = 0, rejected = 0;
    for (auto &[bm, stages] : ranked) {
      Choice ch{bm, {nullptr, nullptr}, 0};
      for (int s = 0; s < 2; ++s) {
        auto &list = stages[s];
        llvm::stable_sort(list, [&](const Candidate *a, const Candidate *b) {
          double ta = timeOf(*a), tb = timeOf(*b);
          return ta != tb ? ta < tb : a->id < b->id;
        });
        for (size_t i = 0; i < list.size() && i < top; ++i) {
          CheckRecord r = checkOver(list[i]->id, list[i]->layer);
          ++checked;
          if (r.passed) {
            ch.s[s] = list[i];
            ch.us += timeOf(*list[i]);
            break;
          }
          ++rejected;
          llvm::outs() << "tokens " << T << ": FAIL " << list[i]->id << ": " << r.detail << "\n";
        }
      }
      if (ch.s[0] && ch.s[1])
        choices.push_back(ch);
    }
    llvm::stable_sort(choices, [](const Choice &a, const Choice &b) {
      return a.us != b.us ? a.us < b.us : a.blockM < b.blockM;
    });
    llvm::outs() << "tokens " << T << ": checked " << checked << " candidates, " << rejected
                 << " failed\n";
    bool done = false;
    for (const Choice &ch : choices) {
      MoeSpec layer = tune::combine(*ch.s[0], *ch.s[1]);
      // A pair whose layer one of its stages was compiled as is that
      // compile and check (each schedule is compiled once).
      std::string id = sameSpec(layer, ch.s[0]->layer) ? ch.s[0]->id
                       : sameSpec(layer, ch.s[1]->layer)
                           ? ch.s[1]->id
                           : "layer " + ch.s[0]->id + " + " + ch.s[1]->id;
      if (!checkLayer(layer, target).empty())
        continue; // the pair breaks a rule neither partner did
      size_t ran = 0, failed = 0;
      if (llvm::Error e = runner.compile({{id, layer}}, ran, failed))
        return fail(llvm::toString(std::move(e)));
      const CompileRecord *cr = runner.journal->compiled(id);
      if (!cr || !cr->ok) {
        llvm::outs() << "tokens " << T << ": FAIL " << id << ": "
                     << (cr ? cr->reason : std::string("not compiled")) << "\n";
        continue;
      }
      CheckRecord r = checkOver(id, layer);
      if (!r.passed) {
        llvm::outs() << "tokens " << T << ": FAIL " << id << ": " << r.detail << "\n";
        continue;
      }
      if (points.size() > 1)
        llvm::outs() << llvm::formatv("tokens {0}: ranked by {1:f2} us modelled, the mean over {2} "
                                      "tokens\n",
                                      T, meanOf(*cr).us(), tune::joinTokenCounts(points));
      // The row's columns are its own count's, as aiter's.
      const StageTimes &t = cr->times.at(T);
      tune::TunedResult res;
      res.key = *key;
      res.key.token = T;
      res.blockM = ch.blockM;
      res.ksplit = layer.stage1.kBatch > 1 ? layer.stage1.kBatch : 0;
      res.us1 = t.us1;
      res.us2 = t.us2;
      res.kernelName1 = ch.s[0]->kernelName;
      res.kernelName2 = ch.s[1]->kernelName;
      res.err1 = r.err1;
      res.err2 = r.err2;
      const Problem &p = layer.problem;
      double us = std::max(1e-9, t.us());
      res.tflops = 6.0 * double(T) * p.topk * p.interDim * p.modelDim / (us * 1e-6) / 1e12;
      latency::Routing routing = latency::expectedRouting(T, p.topk, p.experts, ch.blockM);
      double bytes = latency::kernelBytes(KernelFamily::Stage1, layer, T, routing) +
                     latency::kernelBytes(KernelFamily::Stage2, layer, T, routing);
      res.bw = bytes / (us * 1e-6) / 1e9;
      res.tag = backendName == "emu" ? "moegen_model" : "moegen_model_" + backendName;
      llvm::outs() << llvm::formatv("tokens {0}: block_m {1}: {2} (us1 {3:f2}) + {4} (us2 "
                                    "{5:f2}) = {6:f2} us modelled, err1 {7} err2 {8}\n",
                                    T, ch.blockM, res.kernelName1, res.us1, res.kernelName2,
                                    res.us2, t.us(), tune::formatErr(res.err1),
                                    tune::formatErr(res.err2));
      results.push_back(std::move(res));
      done = true;
      break;
    }
    if (!done) {
      llvm::outs() << "tokens " << T << ": no candidate pair passed its checks; no row\n";
      status = 1;
      ++rowsFailed;
    }
    rowsProgress.step(rowsFailed);
  }

  // Merge into --out (written whole, then renamed over it).
  std::optional<dispatch::TunedTable> existing;
  if (llvm::sys::fs::exists(outPath)) {
    auto t = dispatch::TunedTable::load(outPath);
    if (!t)
      return fail(llvm::toString(t.takeError()));
    existing = std::move(*t);
  }
  tune::MergeReport merge;
  std::string csv = tune::mergeTunedRows(existing ? &*existing : nullptr, results, merge);
  std::string tmp = outPath + ".tmp";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec);
    if (ec)
      return fail(tmp + ": " + ec.message());
    os << csv;
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, outPath))
    return fail(outPath + ": " + ec.message());
  llvm::outs() << "wrote " << outPath << ": " << merge.added << " added, " << merge.replaced
               << " replaced, " << merge.keptFaster << " kept (the existing row is faster)\n";
  return status;
}

} // namespace moegen::cli
