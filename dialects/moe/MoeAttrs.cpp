//===- MoeAttrs.cpp - Types and attributes of the moe dialect ------------===//

#include "dialects/moe/MoeDialect.h"

#include "compiler/spec/DslParser.h"
#include "compiler/spec/SpecLimits.h"
#include "compiler/spec/TargetInfo.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace moegen::moe;

#include "dialects/moe/MoeEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/moe/MoeTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/moe/MoeAttrs.cpp.inc"

void MoeDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/moe/MoeTypes.cpp.inc"
      >();
}

void MoeDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/moe/MoeAttrs.cpp.inc"
      >();
}

LogicalResult MXType::verify(function_ref<InFlightDiagnostic()> emitError, Type elementType,
                             Type scaleType, unsigned block) {
  if (!isa<Float4E2M1FNType, Float8E4M3FNType>(elementType))
    return emitError() << "MX elements must be f4E2M1FN or f8E4M3FN, got " << elementType;
  if (!isa<Float8E8M0FNUType>(scaleType))
    return emitError() << "MX scales must be f8E8M0FNU (e8m0), got " << scaleType;
  if (block != 32)
    return emitError() << "MX block must be 32 elements along K, got " << block;
  return success();
}

LogicalResult ProblemAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t modelDim,
                                  int64_t interDim, int64_t experts, int64_t topk, GateUpLayoutKind,
                                  bool) {
  if (modelDim <= 0 || interDim <= 0 || experts <= 0 || topk <= 0)
    return emitError() << "model_dim, inter_dim, experts and topk must be positive";
  if (topk > experts)
    return emitError() << "topk (" << topk << ") exceeds the number of experts (" << experts << ")";
  // The sorted token id packs the slot into 8 bits and the token into 24.
  if (topk > 255)
    return emitError() << "topk (" << topk << ") must fit in 8 bits of the sorted token id";
  return success();
}

static bool isActivationFormat(Type t) {
  if (t.isBF16())
    return true;
  return isa<MXType>(t);
}

LogicalResult FormatsAttr::verify(function_ref<InFlightDiagnostic()> emitError, Type activation,
                                  Type weight, Type output) {
  if (!isActivationFormat(activation))
    return emitError() << "activation format must be bf16, !moe.mx<f8E4M3FN> or "
                          "!moe.mx<f4E2M1FN>, got "
                       << activation;
  if (!isActivationFormat(weight))
    return emitError() << "weight format must be !moe.mx<f4E2M1FN>, !moe.mx<f8E4M3FN> or bf16, got "
                       << weight;
  if (!output.isBF16())
    return emitError() << "output format must be bf16, got " << output;
  return success();
}

LogicalResult ActivationAttr::verify(function_ref<InFlightDiagnostic()> emitError, StringRef text) {
  auto act = moegen::parseActivation(text);
  if (!act) {
    std::string msg = llvm::toString(act.takeError());
    // The first line holds "activation:line:col: error: ..."; the rest is the
    // source excerpt, which the attribute's own location already shows.
    return emitError() << "invalid activation: " << StringRef(msg).split('\n').first;
  }
  return success();
}

moegen::ActivationExpr ActivationAttr::getExpr() const {
  auto act = moegen::parseActivation(getText());
  // Verified at construction, so this cannot fail.
  return act ? std::move(*act) : (llvm::consumeError(act.takeError()), moegen::ActivationExpr());
}

LogicalResult ScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t tileM,
                                   int64_t tileN, int64_t tileK, int64_t kBatch, int64_t kWave,
                                   int64_t wavesPerEU, KBatchModeKind, FusedQuantKind,
                                   ReduceModeKind, WeightDecodeKind, int64_t prefetch,
                                   int64_t xcdSwizzle, Stage2WaitKind) {
  if (tileM <= 0 || tileN <= 0 || tileK <= 0)
    return emitError() << "tile sizes must be positive, got " << tileM << "x" << tileN << "x"
                       << tileK;
  if (kBatch <= 0 || kWave <= 0)
    return emitError() << "k_batch and k_wave must be positive, got k_batch=" << kBatch
                       << " k_wave=" << kWave;
  // The spec's limits (checkStageLimits), so that a parsed spec and an attribute agree.
  namespace limits = moegen::limits;
  if (wavesPerEU < 0 || wavesPerEU > limits::kMaxWavesPerEU)
    return emitError() << "waves_per_eu must be in [0, " << limits::kMaxWavesPerEU
                       << "] (0 = unconstrained), got " << wavesPerEU;
  if (prefetch < 0 || prefetch > limits::kMaxPrefetch)
    return emitError() << "prefetch must be in [0, " << limits::kMaxPrefetch
                       << "] (0 = the plan's), got " << prefetch;
  if (xcdSwizzle < 1 || xcdSwizzle > limits::kMaxXcdSwizzle)
    return emitError() << "xcd_swizzle must be in [1, " << limits::kMaxXcdSwizzle
                       << "] (1 = dispatch order), got " << xcdSwizzle;
  return success();
}

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError, StringRef chip,
                                 int64_t abi) {
  if (!TargetInfo::isSupportedCodeObjectVersion(abi))
    return emitError() << "code object version must be 5 or 6, got " << abi;
  if (!TargetInfo::forChip(chip, abi))
    return emitError() << "unsupported target chip '" << chip << "'; moegen generates "
                       << TargetInfo::supportedChips();
  return success();
}
