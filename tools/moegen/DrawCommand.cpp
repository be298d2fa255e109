//===- DrawCommand.cpp - moegen draw --------------------------------------===//
//
//   moegen draw --out DIR [--target gfx950|sm_90a] [--count N] [--seed S] [-j N]
//
// Draws random layers (runtime/check/LayerSampler.h) until --count of them
// keep the schedule rules of --target, and writes each accepted one as
// DIR/draw_NNNN.moe, the manifest DIR/draws.txt (one line per layer: the spec
// file, the token count and the CU count to check it at) and the layers'
// kernels into the kernel cache DIR/cache, so that a machine without the
// compiler checks them all (tools/layer-check/check-draws.sh runs
// moegen-layer-check on each). This is the emulator's schedule property test
// (every layer the rules accept computes the reference's answer) carried to
// a GPU: on sm_90a there is no emulator. Prints one line per accepted layer
// and a summary of the rules the rejected draws broke.
//
//===----------------------------------------------------------------------===//

#include "tools/moegen/Args.h"

#include "compiler/spec/DslParser.h"
#include "runtime/cache/DiskCache.h"
#include "runtime/check/LayerSampler.h"
#include "runtime/jit/Compiler.h"
#include "templates/LayerRules.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/WithColor.h"

#include <map>

namespace moegen::cli {
namespace {

namespace cl = llvm::cl;

/// The most layers one call writes (each is a compile of every kernel).
constexpr long long kMaxDraws = 10000;
/// Draws tried per wanted layer before giving up (about 1 in 15 is accepted
/// on gfx950, 1 in 33 on sm_90a).
constexpr long long kDrawsPerLayer = 200;

int runDraw();
cl::SubCommand command("draw", "write random layers that keep the schedule rules, and their "
                               "kernels, to check on a device");
CommandRegistration registration(command, runDraw);

cl::opt<std::string> outArg("out", cl::desc("the directory to write (created)"),
                            cl::value_desc("dir"), cl::sub(command), cl::cat(moegenCategory()));
cl::opt<std::string> targetArg("target", cl::desc("the chip (default gfx950; sm_90a)"),
                               cl::value_desc("chip"), cl::init(TargetInfo::kDefaultChip.str()),
                               cl::sub(command), cl::cat(moegenCategory()));
cl::opt<long long, false, PositiveParser>
    countArg("count", cl::desc("accepted layers to write (default 20, at most 10000)"),
             cl::init(20), cl::sub(command), cl::cat(moegenCategory()));
cl::opt<unsigned long long, false, UnsignedParser> seedArg("seed",
                                                           cl::desc("the draws' seed (default 1)"),
                                                           cl::init(1), cl::sub(command),
                                                           cl::cat(moegenCategory()));
cl::opt<long long, false, PositiveParser>
    jobsArg("j", cl::desc("layers compiled at once (default: one per hardware thread)"),
            cl::sub(command), cl::cat(moegenCategory()));

int fail(const llvm::Twine &msg) {
  llvm::WithColor::error(llvm::errs(), "moegen draw") << msg << "\n";
  return 1;
}

struct Accepted {
  std::string file; // draw_NNNN.moe
  SampledLayer layer;
  MoeSpec spec;
};

int runDraw() {
  // The options' values, copied: compiling parses LLVM's own command line,
  // which resets every cl::opt.
  const std::string out = outArg;
  const uint64_t seed = seedArg;
  const long long count = countArg;
  const unsigned jobs = jobsArg.getNumOccurrences() ? unsigned(jobsArg) : 0;
  if (out.empty())
    return usageError("draw", "--out: the directory to write the layers to is required");
  if (count > kMaxDraws)
    return usageError("draw", "--count: " + llvm::Twine(count) + " is over the " +
                                  llvm::Twine(kMaxDraws) + " layers one call writes");
  auto chip = TargetInfo::get(targetArg);
  if (!chip)
    return usageError("draw", "--target: " + llvm::toString(chip.takeError()));
  const TargetInfo &target = *chip;

  // Draw until --count layers keep the rules; each accepted one is named by
  // its position so that the files sort in drawing order.
  LayerSampler sampler(seed, target.isNvptx());
  std::vector<Accepted> accepted;
  std::map<std::string, int64_t> rejectedBy; // "stage1.k_wave" -> broken rules
  long long drawn = 0;
  while (static_cast<long long>(accepted.size()) < count && drawn < count * kDrawsPerLayer) {
    SampledLayer d = sampler.next();
    ++drawn;
    char name[32];
    std::snprintf(name, sizeof(name), "draw_%04zu", accepted.size() + 1);
    d.text.replace(d.text.find("property"), 8, name);
    auto spec = parseMoeSpec(d.text, std::string(name) + ".moe");
    if (!spec) // the sampler writes only what the DSL reads
      return fail("draw " + llvm::Twine(drawn) +
                  " does not parse: " + llvm::toString(spec.takeError()));
    ScheduleIssues issues = checkLayer(*spec, target);
    for (const ScheduleIssue &i : issues)
      ++rejectedBy[(toString(i.family) + "." + i.parameter).str()];
    if (issues.empty())
      accepted.push_back({std::string(name) + ".moe", std::move(d), std::move(*spec)});
  }
  if (static_cast<long long>(accepted.size()) < count)
    return fail("only " + llvm::Twine(accepted.size()) + " of " + llvm::Twine(drawn) +
                " draws keep the rules of " + target.chip);

  if (std::error_code ec = llvm::sys::fs::create_directories(out))
    return fail("cannot create '" + out + "': " + ec.message());
  // A manifest of an earlier call would name specs this call replaces.
  llvm::SmallString<256> manifestPath(out);
  llvm::sys::path::append(manifestPath, "draws.txt");
  if (std::error_code ec = llvm::sys::fs::remove(manifestPath))
    return fail("cannot remove the earlier '" + manifestPath + "': " + ec.message());
  std::string manifest;
  for (const Accepted &a : accepted) {
    std::string text = "# moegen draw --target " + target.chip + " --seed " + std::to_string(seed) +
                       ": check at " + std::to_string(a.layer.tokens) + " tokens on " +
                       std::to_string(a.layer.cuNum) + " CUs\n" + a.layer.text;
    llvm::SmallString<256> path(out);
    llvm::sys::path::append(path, a.file);
    if (llvm::Error e = writeFileAtomically(path, text))
      return fail(llvm::toString(std::move(e)));
    manifest +=
        a.file + " " + std::to_string(a.layer.tokens) + " " + std::to_string(a.layer.cuNum) + "\n";
  }

  // The kernels of every layer (its own schedules: no tables) into DIR/cache.
  llvm::SmallString<256> cacheDir(out);
  llvm::sys::path::append(cacheDir, "cache");
  runtime::CompilerOptions co;
  co.cacheDir = std::string(cacheDir);
  runtime::Compiler jit(co);
  if (!jit.kernelCache().disk() ||
      jit.kernelCache().disk()->state() != cache::DiskCache::State::Writable)
    return fail("the cache directory '" + cacheDir + "' is not writable");
  runtime::Target kernelsFor;
  kernelsFor.chip = target.chip;
  std::vector<std::string> problems(accepted.size());
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency(jobs));
  for (size_t i = 0; i < accepted.size(); ++i)
    pool.async([&, i] {
      auto kernels = jit.getKernels(accepted[i].spec, kernelsFor);
      if (!kernels)
        problems[i] = llvm::toString(kernels.takeError());
    });
  pool.wait();
  int failures = 0;
  for (size_t i = 0; i < accepted.size(); ++i) {
    const Accepted &a = accepted[i];
    if (!problems[i].empty()) {
      // The rules accepted it: a compile failure is a bug of the templates.
      ++failures;
      fail(a.file + ": accepted by the rules, but does not compile: " + problems[i]);
      continue;
    }
    llvm::outs() << a.file << ": " << a.layer.tokens << " tokens, " << a.layer.cuNum << " CUs\n";
  }
  // The manifest last: it names only layers whose kernels are in the cache.
  if (failures == 0)
    if (llvm::Error e = writeFileAtomically(manifestPath, manifest))
      return fail(llvm::toString(std::move(e)));
  llvm::outs() << "draw: " << accepted.size() << " layer(s) for " << target.chip << " from "
               << drawn << " draws (seed " << seed << "), " << drawn - accepted.size()
               << " rejected; broken rules:";
  for (const auto &[rule, n] : rejectedBy)
    llvm::outs() << " " << rule << "=" << n;
  llvm::outs() << "\n";
  if (failures)
    return fail(llvm::Twine(failures) + " accepted layer(s) do not compile; no manifest written");
  llvm::outs() << "wrote " << manifestPath << " and the kernels to " << cacheDir << "\n";
  return 0;
}

} // namespace
} // namespace moegen::cli
