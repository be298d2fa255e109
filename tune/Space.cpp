//===- Space.cpp - The schedules a tuner tries ----------------------------===//

#include "tune/Space.h"

#include "runtime/dispatch/KernelName.h"
#include "templates/LayerRules.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

namespace moegen::tune {
namespace {

llvm::Error axisError(llvm::StringRef assignment, const llvm::Twine &why) {
  return llvm::createStringError("--axis '%s': %s", assignment.str().c_str(), why.str().c_str());
}

template <typename T, typename Parse>
llvm::Error parseList(llvm::StringRef assignment, llvm::StringRef values, std::vector<T> &out,
                      Parse parse) {
  llvm::SmallVector<llvm::StringRef> parts;
  values.split(parts, ',');
  std::vector<T> list;
  for (llvm::StringRef p : parts) {
    p = p.trim();
    std::optional<T> v = parse(p);
    if (!v)
      return axisError(assignment, "'" + p + "' is not a value of this axis");
    if (!llvm::is_contained(list, *v))
      list.push_back(*v);
  }
  if (list.empty())
    return axisError(assignment, "no values");
  out = std::move(list);
  return llvm::Error::success();
}

std::optional<int64_t> parseCount(llvm::StringRef s, int64_t min) {
  int64_t v;
  if (s.getAsInteger(10, v) || v < min || v > 1 << 20)
    return std::nullopt;
  return v;
}

/// The partner of a candidate: the spec's own schedule of the other stage on
/// the candidate's sorting block, nameable (stage 2 without splits).
StageSchedule partnerSchedule(const MoeSpec &spec, StageId stage, int64_t blockM) {
  StageSchedule s = spec.stage(stage);
  s.tileM = blockM;
  s.kBatchMode = KBatchMode::Atomic;
  if (stage == StageId::Stage2) {
    s.kBatch = 1;
    s.kWave = 1;
  } else if (s.wavesPerEU < 1) {
    s.wavesPerEU = 1;
  }
  return s;
}

/// The first issue of `layer` on the kernels of `stage`, if any.
std::optional<ScheduleIssue> firstIssueOf(const MoeSpec &layer, const TargetInfo &target,
                                          StageId stage) {
  for (const ScheduleIssue &i : checkLayer(layer, target))
    if (servedStage(i.family) == stage)
      return i;
  return std::nullopt;
}

/// Calls `fn` with `base` whose schedule of `stage` takes each combination of
/// that stage's axis values, in declaration order (stage 1: each of `fused`;
/// stage 2: each reduction of the space).
template <typename Fn>
void forEachStageSchedule(const MoeSpec &base, StageId stage, const SearchSpace &space,
                          llvm::ArrayRef<FusedQuant> fused, Fn fn) {
  if (stage == StageId::Stage1) {
    for (int64_t n : space.tileN1)
      for (int64_t k : space.tileK1)
        for (int64_t kb : space.kBatch1)
          for (int64_t kw : space.kWave1)
            for (int64_t w : space.wavesPerEU1)
              for (FusedQuant q : fused)
                for (WeightDecode d : space.weightDecode1)
                  for (int64_t pf : space.prefetch1)
                    for (int64_t x : space.xcdSwizzle1) {
                      MoeSpec layer = base;
                      StageSchedule &s = layer.stage1;
                      s.tileN = n;
                      s.tileK = k;
                      s.kBatch = kb;
                      s.kWave = kw;
                      s.wavesPerEU = w;
                      s.fusedQuant = q;
                      s.weightDecode = d;
                      s.prefetch = pf;
                      s.xcdSwizzle = x;
                      fn(std::move(layer));
                    }
    return;
  }
  std::vector<int64_t> tileM2 = space.tileM2;
  if (tileM2.empty())
    tileM2.push_back(base.stage2.tileM);
  for (int64_t m : tileM2)
    for (int64_t n : space.tileN2)
      for (int64_t k : space.tileK2)
        for (int64_t w : space.wavesPerEU2)
          for (ReduceMode r : space.reduce2)
            for (WeightDecode d : space.weightDecode2)
              for (int64_t pf : space.prefetch2)
                for (int64_t x : space.xcdSwizzle2)
                  for (Stage2Wait wait : space.wait2) {
                    MoeSpec layer = base;
                    StageSchedule &s = layer.stage2;
                    s.tileM = m;
                    s.tileN = n;
                    s.tileK = k;
                    s.wavesPerEU = w;
                    s.reduce = r;
                    s.weightDecode = d;
                    s.prefetch = pf;
                    s.xcdSwizzle = x;
                    s.wait = wait;
                    fn(std::move(layer));
                  }
}

/// `base` (the spec's partner schedules), then `base` with the partner
/// stage's schedule from each combination of its axis values (the spec's
/// fused quantization, reduction and workgroup regrouping, the mixed weight
/// decoding, which every tile takes; stage 1 nameable, as partnerSchedule).
std::vector<MoeSpec> partnerOptions(const MoeSpec &base, const SearchSpace &space,
                                    StageId partner) {
  std::vector<MoeSpec> options = {base};
  SearchSpace own = space;
  own.reduce2 = {base.stage2.reduce};
  own.weightDecode1 = own.weightDecode2 = {WeightDecode::Mixed};
  own.prefetch1 = own.prefetch2 = {0};
  own.xcdSwizzle1 = {base.stage1.xcdSwizzle};
  own.xcdSwizzle2 = {base.stage2.xcdSwizzle};
  own.wait2 = {base.stage2.wait};
  forEachStageSchedule(base, partner, own, {base.stage1.fusedQuant}, [&](MoeSpec layer) {
    layer.stage1.wavesPerEU = std::max<int64_t>(layer.stage1.wavesPerEU, 1);
    options.push_back(std::move(layer));
  });
  return options;
}

} // namespace

SearchSpace SearchSpace::defaultsFor(const TargetInfo &target) {
  SearchSpace space;
  if (target.isNvptx()) {
    space.blockM = {32, 48, 64, 80, 128};
    space.weightDecode1 = space.weightDecode2 = {WeightDecode::Mixed, WeightDecode::Arithmetic};
    // Two steps of weights ahead beat the plan's one on half the stage-1 rows of the
    // H100/H200 tables (1-4, 8-256 and 2048-16384 tokens) and lose on the others.
    space.prefetch1 = {0, 2};
  }
  return space;
}

std::vector<std::string> SearchSpace::axisKeys() {
  return {"block_m",         "stage1.tile_n",       "stage1.tile_k",      "stage1.k_batch",
          "stage1.k_wave",   "stage1.waves_per_eu", "stage1.fused_quant", "stage1.weight_decode",
          "stage1.prefetch", "stage1.xcd_swizzle",  "stage2.tile_m",      "stage2.tile_n",
          "stage2.tile_k",   "stage2.waves_per_eu", "stage2.reduce",      "stage2.weight_decode",
          "stage2.prefetch", "stage2.xcd_swizzle",  "stage2.wait"};
}

llvm::Error SearchSpace::setAxis(llvm::StringRef assignment) {
  auto [key, values] = assignment.split('=');
  key = key.trim();
  if (values.trim().empty())
    return axisError(assignment, "expected key=v1,v2,...");
  auto positive = [](llvm::StringRef s) { return parseCount(s, 1); };
  auto unsignedCount = [](llvm::StringRef s) { return parseCount(s, 0); };
  if (key == "block_m")
    return parseList(assignment, values, blockM, positive);
  if (key == "stage1.tile_n")
    return parseList(assignment, values, tileN1, positive);
  if (key == "stage1.tile_k")
    return parseList(assignment, values, tileK1, positive);
  if (key == "stage1.k_batch")
    return parseList(assignment, values, kBatch1, positive);
  if (key == "stage1.k_wave")
    return parseList(assignment, values, kWave1, positive);
  if (key == "stage1.waves_per_eu")
    return parseList(assignment, values, wavesPerEU1, positive);
  if (key == "stage1.fused_quant")
    return parseList(assignment, values, fusedQuant1, parseFusedQuant);
  if (key == "stage1.weight_decode")
    return parseList(assignment, values, weightDecode1, parseWeightDecode);
  if (key == "stage2.weight_decode")
    return parseList(assignment, values, weightDecode2, parseWeightDecode);
  if (key == "stage1.prefetch")
    return parseList(assignment, values, prefetch1, unsignedCount);
  if (key == "stage2.prefetch")
    return parseList(assignment, values, prefetch2, unsignedCount);
  if (key == "stage1.xcd_swizzle")
    return parseList(assignment, values, xcdSwizzle1, positive);
  if (key == "stage2.xcd_swizzle")
    return parseList(assignment, values, xcdSwizzle2, positive);
  if (key == "stage2.tile_m")
    return parseList(assignment, values, tileM2, positive);
  if (key == "stage2.tile_n")
    return parseList(assignment, values, tileN2, positive);
  if (key == "stage2.tile_k")
    return parseList(assignment, values, tileK2, positive);
  if (key == "stage2.waves_per_eu")
    return parseList(assignment, values, wavesPerEU2, unsignedCount);
  if (key == "stage2.reduce")
    return parseList(assignment, values, reduce2, parseReduceMode);
  if (key == "stage2.wait")
    return parseList(assignment, values, wait2, parseStage2Wait);
  return axisError(assignment,
                   "unknown axis '" + key + "' (axes: " + llvm::join(axisKeys(), ", ") + ")");
}

int64_t SpaceReport::rejectedTotal() const {
  int64_t n = 0;
  for (const auto &[reason, count] : rejected)
    n += count;
  return n;
}

std::string SpaceReport::summary(size_t topReasons) const {
  std::vector<std::pair<std::string, int64_t>> reasons(rejected.begin(), rejected.end());
  llvm::stable_sort(reasons, [](const auto &a, const auto &b) { return a.second > b.second; });
  std::string top;
  for (size_t i = 0; i < reasons.size() && i < topReasons; ++i)
    top += (i ? ", " : "") + reasons[i].first + " " + std::to_string(reasons[i].second);
  if (reasons.size() > topReasons)
    top += ", ...";
  return llvm::formatv("generated {0}, rejected by rule {1}{2}, kept {3}", generated,
                       rejectedTotal(), top.empty() ? "" : " (" + top + ")", kept)
      .str();
}

std::string candidateId(const MoeSpec &layer, StageId stage) {
  const StageSchedule &s = layer.stage(stage);
  std::string id = llvm::formatv("{0} bm{1} t{2}x{3}x{4}", stage == StageId::Stage1 ? "s1" : "s2",
                                 layer.stage1.tileM, s.tileM, s.tileN, s.tileK)
                       .str();
  if (stage == StageId::Stage1)
    id += llvm::formatv(" kb{0} kw{1} w{2} {3}", s.kBatch, s.kWave, s.wavesPerEU,
                        toString(s.fusedQuant))
              .str();
  else
    id += llvm::formatv(" w{0} {1}", s.wavesPerEU, toString(s.reduce)).str();
  // Only where chosen, so that the ids of mixed-decoding candidates stay
  // those the journals already hold.
  if (s.weightDecode != WeightDecode::Mixed)
    id += " " + toString(s.weightDecode).str();
  if (s.prefetch != 0)
    id += " pf" + std::to_string(s.prefetch);
  if (s.xcdSwizzle != 1)
    id += " xcd" + std::to_string(s.xcdSwizzle);
  if (s.wait != Stage2Wait::Rows)
    id += " gridwait";
  return id;
}

std::vector<Candidate> enumerateCandidates(const MoeSpec &spec, const SearchSpace &space,
                                           const TargetInfo &target, SpaceReport &report) {
  std::vector<Candidate> out;
  std::vector<FusedQuant> fused = space.fusedQuant1;
  if (fused.empty()) {
    fused.push_back(FusedQuant::None);
    if (spec.formats.activation == DType::MXFP4)
      fused.push_back(FusedQuant::FP4);
    if (spec.formats.activation == DType::MXFP8)
      fused.push_back(FusedQuant::FP8);
  }
  auto consider = [&](MoeSpec layer, StageId stage, int64_t bm) {
    ++report.generated;
    ScheduleIssues issues = checkLayer(layer, target);
    if (!issues.empty()) {
      // One reason per candidate: its first broken rule.
      const ScheduleIssue &first = issues.front();
      ++report.rejected[(toString(servedStage(first.family)) + " " + first.parameter).str()];
      return;
    }
    auto name = dispatch::kernelNameFor(layer, stage);
    auto back = name ? dispatch::kernelNameToSchedule(*name)
                     : llvm::Expected<dispatch::MappedSchedule>(name.takeError());
    if (!back) {
      llvm::consumeError(back.takeError());
      ++report.rejected["name (no aiter kernel name)"];
      return;
    }
    const StageSchedule &s = layer.stage(stage), &r = back->schedule;
    if (r.tileM != s.tileM || r.tileN != s.tileN || r.tileK != s.tileK || r.kBatch != s.kBatch ||
        r.kWave != s.kWave || r.wavesPerEU != s.wavesPerEU || r.fusedQuant != s.fusedQuant ||
        r.weightDecode != s.weightDecode || r.prefetch != s.prefetch ||
        r.xcdSwizzle != s.xcdSwizzle || (stage == StageId::Stage2 && r.reduce != s.reduce)) {
      ++report.rejected["name (does not read back)"];
      return;
    }
    ++report.kept;
    out.push_back({stage, bm, layer, candidateId(layer, stage), *name});
  };
  for (int64_t bm : space.blockM) {
    MoeSpec spec0 = spec;
    spec0.stage1 = partnerSchedule(spec, StageId::Stage1, bm);
    spec0.stage2 = partnerSchedule(spec, StageId::Stage2, bm);
    for (StageId partner : {StageId::Stage2, StageId::Stage1}) {
      StageId stage = partner == StageId::Stage2 ? StageId::Stage1 : StageId::Stage2;
      // A partner stage that breaks a rule on this block would reject every
      // candidate for a reason that is not theirs: the first schedule of the
      // partner stage's own axis values that keeps the rules stands in (a
      // spec written for another block size must not cost the search this
      // one); with none, the block is skipped, said once.
      std::optional<MoeSpec> found;
      std::string why;
      for (const MoeSpec &option : partnerOptions(spec0, space, partner)) {
        std::optional<ScheduleIssue> issue = firstIssueOf(option, target, partner);
        if (!issue) {
          found = option;
          break;
        }
        if (why.empty())
          why = issue->str();
      }
      if (!found) {
        report.skipped.push_back(llvm::formatv("block_m={0}: the partner {1}", bm, why).str());
        continue;
      }
      if (!why.empty())
        report.partners.push_back(llvm::formatv("block_m={0}: {1} with the partner {2} (the "
                                                "spec's {3})",
                                                bm, toString(stage), candidateId(*found, partner),
                                                why)
                                      .str());
      const MoeSpec &base = *found;
      forEachStageSchedule(base, stage, space, fused,
                           [&](MoeSpec layer) { consider(std::move(layer), stage, bm); });
    }
  }
  return out;
}

MoeSpec combine(const Candidate &s1, const Candidate &s2) {
  MoeSpec layer = s1.layer;
  layer.stage2 = s2.layer.stage2;
  return layer;
}

} // namespace moegen::tune
