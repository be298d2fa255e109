//===- LayerSchedule.cpp - Which schedules a layer runs per tier ----------===//

#include "runtime/api/LayerSchedule.h"

#include "compiler/spec/DslParser.h"
#include "runtime/dispatch/Lookup.h"
#include "runtime/dispatch/Tiers.h"

#include <mutex>
#include <set>

namespace moegen::runtime {
namespace {

/// Applies a tuned kernel name's schedule to `spec`, or says why it cannot.
bool applyKernelName(MoeSpec &spec, StageId stage, llvm::StringRef name, std::string &why) {
  auto mapped = dispatch::kernelNameToSchedule(name);
  if (!mapped) {
    why = name.str() + ": " + llvm::toString(mapped.takeError());
    return false;
  }
  if (mapped->stage != stage) {
    why = name.str() + " is a stage " + std::to_string(int(mapped->stage)) + " kernel";
    return false;
  }
  if (mapped->activation && *mapped->activation != spec.formats.activation) {
    why = name.str() + " reads " + toString(*mapped->activation).str() +
          " activations, the layer has " + toString(spec.formats.activation).str();
    return false;
  }
  if (mapped->weight && *mapped->weight != spec.formats.weight) {
    why = name.str() + " reads " + toString(*mapped->weight).str() + " weights, the layer has " +
          toString(spec.formats.weight).str();
    return false;
  }
  if (mapped->gateUp && *mapped->gateUp != spec.problem.gateUp) {
    why = name.str() + " expects " + toString(*mapped->gateUp).str() +
          " gate/up weights, the layer has " + toString(spec.problem.gateUp).str();
    return false;
  }
  // Stage 1 is applied first: its tile_m is the sorting block.
  if (mapped->sortBlockM && *mapped->sortBlockM != spec.stage1.tileM) {
    why = name.str() + " expects sorting blocks of " + std::to_string(*mapped->sortBlockM) +
          " rows, stage 1's tile_m is " + std::to_string(spec.stage1.tileM);
    return false;
  }
  spec.stage(stage) = mapped->schedule;
  return true;
}

} // namespace

bool applyKernelNames(MoeSpec &spec, llvm::StringRef name1, llvm::StringRef name2,
                      std::string &why) {
  if (!applyKernelName(spec, StageId::Stage1, name1, why))
    return false;
  if (!name2.empty() && name2 != "Null" && !applyKernelName(spec, StageId::Stage2, name2, why))
    return false;
  return true;
}

llvm::Expected<std::unique_ptr<LayerScheduler>>
LayerScheduler::create(const MoeSpec &spec, const LayerOptions &options) {
  auto s = std::make_unique<LayerScheduler>();
  s->spec = spec;
  s->options = options;
  if (!options.tunedTables.empty()) {
    auto t = dispatch::TunedTable::loadAll(options.tunedTables);
    if (!t)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "MoeLayer::create: argument 'options.tunedTables': %s",
                                     llvm::toString(t.takeError()).c_str());
    s->table = std::move(*t);
  }
  auto k = dispatch::aiterKeyFor(spec, options.target.chip, options.cuNum);
  if (k)
    s->key = std::move(*k);
  else
    s->keyError = llvm::toString(k.takeError());
  // Several tables with rows of the same key keep the first table's: say so,
  // as a later table's row is otherwise silently never run (nor prefilled).
  if (s->table && s->key)
    for (const std::string &line : s->table->duplicatesOf(*s->key))
      logMessage(nullptr, LogLevel::Warning, spec.name + ": " + line + "; that row is never used");
  return s;
}

void LayerScheduler::logOnce(int64_t tokens, const llvm::Twine &message) {
  static std::mutex m;
  static std::set<std::string> seen;
  std::string shape = (key ? dispatch::describeKey(*key) : printMoeSpec(spec)) + " tier " +
                      std::to_string(dispatch::paddedM(tokens)) + ": " + message.str();
  {
    std::lock_guard<std::mutex> lock(m);
    if (!seen.insert(shape).second)
      return;
  }
  logMessage(nullptr, LogLevel::Note, spec.name + ": " + shape);
}

std::optional<LayerScheduler::Candidate> LayerScheduler::fromTable(int64_t tokens,
                                                                   std::string &why) {
  if (!table) {
    why = "no tuned table";
    return std::nullopt;
  }
  if (!key) {
    why = keyError;
    return std::nullopt;
  }
  dispatch::LookupResult r = table->lookup(*key, tokens);
  if (!r.row) {
    why = "no tuned row";
    return std::nullopt;
  }
  Candidate c;
  c.source = r.viaActAgnostic() ? ScheduleSource::TunedActAgnostic : ScheduleSource::Tuned;
  c.origin = r.row->location();
  if (r.tokenKeyUsed() != r.paddedM)
    c.origin +=
        " (tier " + std::to_string(r.paddedM) + " -> " + std::to_string(r.tokenKeyUsed()) + ")";
  if (r.viaActAgnostic())
    c.origin += " (act_type-agnostic: the row is " + r.row->key.actType + ")";
  c.spec = spec;
  if (!applyKernelNames(c.spec, r.row->get("kernelName1"), r.row->get("kernelName2"), why)) {
    why = "tuned row " + r.row->location() + " not usable: " + why;
    return std::nullopt;
  }
  return c;
}

std::optional<LayerScheduler::Candidate> LayerScheduler::fromHeuristic(int64_t tokens,
                                                                       std::string &why) {
  if (!key) {
    why = keyError;
    return std::nullopt;
  }
  auto h = dispatch::aiterHeuristic(*key, tokens);
  if (!h) {
    why = "aiter's heuristic for this problem is not a FlyDSL kernel pair";
    return std::nullopt;
  }
  Candidate c;
  c.source = ScheduleSource::Heuristic;
  c.origin = "heuristic block_m=" + std::to_string(h->blockM) + ": " + h->kernelName1 + " + " +
             h->kernelName2;
  c.spec = spec;
  if (!applyKernelNames(c.spec, h->kernelName1, h->kernelName2, why)) {
    why = "heuristic not usable: " + why;
    return std::nullopt;
  }
  return c;
}

std::vector<LayerScheduler::Candidate> LayerScheduler::candidates(int64_t tokens) {
  std::vector<Candidate> candidates;
  // Without tuned tables the spec's schedules are the configuration, not a
  // fallback.
  if (!table) {
    candidates.push_back(
        {ScheduleSource::SpecDefault, toString(ScheduleSource::SpecDefault).str(), spec});
    return candidates;
  }
  std::string whyNotTable, whyNotHeuristic;
  if (auto c = fromTable(tokens, whyNotTable))
    candidates.push_back(std::move(*c));
  if (candidates.empty()) {
    if (auto c = fromHeuristic(tokens, whyNotHeuristic)) {
      logOnce(tokens, whyNotTable + "; using the fallback " + c->origin);
      candidates.push_back(std::move(*c));
    } else {
      logOnce(tokens, whyNotTable + "; " + whyNotHeuristic + "; using the spec's schedules");
    }
  }
  candidates.push_back(
      {ScheduleSource::SpecDefault, toString(ScheduleSource::SpecDefault).str(), spec});
  return candidates;
}

llvm::Expected<TierDispatch> LayerScheduler::choose(int64_t tokens, KernelSource &kernels) {
  std::string failures;
  for (Candidate &c : candidates(tokens)) {
    auto set = kernels.getKernels(c.spec, options.target, options.families);
    if (set) {
      if (!failures.empty())
        logOnce(tokens, failures + "; using " + c.origin);
      TierDispatch d;
      d.source = c.source;
      d.origin = std::move(c.origin);
      d.spec = std::move(c.spec);
      d.kernels = std::move(*set);
      return d;
    }
    std::string err = llvm::toString(set.takeError());
    // The spec's schedules are the last candidate: the error names what was
    // tried before them (the tuned row, the fallback), the usual cause.
    if (c.source == ScheduleSource::SpecDefault) {
      std::string at = std::to_string(tokens) + " tokens: ";
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          failures.empty() ? "MoeLayer: no kernels for the layer's own schedules at " + at + err
                           : "MoeLayer: no kernels at " + at + failures +
                                 "; nor for the layer's own schedules: " + err);
    }
    failures += (failures.empty() ? "" : "; ") + c.origin + " has no kernels: " + err;
  }
  llvm_unreachable("the spec's schedules are always a candidate");
}

} // namespace moegen::runtime
