//===- TableSpills.cpp - Register spills over every aiter tuned row -------===//
//
// For every row of every tuned table in data/aiter-configs (or the tables
// given as arguments) whose layer moegen generates, compiles the schedule a
// MoeLayer runs at the row's token count (the row's own kernels, or where
// their names have no moegen schedule, aiter's heuristic or the spec's
// schedule, as MoeLayer falls back) and prints, per table, how many rows and
// kernels that is and every kernel that spills registers or uses scratch.
// Rows of layers moegen does not generate (weights that are not MXFP4,
// another gfx or CU count) are counted with the reason.
//
// A row's layer is the example of its activation dtype (a4w4, a8w4 or a16w4)
// with the row's problem: model_dim, inter_dim, experts, topk, activation and
// where the top-k weights apply; the schedule comes from the row's kernel
// names through the runtime's own LayerScheduler.
//
//===----------------------------------------------------------------------===//

#include "bench/common/CompiledLayers.h"
#include "compiler/Compiler.h"
#include "compiler/spec/DslParser.h"
#include "runtime/api/LayerSchedule.h"
#include "runtime/dispatch/Lookup.h"
#include "runtime/dispatch/TunedTable.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>

using namespace moegen;

namespace {

/// The example whose formats and activation parameters a row's layer takes,
/// by the row's q_dtype_a.
std::optional<std::string> exampleFor(const dispatch::TunedKey &k) {
  if (k.qDtypeA == dispatch::aiterDtypeName(DType::MXFP4))
    return "kimi_k3_tp8_a4w4.moe";
  if (k.qDtypeA == dispatch::aiterDtypeName(DType::MXFP8))
    return "kimi_k3_tp8_a8w4.moe";
  if (k.qDtypeA == dispatch::aiterDtypeName(DType::BF16))
    return "kimi_k3_tp8_a16w4.moe";
  return std::nullopt;
}

/// The spec of a row's layer, or why moegen does not generate it.
llvm::Expected<MoeSpec> specFor(const dispatch::TunedKey &k) {
  if (k.gfx != "gfx950" || k.cuNum != 256)
    return llvm::createStringError("gfx %s with %lld CUs (moegen targets gfx950, 256 CUs)",
                                   k.gfx.c_str(), static_cast<long long>(k.cuNum));
  if (k.qDtypeW != dispatch::aiterDtypeName(DType::MXFP4))
    return llvm::createStringError("weights %s (moegen generates MXFP4 weights)",
                                   k.qDtypeW.c_str());
  auto example = exampleFor(k);
  if (!example)
    return llvm::createStringError("activations %s", k.qDtypeA.c_str());
  if (!k.useG1U1)
    return llvm::createStringError("use_g1u1 = 0 (moegen layers have gate and up)");
  auto spec = parseMoeSpecFile(std::string(MOEGEN_EXAMPLES_DIR) + "/" + *example);
  if (!spec)
    return spec.takeError();
  std::vector<std::string> sets = {
      llvm::formatv("model_dim={0}", k.modelDim), llvm::formatv("inter_dim={0}", k.interDim),
      llvm::formatv("experts={0}", k.expert), llvm::formatv("topk={0}", k.topk),
      k.doweightStage1 ? "doweight=stage1" : "doweight=stage2"};
  // The example's activation keeps its parameters when the row names it.
  llvm::StringRef act = k.actType;
  act.consume_front("ActivationType.");
  if (dispatch::aiterActivationName(spec->activation.name) != k.actType)
    sets.push_back("activation=" + act.lower());
  for (const std::string &s : sets)
    if (llvm::Error e = applySpecOverride(*spec, s))
      return e;
  return spec;
}

struct TableReport {
  size_t rows = 0, ownSchedule = 0, fallback = 0;
  std::map<std::string, size_t> skipped; // reason -> rows
  std::set<std::string> kernels;
  std::map<std::string, std::string> spills; // symbol -> what spills
};

/// `layers` is shared by every table.
void runTable(const std::string &path, bench::CompiledLayers &layers, TableReport &rep) {
  auto table = dispatch::TunedTable::load(path);
  if (!table) {
    rep.skipped[llvm::toString(table.takeError())] += 1;
    return;
  }
  // One scheduler per layer (the key without its token).
  std::map<std::string, std::unique_ptr<runtime::LayerScheduler>> schedulers;
  for (const auto &row : table->rows()) {
    ++rep.rows;
    auto spec = specFor(row->key);
    if (!spec) {
      rep.skipped[llvm::toString(spec.takeError())] += 1;
      continue;
    }
    dispatch::TunedKey layerKey = row->key;
    layerKey.token = 0;
    std::unique_ptr<runtime::LayerScheduler> &scheduler = schedulers[layerKey.str()];
    if (!scheduler) {
      runtime::LayerOptions lo;
      lo.tunedTables = {path};
      auto created = runtime::LayerScheduler::create(*spec, lo);
      if (!created) {
        rep.skipped[llvm::toString(created.takeError())] += 1;
        continue;
      }
      scheduler = std::move(*created);
    }
    // The first candidate that compiles, as MoeLayer chooses.
    const CompiledLayer *layer = nullptr;
    runtime::ScheduleSource source{};
    std::string failures;
    for (const auto &cand : scheduler->candidates(row->key.token)) {
      auto compiled = layers.get(cand.spec);
      if (compiled) {
        layer = *compiled;
        source = cand.source;
        break;
      }
      failures += " " + llvm::toString(compiled.takeError());
    }
    if (!layer) {
      rep.skipped["nothing compiles:" + failures] += 1;
      continue;
    }
    bool own = source == runtime::ScheduleSource::Tuned ||
               source == runtime::ScheduleSource::TunedActAgnostic;
    ++(own ? rep.ownSchedule : rep.fallback);
    std::string where =
        llvm::sys::path::filename(row->file).str() + ":" + std::to_string(row->line);
    for (const CompiledKernel &k : layer->kernels) {
      rep.kernels.insert(k.signature.symbol);
      const KernelResources &r = k.resources;
      if (r.vgprSpills + r.sgprSpills > 0 || r.scratchBytes > 0)
        rep.spills[k.signature.symbol] =
            llvm::formatv("{0} VGPRs and {1} SGPRs spilled, {2} bytes of scratch (row {3})",
                          r.vgprSpills, r.sgprSpills, r.scratchBytes, where);
    }
  }
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> tables;
  for (int i = 1; i < argc; ++i)
    tables.push_back(argv[i]);
  if (tables.empty()) {
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(MOEGEN_AITER_CONFIGS_DIR, ec), end; it != end && !ec;
         it.increment(ec))
      if (llvm::StringRef(it->path()).ends_with("tuned_fmoe.csv") &&
          !llvm::StringRef(it->path()).ends_with("untuned_fmoe.csv"))
        tables.push_back(it->path());
    llvm::sort(tables);
  }
  bench::CompiledLayers layers;
  llvm::outs() << "rows: own = the row's kernels have a moegen schedule; fallback = MoeLayer runs "
                  "aiter's heuristic or the spec's schedule for the row\n";
  llvm::outs() << llvm::format("%-30s %6s %6s %9s %8s %8s\n", "table", "rows", "own", "fallback",
                               "kernels", "spilling");
  std::vector<std::pair<std::string, TableReport>> reports;
  for (const std::string &path : tables) {
    TableReport rep;
    runTable(path, layers, rep);
    llvm::outs() << llvm::format(
        "%-30s %6zu %6zu %9zu %8zu %8zu\n", llvm::sys::path::filename(path).str().c_str(), rep.rows,
        rep.ownSchedule, rep.fallback, rep.kernels.size(), rep.spills.size());
    llvm::outs().flush();
    reports.push_back({path, std::move(rep)});
  }
  std::set<std::string> allKernels, allSpills;
  for (const auto &[path, rep] : reports) {
    std::string name = llvm::sys::path::filename(path).str();
    for (const auto &[reason, n] : rep.skipped)
      llvm::outs() << "  " << name << ": " << n << " row(s) not generated: " << reason << "\n";
    for (const auto &[symbol, what] : rep.spills) {
      llvm::outs() << "  " << name << ": SPILLS " << symbol << ": " << what << "\n";
      allSpills.insert(symbol);
    }
    allKernels.insert(rep.kernels.begin(), rep.kernels.end());
  }
  llvm::outs() << llvm::formatv("\nspills: {0} of the {1} kernels that {2} layers compile to\n",
                                allSpills.size(), allKernels.size(), layers.size());
  return 0;
}
