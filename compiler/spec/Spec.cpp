//===- Spec.cpp - Keyword spellings of the spec enums --------------------===//

#include "compiler/spec/Spec.h"

#include "llvm/ADT/StringSwitch.h"

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

} // namespace moegen
