//===- Measured.cpp - Tuning by measured device times ---------------------===//

#include "tune/Measured.h"

#include "compiler/spec/DslParser.h"
#include "runtime/dispatch/Lookup.h"
#include "runtime/dispatch/Tiers.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

#include <cmath>
#include <map>
#include <tuple>

namespace moegen::tune {

int measuredStage(KernelFamily family) {
  switch (family) {
  case KernelFamily::SortCount:
  case KernelFamily::SortScan:
  case KernelFamily::Sort:
  case KernelFamily::QuantInput:
  case KernelFamily::Stage1:
  case KernelFamily::Finish:
    return 1;
  case KernelFamily::QuantInter:
  case KernelFamily::Stage2:
  case KernelFamily::Reduce:
    return 2;
  }
  return 2;
}

StageTimes measuredStageTimes(const LayerTiming &timing) {
  StageTimes t;
  for (int stage : {1, 2}) {
    double us = 1000.0 * timing.medianMsOf([&](const runtime::RunStep &s) {
      return measuredStage(s.family) == stage;
    });
    (stage == 1 ? t.us1 : t.us2) = us;
  }
  return t;
}

std::string failingStages(const LayerCheckResult &r) {
  std::string out;
  for (const StageCheck &s : r.stages)
    if (!s.result.passed)
      out += (out.empty() ? "" : ", ") + s.stage +
             llvm::formatv(" ({0} of {1} out of tolerance, {2} non-finite, cosine-diff {3:e})",
                           s.result.mismatches, s.result.compared, s.result.nonFinite,
                           s.result.cosineDiff)
                 .str();
  return out;
}

double mismatchFraction(const LayerCheckResult &r, llvm::StringRef stage) {
  for (const StageCheck &s : r.stages)
    if (s.stage == stage && s.result.compared > 0)
      return double(s.result.mismatches) / double(s.result.compared);
  return 0;
}

namespace {

double bitsOf(DType t) {
  switch (t) {
  case DType::MXFP4:
    return 4.25; // e2m1 plus one e8m0 scale per 32
  case DType::MXFP8:
    return 8.25;
  default:
    return 16;
  }
}

/// The bytes a layer must move at least: the weights of the experts T
/// tokens are expected to route to (uniform routing), the input and the
/// output.
double layerBytes(const Problem &p, const Formats &f, int64_t T) {
  double E = double(p.experts);
  double routed = E * (1 - std::pow(1 - 1 / E, double(T * p.topk)));
  double perExpert = 3.0 * double(p.interDim) * double(p.modelDim) * bitsOf(f.weight) / 8;
  return routed * perExpert + double(T) * double(p.modelDim) * 4;
}

} // namespace

std::pair<double, double> tflopsAndBandwidth(const MoeSpec &layer, int64_t tokens, double us) {
  const Problem &p = layer.problem;
  double seconds = std::max(1e-9, us) * 1e-6;
  return {6.0 * double(tokens) * p.topk * p.interDim * p.modelDim / seconds / 1e12,
          layerBytes(p, layer.formats, tokens) / seconds / 1e9};
}

std::string joinTokenCounts(const std::vector<int64_t> &tokens, llvm::StringRef separator) {
  return llvm::join(llvm::map_range(tokens, [](int64_t v) { return std::to_string(v); }),
                    separator);
}

std::optional<std::string> tierPointsNote(int64_t tokens, size_t tierPoints) {
  if (tierPoints <= 1 || dispatch::tierTokens(tokens, tierPoints).size() > 1)
    return std::nullopt;
  return std::string(dispatch::tierFloor(tokens) ? "its tier has no other token count"
                                                 : "no token count pads to it (aiter's padded M)") +
         "; ranked at this count alone";
}

llvm::Expected<TunedResult> retimedRow(const dispatch::TunedRow &row, const MoeSpec &layer,
                                       const LayerCheckResult &check) {
  auto error = [&](const llvm::Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   row.location() + ": " + msg.str());
  };
  if (!check.passed())
    return error("its check failed (" + failingStages(check) + "); the row keeps its times");
  if (!check.timing || check.timing->steps.empty())
    return error("no step times to retime it with");
  std::optional<int64_t> blockM = row.getInt("block_m"), ksplit = row.getInt("ksplit");
  if (!blockM || !ksplit)
    return error("block_m '" + row.get("block_m") + "' or ksplit '" + row.get("ksplit") +
                 "' is not an integer");
  TunedResult res;
  res.key = row.key;
  res.blockM = *blockM;
  res.ksplit = *ksplit;
  res.kernelName1 = row.get("kernelName1");
  res.kernelName2 = row.get("kernelName2");
  res.tag = row.get("_tag");
  StageTimes times = measuredStageTimes(*check.timing);
  res.us1 = times.us1;
  res.us2 = times.us2;
  res.err1 = mismatchFraction(check, "stage1");
  res.err2 = mismatchFraction(check, "stage2");
  std::tie(res.tflops, res.bw) = tflopsAndBandwidth(layer, row.key.token, times.us());
  res.replacesRow = true;
  return res;
}

llvm::Expected<size_t> runMeasuredTune(const MeasuredTuneOptions &options,
                                       std::shared_ptr<runtime::KernelSource> kernels,
                                       runtime::Backend &backend, llvm::raw_ostream &out) {
  auto error = [](const llvm::Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
  };
  auto pathOf = [&](llvm::StringRef file) {
    llvm::SmallString<256> p(options.manifestDir);
    llvm::sys::path::append(p, file);
    return std::string(p);
  };
  auto manifest = Manifest::load(pathOf(kManifestName));
  if (!manifest)
    return manifest.takeError();
  const Manifest &m = *manifest;
  auto spec = parseMoeSpecFile(pathOf(m.specFile));
  if (!spec)
    return spec.takeError();
  auto key = dispatch::aiterKeyFor(*spec, m.gfx, m.cuNum);
  if (!key)
    return key.takeError();
  std::vector<int64_t> tokens = options.tokens.empty() ? m.tokens : options.tokens;
  for (int64_t t : tokens)
    if (!llvm::is_contained(m.tokens, t))
      return error("--tokens " + llvm::Twine(t) + ": the manifest in " + options.manifestDir +
                   " has no such token count (it has " + joinTokenCounts(m.tokens, ",") + ")");
  runtime::Target target;
  target.chip = m.chip;
  auto journal = Journal::open(
      options.journalPath.empty() ? options.outPath + ".measured.journal" : options.journalPath,
      llvm::formatv("{0:x-16}", llvm::xxh3_64bits(m.print() + "\n" + options.journalPrefix)).str());
  if (!journal)
    return journal.takeError();
  Journal &j = **journal;
  if (j.resumedRecords())
    out << "journal: resumed " << j.resumedRecords() << " records from " << j.path() << "\n";

  std::map<std::string, MoeSpec> layers;
  auto layerOf = [&](const ManifestLayer &l) -> llvm::Expected<const MoeSpec &> {
    auto it = layers.find(l.file);
    if (it != layers.end())
      return it->second;
    auto parsed = parseMoeSpecFile(pathOf(l.file));
    if (!parsed)
      return parsed.takeError();
    // A layer the manifest lists must be in the cache: a miss is named, not
    // skipped.
    if (auto set = kernels->getKernels(*parsed, target); !set)
      return error("'" + l.id + "' (" + l.file +
                   ") is not in the kernel cache: " + llvm::toString(set.takeError()));
    return layers.emplace(l.file, std::move(*parsed)).first->second;
  };
  // The candidates of a token count check on the same inputs.
  auto inputsCache = std::make_shared<GeneratedInputsCache>();
  // And their packed weights stay on the device (one checking thread here).
  auto weightsCache = std::make_shared<DeviceWeightsCache>();
  auto checkAndTime = [&](const MoeSpec &layer, int64_t T, bool graph,
                          Measurement &r) -> llvm::Error {
    LayerCheckOptions o;
    o.inputsCache = inputsCache;
    o.weightsCache = weightsCache;
    o.tokens = T;
    o.seed = options.seed;
    o.poison = true;
    o.checkTokens = options.checkTokens;
    o.kernels = kernels;
    o.target = target;
    o.cuNum = options.launchCuNum;
    o.timedRuns = options.timedRuns;
    o.warmupRuns = options.warmupRuns;
    o.rotateBytes = options.rotateBytes;
    o.timeSteps = true;
    o.timeOnlyIfPassed = true;
    o.graphReplays = graph ? options.graphReplays : 0;
    auto result = runLayerCheck(layer, backend, o);
    if (!result) {
      r.check.detail = "error: " + llvm::toString(result.takeError());
    } else {
      r.check.passed = result->passed();
      r.check.err1 = mismatchFraction(*result, "stage1");
      r.check.err2 = mismatchFraction(*result, "stage2");
      r.check.detail = r.check.passed ? "" : failingStages(*result);
      if (r.check.passed && result->timing) {
        r.times = measuredStageTimes(*result->timing);
        if (!result->timing->graphCallMs.empty())
          r.graphUs = 1000.0 * result->timing->medianGraphCallMs();
      }
    }
    return llvm::Error::success();
  };
  // A layer's check and step times; with `graph`, also its graph replays.
  auto measure = [&](const ManifestLayer &l, int64_t T,
                     bool graph = false) -> llvm::Expected<Measurement> {
    Measurement r;
    const CheckRecord *c = j.checked(T, l.id);
    const StageTimes *t = j.timed(T, l.id);
    const double *g = j.graphed(T, l.id);
    if (c && (!c->passed || (t && (!graph || g)))) {
      r.check = *c;
      if (t)
        r.times = *t;
      if (g)
        r.graphUs = *g;
      return r;
    }
    auto layer = layerOf(l);
    if (!layer)
      return layer.takeError();
    if (options.measurer) {
      auto got = options.measurer(*layer, T, graph);
      if (!got)
        return got.takeError();
      r = *got;
    } else if (llvm::Error e = checkAndTime(*layer, T, graph, r))
      return std::move(e);
    if (graph && r.check.passed && !r.graphUs)
      return error("'" + l.id + "' at " + llvm::Twine(T) +
                   " tokens: the measurer gave no time over graph replays");
    if (llvm::Error e = j.recordCheck(T, l.id, r.check))
      return std::move(e);
    if (r.check.passed) {
      if (llvm::Error e = j.recordTiming(T, l.id, r.times))
        return std::move(e);
      if (r.graphUs)
        if (llvm::Error e = j.recordGraph(T, l.id, *r.graphUs))
          return std::move(e);
    }
    return r;
  };

  const bool byGraph = options.graphRank > 0;
  // A layer over the token counts a row is ranked at: its check passes where
  // every count's does, its times are the counts' means.
  auto measureOver = [&](const ManifestLayer &l, const std::vector<int64_t> &points,
                         bool graph) -> llvm::Expected<Measurement> {
    if (points.size() == 1)
      return measure(l, points.front(), graph);
    Measurement mean;
    mean.check.passed = true;
    double graphUs = 0, n = double(points.size());
    for (int64_t p : points) {
      auto r = measure(l, p, graph);
      if (!r)
        return r.takeError();
      if (!r->check.passed) {
        r->check.detail = llvm::formatv("at {0} tokens: {1}", p, r->check.detail).str();
        return r;
      }
      mean.check.err1 = std::max(mean.check.err1, r->check.err1);
      mean.check.err2 = std::max(mean.check.err2, r->check.err2);
      mean.times.us1 += r->times.us1 / n;
      mean.times.us2 += r->times.us2 / n;
      mean.pointTimes.push_back(r->times);
      if (graph) {
        graphUs += *r->graphUs / n;
        mean.pointGraphUs.push_back(*r->graphUs);
      }
    }
    if (graph)
      mean.graphUs = graphUs;
    return mean;
  };
  // Over several token counts, the layers are measured count by count, so
  // that the checks of one count share their generated inputs (one set is
  // kept at a time); measureOver then finds them in the journal.
  auto measureByCount = [&](const std::vector<const ManifestLayer *> &ls,
                            const std::vector<int64_t> &points, bool graph) -> llvm::Error {
    if (points.size() == 1)
      return llvm::Error::success();
    for (int64_t p : points)
      for (const ManifestLayer *l : ls)
        if (auto r = measure(*l, p, graph); !r)
          return r.takeError();
    return llvm::Error::success();
  };

  struct Row {
    int64_t tokens;
    std::optional<TunedResult> tuned;
    std::optional<StageTimes> baseline;
    std::optional<double> tunedGraphUs, baselineGraphUs;
  };
  std::vector<Row> table;
  std::vector<TunedResult> results;
  size_t missing = 0, stayed = 0;
  const ManifestLayer specLayer{m.specFile, "spec"};
  for (int64_t T : tokens) {
    Row row{T, std::nullopt, std::nullopt, std::nullopt, std::nullopt};
    const std::vector<int64_t> points = dispatch::tierTokens(T, options.tierPoints);
    const bool overTier = points.size() > 1;
    // " (the mean over 9, 13, 16 tokens: 98.10, 110.20, 140.30)": each
    // count's time beside the mean it gives, so that a row's top can be
    // read as well as its tier. `stepUs` picks what a count's step times
    // give; a measurement over graph replays gives those instead.
    auto overOf = [&](const Measurement &r, llvm::function_ref<double(const StageTimes &)> stepUs) {
      if (!overTier)
        return std::string();
      std::string text = " (the mean over " + joinTokenCounts(points) + " tokens";
      for (size_t i = 0; i < r.pointTimes.size(); ++i) {
        double us = r.pointGraphUs.empty() ? stepUs(r.pointTimes[i]) : r.pointGraphUs[i];
        text += llvm::formatv("{0}{1:f2}", i ? ", " : ": ", us).str();
      }
      return text + ")";
    };
    if (auto note = tierPointsNote(T, options.tierPoints))
      out << "tokens " << T << ": " << *note << "\n";

    // Per block_m, each stage's candidates in the manifest's order.
    std::map<int64_t, std::array<std::vector<size_t>, 2>> lists;
    auto order = m.order.find(T);
    if (order != m.order.end())
      for (size_t n : order->second) {
        const ManifestCandidate &c = m.candidates[n];
        lists[c.blockM][c.stage == StageId::Stage1 ? 0 : 1].push_back(n);
      }
    auto measuredOf = [&](const std::vector<size_t> &ids) {
      std::vector<size_t> kept;
      for (size_t i = 0; i < ids.size() && i < options.top; ++i)
        if (!m.failed.count(m.candidates[ids[i]].id))
          kept.push_back(ids[i]);
      return kept;
    };
    {
      std::vector<const ManifestLayer *> first{&specLayer};
      for (auto &[bm, stages] : lists)
        for (int s = 0; s < 2; ++s)
          for (size_t n : measuredOf(stages[s]))
            first.push_back(&m.candidates[n]);
      if (llvm::Error e = measureByCount(first, points, false))
        return std::move(e);
      if (byGraph)
        if (llvm::Error e = measureByCount({&specLayer}, points, true))
          return std::move(e);
    }
    auto base = measureOver(specLayer, points, byGraph);
    if (!base)
      return base.takeError();
    if (base->check.passed) {
      // The table below gives the row's own token count.
      auto atRow = measure(specLayer, T, byGraph);
      if (!atRow)
        return atRow.takeError();
      row.baseline = atRow->times;
      row.baselineGraphUs = atRow->graphUs;
    } else
      out << "tokens " << T << ": FAIL the spec's own schedules: " << base->check.detail << "\n";

    struct Choice {
      int64_t blockM;
      const ManifestPair *pair;
      Measurement measured;
    };
    std::vector<std::pair<int64_t, const ManifestPair *>> pairs; // (block_m, pair) to measure
    size_t checked = 0, failed = 0;
    for (auto &[bm, stages] : lists) {
      std::vector<std::pair<double, size_t>> passed1; // stage 1: (us1, candidate)
      std::optional<size_t> best2;
      double best2Us = 0;
      for (int s = 0; s < 2; ++s) {
        for (size_t n : measuredOf(stages[s])) {
          const ManifestCandidate &c = m.candidates[n];
          auto r = measureOver(c, points, false);
          if (!r)
            return r.takeError();
          ++checked;
          if (!r->check.passed) {
            ++failed;
            out << "tokens " << T << ": FAIL " << c.id << ": " << r->check.detail << "\n";
            continue;
          }
          double us = s == 0 ? r->times.us1 : r->times.us2;
          out << llvm::formatv(
              "tokens {0}: {1}: {2:f2} us measured{3}\n", T, c.id, us,
              overOf(*r, [&](const StageTimes &t) { return s == 0 ? t.us1 : t.us2; }));
          if (s == 0)
            passed1.push_back({us, n});
          else if (!best2 || us < best2Us) {
            best2 = n;
            best2Us = us;
          }
        }
      }
      if (passed1.empty() || !best2)
        continue;
      // The fastest stage 1 by its steps; by graph, the graphRank fastest.
      std::stable_sort(passed1.begin(), passed1.end(),
                       [](const auto &a, const auto &b) { return a.first < b.first; });
      passed1.resize(std::min(passed1.size(), byGraph ? options.graphRank : size_t(1)));
      for (const auto &[us1, s1] : passed1) {
        const ManifestPair *pair = m.pairOf(s1, *best2);
        if (!pair) {
          out << "tokens " << T << ": block_m " << bm << ": the pair of " << m.candidates[s1].id
              << " and " << m.candidates[*best2].id << " was not compiled; "
              << (byGraph ? "not ranked\n" : "no choice at this block_m\n");
          continue;
        }
        if (m.failed.count(pair->id)) {
          out << "tokens " << T << ": FAIL " << pair->id << ": " << m.failed.at(pair->id) << "\n";
          continue;
        }
        pairs.push_back({bm, pair});
      }
    }
    // The output table's row at T is measured the same way: it stays (with
    // its columns measured again) unless a candidate is faster in this run.
    auto inc = m.incumbents.find(T);
    const ManifestIncumbent *incumbentLayer = nullptr;
    std::string incumbentName;
    if (inc != m.incumbents.end()) {
      incumbentName =
          "the table's row " + inc->second.kernelName1 + " + " + inc->second.kernelName2;
      if (m.failed.count(inc->second.id))
        out << "tokens " << T << ": " << incumbentName
            << " is not measured: " << m.failed.at(inc->second.id) << "\n";
      else
        incumbentLayer = &inc->second;
    }
    {
      std::vector<const ManifestLayer *> second;
      for (const auto &[bm, pair] : pairs)
        second.push_back(pair);
      if (incumbentLayer)
        second.push_back(incumbentLayer);
      if (llvm::Error e = measureByCount(second, points, byGraph))
        return std::move(e);
    }
    auto usOf = [&](const Measurement &r) { return byGraph ? *r.graphUs : r.times.us(); };
    auto overOfLayer = [&](const Measurement &r) {
      return overOf(r, [](const StageTimes &t) { return t.us(); });
    };
    std::vector<Choice> choices;
    for (const auto &[bm, pair] : pairs) {
      auto r = measureOver(*pair, points, byGraph);
      if (!r)
        return r.takeError();
      if (!r->check.passed) {
        out << "tokens " << T << ": FAIL " << pair->id << ": " << r->check.detail << "\n";
        continue;
      }
      if (byGraph || overTier)
        out << llvm::formatv("tokens {0}: {1}: {2:f2} us {3}{4}\n", T, pair->id, usOf(*r),
                             byGraph ? "a call over graph replays" : "measured", overOfLayer(*r));
      choices.push_back({bm, pair, *r});
    }
    out << "tokens " << T << ": checked " << checked << " candidates, " << failed << " failed\n";
    std::stable_sort(choices.begin(), choices.end(), [&](const Choice &a, const Choice &b) {
      double ua = usOf(a.measured), ub = usOf(b.measured);
      return ua != ub ? ua < ub : a.blockM < b.blockM;
    });
    std::optional<Measurement> incumbent;
    if (incumbentLayer) {
      auto got = measureOver(*incumbentLayer, points, byGraph);
      if (!got)
        return got.takeError();
      if (got->check.passed) {
        incumbent = *got;
        out << llvm::formatv("tokens {0}: {1}: {2:f2} us {3}{4}\n", T, incumbentName, usOf(*got),
                             byGraph ? "a call over graph replays" : "measured", overOfLayer(*got));
      } else {
        out << "tokens " << T << ": FAIL " << incumbentName << ": " << got->check.detail << "\n";
      }
    }
    const bool rowStays =
        incumbent && (choices.empty() || usOf(*incumbent) <= usOf(choices.front().measured));
    if (choices.empty() && !rowStays) {
      out << "tokens " << T << ": no candidate pair passed its checks; no row\n";
      ++missing;
      table.push_back(std::move(row));
      continue;
    }
    // The row that is written: the table's own, or the fastest candidate.
    TunedResult res;
    const ManifestLayer *chosen = nullptr;
    const Measurement *picked = nullptr;
    if (rowStays) {
      chosen = incumbentLayer;
      picked = &*incumbent;
      res.kernelName1 = inc->second.kernelName1;
      res.kernelName2 = inc->second.kernelName2;
    } else {
      const Choice &best = choices.front();
      chosen = best.pair;
      picked = &best.measured;
      res.blockM = best.blockM;
      res.kernelName1 = m.candidates[best.pair->s1].kernelName;
      res.kernelName2 = m.candidates[best.pair->s2].kernelName;
    }
    // The row's columns are its own token count's (aiter's), whatever it
    // was ranked by.
    auto atRow = measure(*chosen, T, byGraph);
    if (!atRow)
      return atRow.takeError();
    const Measurement &measured = *atRow;
    auto layer = layerOf(*chosen);
    if (!layer)
      return layer.takeError();
    res.key = *key;
    res.key.token = T;
    if (rowStays)
      res.blockM = layer->stage1.tileM;
    res.ksplit = layer->stage1.kBatch > 1 ? layer->stage1.kBatch : 0;
    res.us1 = measured.times.us1;
    res.us2 = measured.times.us2;
    res.err1 = measured.check.err1;
    res.err2 = measured.check.err2;
    double us = measured.times.us();
    std::tie(res.tflops, res.bw) = tflopsAndBandwidth(*layer, T, us);
    res.tag = options.tag;
    // Ranked by graph replays or over the tier, or measured against the row
    // in this run (or the row failed its check): the row's own us column
    // (perhaps another machine's, or another token count's) does not decide.
    res.replacesRow = byGraph || overTier || incumbentLayer;
    stayed += rowStays;
    if (rowStays)
      out << llvm::formatv(
          "tokens {0}: the table's row stays ({1:f2} us against {2}{3}), its "
          "columns measured again\n",
          T, usOf(*picked),
          choices.empty()
              ? std::string("no candidate")
              : llvm::formatv("the best candidate's {0:f2}", usOf(choices.front().measured)).str(),
          overOfLayer(*picked));
    if (overTier)
      out << llvm::formatv("tokens {0}: ranked by {1:f2} us{2}; the spec's: {3}\n", T,
                           usOf(*picked), overOfLayer(*picked),
                           base->check.passed ? llvm::formatv("{0:f2}", usOf(*base)).str()
                                              : std::string("-"));
    out << llvm::formatv("tokens {0}: block_m {1}: {2} (us1 {3:f2}) + {4} (us2 {5:f2}) = {6:f2} "
                         "us measured, err1 {7} err2 {8}\n",
                         T, res.blockM, res.kernelName1, res.us1, res.kernelName2, res.us2, us,
                         formatErr(res.err1), formatErr(res.err2));
    if (byGraph)
      out << llvm::formatv("tokens {0}: {1:f2} us a call over graph replays (the spec's: {2})\n", T,
                           *measured.graphUs,
                           row.baselineGraphUs ? llvm::formatv("{0:f2}", *row.baselineGraphUs).str()
                                               : std::string("-"));
    row.tunedGraphUs = measured.graphUs;
    row.tuned = res;
    results.push_back(res);
    table.push_back(std::move(row));
  }

  // Merge into the output (written whole, then renamed over it).
  std::optional<dispatch::TunedTable> existing;
  if (llvm::sys::fs::exists(options.outPath)) {
    auto t = dispatch::TunedTable::load(options.outPath);
    if (!t)
      return t.takeError();
    existing = std::move(*t);
  }
  MergeReport merge;
  std::string csv = mergeTunedRows(existing ? &*existing : nullptr, results, merge);
  if (llvm::Error e = writeTunedCsv(options.outPath, csv))
    return std::move(e);
  out << "wrote " << options.outPath << ": " << merge.added << " added, " << merge.replaced
      << " replaced" << (byGraph ? " (ranked by graph replays)" : "") << ", " << merge.keptFaster
      << " kept (the existing row is faster)";
  if (stayed)
    out << "; " << stayed << " row(s) stayed, faster than every candidate in this run, with "
        << "their columns measured again";
  out << "\n";

  // The rows against the spec's own schedules, measured the same way.
  auto num = [](std::optional<double> v) {
    return v ? llvm::formatv("{0:f1}", *v).str() : std::string("-");
  };
  out << "\n| tokens | tuned block_m | tuned us1 | tuned us2 | tuned us | spec us1 | spec us2 | "
         "spec us | speedup |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const Row &r : table) {
    std::optional<double> t1, t2, tt, b1, b2, bt, speedup;
    if (r.tuned) {
      t1 = r.tuned->us1, t2 = r.tuned->us2, tt = *t1 + *t2;
    }
    if (r.baseline) {
      b1 = r.baseline->us1, b2 = r.baseline->us2, bt = r.baseline->us();
    }
    if (tt && bt && *tt > 0)
      speedup = *bt / *tt;
    out << "| " << r.tokens << " | " << (r.tuned ? std::to_string(r.tuned->blockM) : "-") << " | "
        << num(t1) << " | " << num(t2) << " | " << num(tt) << " | " << num(b1) << " | " << num(b2)
        << " | " << num(bt) << " | " << (speedup ? llvm::formatv("{0:f2}x", *speedup).str() : "-")
        << " |\n";
  }
  if (byGraph) {
    out << "\n| tokens | tuned us a call (graph) | spec us a call (graph) | speedup |\n"
           "|---:|---:|---:|---:|\n";
    for (const Row &r : table) {
      std::optional<double> speedup;
      if (r.tunedGraphUs && r.baselineGraphUs && *r.tunedGraphUs > 0)
        speedup = *r.baselineGraphUs / *r.tunedGraphUs;
      out << "| " << r.tokens << " | " << num(r.tunedGraphUs) << " | " << num(r.baselineGraphUs)
          << " | " << (speedup ? llvm::formatv("{0:f2}x", *speedup).str() : "-") << " |\n";
    }
  }
  return missing;
}

} // namespace moegen::tune
