//===- CacheCommand.cpp - moegen cache ------------------------------------===//
//
//   moegen cache ls [--dir DIR]
//   moegen cache clear [--dir DIR]
//   moegen cache prefill [--table CSV]... --spec LAYER.moe [--spec ...]
//                        [--target gfx950|sm_90a] [--dir DIR] [-j N] [--cu-num 256]
//                        [--kernels FAMILY,...]
//
// DIR defaults to $MOEGEN_CACHE_DIR, else $XDG_CACHE_HOME/moegen, else
// ~/.cache/moegen. `ls` and `clear` create nothing: `ls` of a cache that does
// not exist says so and succeeds; one that cannot be read, or that is refused
// (not owned by this user, writable by group or others), is an error naming
// the directory. `prefill` compiles, in parallel, every kernel a MoeLayer
// of each spec would use for each token tier with these tables (the tuned
// row of the tier, else the fallback; without tables, the spec's own
// schedules), for --target, so a deployment starts warm. The spec supplies
// what a table row does not name: the activation and its parameters. With
// --kernels, only those families' kernels: the cache entry a run with the same
// --kernels (moegen-layer-check, LayerOptions::families) looks up.
//
//===----------------------------------------------------------------------===//

#include "tools/moegen/Args.h"

#include "compiler/spec/DslParser.h"
#include "compiler/spec/KernelFamily.h"
#include "runtime/api/LayerSchedule.h"
#include "runtime/cache/DiskCache.h"
#include "runtime/jit/Compiler.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

namespace moegen::cli {
namespace {

namespace cl = llvm::cl;

const char *const kUsage =
    "usage: moegen cache ls [--dir DIR]\n"
    "       moegen cache clear [--dir DIR]\n"
    "       moegen cache prefill [--table CSV]... --spec LAYER.moe... [--target CHIP] [--dir DIR] "
    "[-j N] [--cu-num N] [--kernels FAMILY,...]\n";

int runCache();
cl::SubCommand command("cache", "list, clear or prefill the kernel cache");
CommandRegistration registration(command, runCache);

cl::opt<std::string> verbArg(cl::Positional, cl::desc("<ls | clear | prefill>"), cl::sub(command),
                             cl::cat(moegenCategory()));
cl::opt<std::string> dirArg("dir",
                            cl::desc("the cache root (default: $MOEGEN_CACHE_DIR, else "
                                     "$XDG_CACHE_HOME/moegen, else ~/.cache/moegen)"),
                            cl::value_desc("dir"), cl::sub(command), cl::cat(moegenCategory()));
cl::list<std::string> tableArgs("table", cl::desc("prefill: an aiter tuned CSV (repeatable)"),
                                cl::value_desc("csv"), cl::sub(command), cl::cat(moegenCategory()));
cl::list<std::string>
    kernelsArg("kernels",
               cl::desc("prefill: only the kernels of these families (comma-separated; the subset "
                        "a run with the same --kernels looks up); default: every kernel"),
               cl::value_desc("family,..."), cl::CommaSeparated, cl::sub(command),
               cl::cat(moegenCategory()));
cl::list<std::string> specArgs("spec", cl::desc("prefill: a layer to prefill for (repeatable)"),
                               cl::value_desc("layer.moe"), cl::sub(command),
                               cl::cat(moegenCategory()));
cl::opt<std::string> targetArg("target",
                               cl::desc("prefill: the chip the kernels are for (default gfx950; "
                                        "sm_90a)"),
                               cl::value_desc("chip"), cl::init(TargetInfo::kDefaultChip.str()),
                               cl::sub(command), cl::cat(moegenCategory()));
cl::opt<long long, false, PositiveParser>
    jobsArg("j", cl::desc("prefill: layers compiled at once (default: one per hardware thread)"),
            cl::sub(command), cl::cat(moegenCategory()));
cl::opt<long long, false, PositiveParser>
    cuNumArg("cu-num", cl::desc("prefill: the tables' cu_num column (default 256)"), cl::init(256),
             cl::sub(command), cl::cat(moegenCategory()));

int usage(const llvm::Twine &problem) {
  usageError("cache", problem);
  llvm::errs() << kUsage;
  return 2;
}

int fail(const llvm::Twine &msg) {
  llvm::WithColor::error(llvm::errs(), "moegen cache") << msg << "\n";
  return 1;
}

int list(const std::string &dir) {
  cache::DiskCache disk(dir, {}, cache::DiskCache::Open::ExistingOnly);
  auto entries = disk.list();
  if (!entries) {
    bool missing = false;
    std::string why;
    llvm::handleAllErrors(entries.takeError(), [&](const llvm::ErrorInfoBase &e) {
      missing = e.convertToErrorCode() == std::errc::no_such_file_or_directory;
      why = e.message();
    });
    if (!missing)
      return fail("cache " + disk.versionDir() + ": " + why);
    llvm::outs() << "cache " << disk.versionDir() << ": does not exist (nothing cached)\n";
    return 0;
  }
  llvm::outs() << "cache " << disk.versionDir() << ": " << entries->size() << " file(s)\n";
  uint64_t total = 0;
  for (const cache::EntryListing &e : *entries) {
    total += e.bytes;
    llvm::StringRef name = llvm::sys::path::filename(e.path);
    if (!e.valid) {
      llvm::outs() << "  " << name << "  " << e.bytes << " B  INVALID: " << e.problem << "\n";
      continue;
    }
    llvm::outs() << "  " << name.take_front(16) << "  "
                 << llvm::left_justify(toString(e.meta.family), 12)
                 << llvm::left_justify(e.meta.symbol, 32) << " " << llvm::format("%9llu B ", e.bytes)
                 << llvm::format("%8.1f ms  ", e.meta.compileMs) << e.meta.description << "\n";
  }
  llvm::outs() << "total " << total << " B\n";
  return 0;
}

int clear(const std::string &dir) {
  cache::DiskCache disk(dir, {}, cache::DiskCache::Open::ExistingOnly);
  auto removed = disk.clear();
  if (!removed)
    return fail(llvm::toString(removed.takeError()));
  llvm::outs() << "removed " << *removed << " file(s) from " << disk.versionDir() << "\n";
  return 0;
}

/// Every tier aiter's get_padded_M can produce.
std::vector<int64_t> allTiers() {
  std::vector<int64_t> t;
  for (int64_t m = 1; m <= 32768; m *= 2)
    t.push_back(m);
  t.push_back(131072);
  return t;
}

int prefill(const std::string &dir, const std::vector<std::string> &tables,
            const std::vector<std::string> &specPaths, const runtime::Target &target,
            llvm::ArrayRef<KernelFamily> families, unsigned jobs, int64_t cuNum) {
  if (specPaths.empty())
    return fail("prefill needs --spec: a table names schedules, the spec supplies the layer "
                "(problem, formats, activation and its parameters)");
  struct Job {
    int64_t tier;
    std::string layer;
    std::vector<runtime::LayerScheduler::Candidate> candidates;
  };
  std::vector<Job> work;
  for (const std::string &path : specPaths) {
    auto spec = parseMoeSpecFile(path);
    if (!spec)
      return fail(llvm::toString(spec.takeError()));
    runtime::LayerOptions options;
    options.tunedTables = tables;
    options.cuNum = cuNum;
    options.target = target; // the tables' gfx key is the chip compiled for
    auto scheduler = runtime::LayerScheduler::create(*spec, options);
    if (!scheduler)
      return fail(llvm::toString(scheduler.takeError()));
    for (int64_t tier : allTiers())
      work.push_back({tier, spec->name, (*scheduler)->candidates(tier)});
  }

  runtime::CompilerOptions co;
  co.cacheDir = dir;
  runtime::Compiler jit(co);
  if (jit.kernelCache().disk() &&
      jit.kernelCache().disk()->state() != cache::DiskCache::State::Writable)
    return fail("the cache directory is not writable; nothing would be kept");
  // Each (layer, tier) job on the pool; lines are printed in job order, so
  // the output does not depend on -j.
  std::vector<std::string> lines(work.size()), problems(work.size());
  auto compileJob = [&](size_t i) {
    {
      Job &job = work[i];
      std::string &line = lines[i], errors;
      for (auto &c : job.candidates) {
        auto kernels = jit.getKernels(c.spec, target, families);
        if (!kernels) {
          errors += "\n    " + c.origin + ": " + llvm::toString(kernels.takeError());
          continue;
        }
        line = job.layer + " tier " + std::to_string(job.tier) + ": " +
               runtime::toString(c.source).str() +
               (c.origin == runtime::toString(c.source) ? "" : " (" + c.origin + ")") + ":";
        for (const auto &k : (*kernels)->kernels)
          line += " " + k->meta.symbol;
        break;
      }
      if (line.empty())
        problems[i] = job.layer + " tier " + std::to_string(job.tier) + ": nothing compiles";
      line += errors;
    }
  };
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency(jobs));
  for (size_t i = 0; i < work.size(); ++i)
    pool.async([&compileJob, i] { compileJob(i); });
  pool.wait();
  int failures = 0;
  for (size_t i = 0; i < work.size(); ++i) {
    if (!problems[i].empty()) {
      ++failures;
      llvm::WithColor::error(llvm::errs(), "moegen cache") << problems[i] << lines[i] << "\n";
    } else {
      llvm::outs() << lines[i] << "\n";
    }
  }
  cache::CacheStats s = jit.stats();
  llvm::outs() << "prefill: " << s.compiles << " layer(s) compiled, " << s.diskHits
               << " kernel(s) already cached, " << s.diskWrites << " entry(ies) written to "
               << (jit.kernelCache().disk() ? jit.kernelCache().disk()->versionDir() : "") << "\n";
  return failures ? 1 : 0;
}

} // namespace

namespace {

int runCache() {
  llvm::StringRef verb = verbArg;
  if (verb.empty())
    return usage("no cache command given");
  if (verb != "ls" && verb != "clear" && verb != "prefill")
    return usage("unknown cache command '" + verb + "'");
  if (verb != "prefill")
    for (cl::Option *o : std::initializer_list<cl::Option *>{
             std::addressof(tableArgs), std::addressof(specArgs), std::addressof(kernelsArg),
             &targetArg, &jobsArg, &cuNumArg})
      if (o->getNumOccurrences())
        return usage((o->ArgStr.size() == 1 ? "-" : "--") + o->ArgStr +
                     " is an option of 'moegen cache prefill', not of '" + verb + "'");
  std::string dir = dirArg.empty() ? cache::defaultCacheRoot() : dirArg;
  if (dir.empty())
    return fail("no cache directory: pass --dir or set MOEGEN_CACHE_DIR");
  if (verb == "ls")
    return list(dir);
  if (verb == "clear")
    return clear(dir);
  std::vector<std::string> tables(tableArgs.begin(), tableArgs.end());
  std::vector<std::string> specs(specArgs.begin(), specArgs.end());
  auto chip = TargetInfo::get(targetArg);
  if (!chip)
    return usage("--target: " + llvm::toString(chip.takeError()));
  runtime::Target target;
  target.chip = chip->chip;
  auto families = parseKernelFamilies(kernelsArg);
  if (!families)
    return usage("--kernels: " + llvm::toString(families.takeError()));
  return prefill(dir, tables, specs, target, *families,
                 jobsArg.getNumOccurrences() ? unsigned(jobsArg) : 0, cuNumArg);
}

} // namespace

} // namespace moegen::cli
