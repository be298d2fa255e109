//===- Spec.cpp - Keyword spellings of the spec enums --------------------===//

#include "compiler/spec/Spec.h"

#include "compiler/spec/SpecLimits.h"

#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <tuple>

#include <unistd.h>

namespace moegen {

llvm::StringRef toString(DType t) {
  switch (t) {
  case DType::BF16:
    return "bf16";
  case DType::MXFP8:
    return "mxfp8";
  case DType::MXFP4:
    return "mxfp4";
  case DType::F32:
    return "f32";
  }
  return "?";
}

llvm::StringRef toString(GateUpLayout l) {
  return l == GateUpLayout::Separated ? "separated" : "interleaved";
}

llvm::StringRef toString(FusedQuant q) {
  switch (q) {
  case FusedQuant::None:
    return "none";
  case FusedQuant::FP4:
    return "fp4";
  case FusedQuant::FP8:
    return "fp8";
  }
  return "?";
}

llvm::StringRef toString(ReduceMode m) { return m == ReduceMode::Atomic ? "atomic" : "reduce"; }

llvm::StringRef toString(KBatchMode m) {
  return m == KBatchMode::Atomic ? "atomic" : "deterministic";
}

llvm::StringRef toString(WeightDecode d) {
  return d == WeightDecode::Mixed ? "mixed" : "arithmetic";
}

llvm::StringRef toString(Stage2Wait w) { return w == Stage2Wait::Rows ? "rows" : "grid"; }

llvm::StringRef toString(StageId s) { return s == StageId::Stage1 ? "stage1" : "stage2"; }

std::optional<DType> parseDType(llvm::StringRef s) {
  return llvm::StringSwitch<std::optional<DType>>(s)
      .Case("bf16", DType::BF16)
      .Case("mxfp8", DType::MXFP8)
      .Case("mxfp4", DType::MXFP4)
      .Case("f32", DType::F32)
      .Default(std::nullopt);
}

std::optional<GateUpLayout> parseGateUpLayout(llvm::StringRef s) {
  return llvm::StringSwitch<std::optional<GateUpLayout>>(s)
      .Case("separated", GateUpLayout::Separated)
      .Case("interleaved", GateUpLayout::Interleaved)
      .Default(std::nullopt);
}

std::optional<FusedQuant> parseFusedQuant(llvm::StringRef s) {
  return llvm::StringSwitch<std::optional<FusedQuant>>(s)
      .Case("none", FusedQuant::None)
      .Case("fp4", FusedQuant::FP4)
      .Case("fp8", FusedQuant::FP8)
      .Default(std::nullopt);
}

std::optional<ReduceMode> parseReduceMode(llvm::StringRef s) {
  return llvm::StringSwitch<std::optional<ReduceMode>>(s)
      .Case("atomic", ReduceMode::Atomic)
      .Case("reduce", ReduceMode::Reduce)
      .Default(std::nullopt);
}

std::optional<KBatchMode> parseKBatchMode(llvm::StringRef s) {
  return llvm::StringSwitch<std::optional<KBatchMode>>(s)
      .Case("atomic", KBatchMode::Atomic)
      .Case("deterministic", KBatchMode::Deterministic)
      .Default(std::nullopt);
}

std::optional<WeightDecode> parseWeightDecode(llvm::StringRef s) {
  return llvm::StringSwitch<std::optional<WeightDecode>>(s)
      .Case("mixed", WeightDecode::Mixed)
      .Case("arithmetic", WeightDecode::Arithmetic)
      .Default(std::nullopt);
}

std::optional<Stage2Wait> parseStage2Wait(llvm::StringRef s) {
  return llvm::StringSwitch<std::optional<Stage2Wait>>(s)
      .Case("rows", Stage2Wait::Rows)
      .Case("grid", Stage2Wait::Grid)
      .Default(std::nullopt);
}

std::string precisionTag(const Formats &f) {
  auto bits = [](DType t) {
    switch (t) {
    case DType::BF16:
      return "16";
    case DType::MXFP8:
      return "8";
    case DType::MXFP4:
      return "4";
    case DType::F32:
      return "32";
    }
    return "?";
  };
  return std::string("a") + bits(f.activation) + "w" + bits(f.weight);
}

namespace {

bool sameExpr(const ExprNode &a, const ExprNode &b) {
  if (a.kind != b.kind || a.value != b.value || a.paramIndex != b.paramIndex || a.func != b.func ||
      a.operands.size() != b.operands.size())
    return false;
  for (size_t i = 0; i < a.operands.size(); ++i)
    if (!sameExpr(*a.operands[i], *b.operands[i]))
      return false;
  return true;
}

llvm::hash_code hashExpr(const ExprNode &n) {
  llvm::hash_code h = llvm::hash_combine(static_cast<int>(n.kind), std::bit_cast<uint64_t>(n.value),
                                         n.paramIndex, static_cast<int>(n.func));
  for (const ExprRef &op : n.operands)
    h = llvm::hash_combine(h, hashExpr(*op));
  return h;
}

auto scheduleFields(const StageSchedule &s) {
  return std::make_tuple(s.tileM, s.tileN, s.tileK, s.kBatch, s.kWave, s.wavesPerEU, s.fusedQuant,
                         s.kBatchMode, s.reduce, s.weightDecode, s.prefetch, s.xcdSwizzle, s.wait);
}

auto problemFields(const MoeSpec &s) {
  const Problem &p = s.problem;
  return std::make_tuple(p.modelDim, p.interDim, p.experts, p.topk, p.gateUp, p.doweightStage1,
                         s.formats.activation, s.formats.weight, s.formats.output);
}

} // namespace

namespace {

/// "file:line:col: error: " where the spec wrote `key`, or "error: ".
std::string errorPrefix(const MoeSpec &spec, llvm::StringRef key) {
  auto it = spec.locations.find(key.str());
  if (it == spec.locations.end())
    return "error: ";
  const SourceLoc &l = it->second;
  return l.file + ":" + std::to_string(l.line) + ":" + std::to_string(l.col) + ": error: ";
}

/// `name`=value must lie in [lo, hi]; the error points at where the spec
/// wrote `locKey`.
llvm::Error checkRange(const MoeSpec &spec, llvm::StringRef locKey, llvm::StringRef name,
                       int64_t value, int64_t lo, int64_t hi) {
  if (value >= lo && value <= hi)
    return llvm::Error::success();
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 errorPrefix(spec, locKey) + name + "=" + std::to_string(value) +
                                     " is out of range; it must be in [" + std::to_string(lo) +
                                     ", " + std::to_string(hi) + "]");
}

llvm::Error checkStageLimits(const MoeSpec &spec, StageId id) {
  const StageSchedule &s = spec.stage(id);
  std::string stage = toString(id).str();
  std::string tileKey = stage + ".tile"; // the parser records one location for all three
  for (auto [key, value, lo, hi] :
       {std::tuple{"tile_m", s.tileM, int64_t(1), limits::kMaxTile},
        {"tile_n", s.tileN, int64_t(1), limits::kMaxTile},
        {"tile_k", s.tileK, int64_t(1), limits::kMaxTile},
        {"k_batch", s.kBatch, int64_t(1), limits::kMaxKBatch},
        {"k_wave", s.kWave, int64_t(1), limits::kMaxKWave},
        {"waves_per_eu", s.wavesPerEU, int64_t(0), limits::kMaxWavesPerEU},
        {"prefetch", s.prefetch, int64_t(0), limits::kMaxPrefetch},
        {"xcd_swizzle", s.xcdSwizzle, int64_t(1), limits::kMaxXcdSwizzle}}) {
    std::string name = stage + "." + key;
    bool isTile = llvm::StringRef(key).starts_with("tile_");
    if (auto e = checkRange(spec, isTile ? tileKey : name, name, value, lo, hi))
      return e;
  }
  return llvm::Error::success();
}

llvm::Error checkActivationLimits(const MoeSpec &spec) {
  const ActivationExpr &act = spec.activation;
  for (const ActivationParam &param : act.params) {
    if (!std::isfinite(param.value))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     errorPrefix(spec, "activation") + "activation parameter '" +
                                         param.name + "' must be a finite number");
    // A user activation prints its arguments as g and u.
    if (!act.builtin && (param.name == "g" || param.name == "u"))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     errorPrefix(spec, "activation") + "activation parameter '" +
                                         param.name + "' clashes with the argument names g, u");
  }
  if (!act.body)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   errorPrefix(spec, "activation") + "the activation is missing");
  if (exprDepth(*act.body, limits::kMaxExprDepth) > limits::kMaxExprDepth)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   errorPrefix(spec, "activation") +
                                       "expression nested deeper than " +
                                       std::to_string(limits::kMaxExprDepth) + " levels");
  return llvm::Error::success();
}

} // namespace

llvm::Error checkSpecLimits(const MoeSpec &spec) {
  const Problem &p = spec.problem;
  int64_t maxTopk = std::min(limits::kMaxTopk, p.experts);
  for (auto [key, value, hi] : {std::tuple{"model_dim", p.modelDim, limits::kMaxDim},
                                {"inter_dim", p.interDim, limits::kMaxDim},
                                {"experts", p.experts, limits::kMaxExperts},
                                {"topk", p.topk, maxTopk}})
    if (auto e = checkRange(spec, key, key, value, 1, hi))
      return e;
  for (StageId id : {StageId::Stage1, StageId::Stage2})
    if (auto e = checkStageLimits(spec, id))
      return e;
  return checkActivationLimits(spec);
}

llvm::Error checkHostMemory(const MoeSpec &spec, int64_t tokens, uint64_t availableBytes) {
  const Problem &p = spec.problem;
  // Bytes per element: weights at most bf16, router scores f32, per-slot
  // rows and pre-rounding values f32 and f64 copies.
  uint64_t weights = 2 * 3 * uint64_t(p.experts) * p.interDim * p.modelDim;
  uint64_t scores = 4 * uint64_t(tokens) * p.experts;
  uint64_t rows = 16 * uint64_t(tokens) * (p.topk * (2 * p.interDim + p.modelDim) + p.modelDim);
  uint64_t need = weights + scores + rows;
  if (availableBytes == 0 || need <= availableBytes)
    return llvm::Error::success();
  auto gib = [](uint64_t b) { return std::to_string((b + (1 << 30) - 1) >> 30); };
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "the layer's inputs and reference for " + std::to_string(tokens) + " tokens need about " +
          gib(need) + " GiB of host memory (experts=" + std::to_string(p.experts) + ", model_dim=" +
          std::to_string(p.modelDim) + ", inter_dim=" + std::to_string(p.interDim) +
          "), more than the " + gib(availableBytes) + " GiB this machine has");
}

uint64_t physicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && pageSize > 0 ? uint64_t(pages) * uint64_t(pageSize) : 0;
}

llvm::Error checkTokenCount(int64_t tokens, llvm::StringRef what) {
  if (tokens >= 1 && tokens <= limits::kMaxTokens)
    return llvm::Error::success();
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 what + ": " + std::to_string(tokens) +
                                     " tokens is out of range; it must be in [1, " +
                                     std::to_string(limits::kMaxTokens) + "]");
}

bool sameSpec(const MoeSpec &a, const MoeSpec &b) {
  if (a.name != b.name || problemFields(a) != problemFields(b) ||
      scheduleFields(a.stage1) != scheduleFields(b.stage1) ||
      scheduleFields(a.stage2) != scheduleFields(b.stage2))
    return false;
  const ActivationExpr &x = a.activation, &y = b.activation;
  if (x.name != y.name || x.builtin != y.builtin || x.params.size() != y.params.size())
    return false;
  for (size_t i = 0; i < x.params.size(); ++i)
    if (x.params[i].name != y.params[i].name || x.params[i].value != y.params[i].value)
      return false;
  return x.body && y.body ? sameExpr(*x.body, *y.body) : x.body == y.body;
}

size_t hashSpec(const MoeSpec &s) {
  auto hashSchedule = [](const StageSchedule &t) {
    return std::apply([](auto... f) { return llvm::hash_combine(static_cast<int64_t>(f)...); },
                      scheduleFields(t));
  };
  llvm::hash_code h = std::apply(
      [](auto... f) { return llvm::hash_combine(static_cast<int64_t>(f)...); }, problemFields(s));
  h = llvm::hash_combine(h, s.name, hashSchedule(s.stage1), hashSchedule(s.stage2),
                         s.activation.name, s.activation.builtin);
  for (const ActivationParam &p : s.activation.params)
    h = llvm::hash_combine(h, p.name, std::bit_cast<uint64_t>(p.value));
  if (s.activation.body)
    h = llvm::hash_combine(h, hashExpr(*s.activation.body));
  return static_cast<size_t>(h);
}

} // namespace moegen
