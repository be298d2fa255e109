//===- Spec.cpp - Keyword spellings of the spec enums --------------------===//

#include "compiler/spec/Spec.h"

#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/StringSwitch.h"

#include <bit>
#include <tuple>

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
                         s.kBatchMode, s.reduce);
}

auto problemFields(const MoeSpec &s) {
  const Problem &p = s.problem;
  return std::make_tuple(p.modelDim, p.interDim, p.experts, p.topk, p.gateUp, p.doweightStage1,
                         s.formats.activation, s.formats.weight, s.formats.output);
}

} // namespace

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
