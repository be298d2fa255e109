//===- SpecConversion.cpp - MoeSpec <-> moe dialect -----------------------===//

#include "dialects/moe/SpecConversion.h"

#include "compiler/spec/DslParser.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace moegen::moe {

Type toType(MLIRContext *ctx, DType t) {
  switch (t) {
  case DType::BF16:
    return BFloat16Type::get(ctx);
  case DType::F32:
    return Float32Type::get(ctx);
  case DType::MXFP8:
    return MXType::get(ctx, Float8E4M3FNType::get(ctx), Float8E8M0FNUType::get(ctx), 32);
  case DType::MXFP4:
    return MXType::get(ctx, Float4E2M1FNType::get(ctx), Float8E8M0FNUType::get(ctx), 32);
  }
  return {};
}

DType fromType(Type t) {
  if (auto mx = dyn_cast<MXType>(t))
    return isa<Float4E2M1FNType>(mx.getElementType()) ? DType::MXFP4 : DType::MXFP8;
  return t.isBF16() ? DType::BF16 : DType::F32;
}

/// The schedule attribute through its verifier: null and a diagnostic when
/// the schedule is invalid.
static ScheduleAttr checkedAttr(llvm::function_ref<InFlightDiagnostic()> emitError,
                                MLIRContext *ctx, const StageSchedule &s) {
  return ScheduleAttr::getChecked(
      emitError, ctx, s.tileM, s.tileN, s.tileK, s.kBatch, s.kWave, s.wavesPerEU,
      static_cast<KBatchModeKind>(s.kBatchMode), static_cast<FusedQuantKind>(s.fusedQuant),
      static_cast<ReduceModeKind>(s.reduce), static_cast<WeightDecodeKind>(s.weightDecode),
      s.prefetch, s.xcdSwizzle, static_cast<Stage2WaitKind>(s.wait));
}

ScheduleAttr toAttr(MLIRContext *ctx, const StageSchedule &s) {
  return checkedAttr([ctx] { return emitError(UnknownLoc::get(ctx)); }, ctx, s);
}

StageSchedule fromAttr(ScheduleAttr a) {
  StageSchedule s;
  s.tileM = a.getTileM();
  s.tileN = a.getTileN();
  s.tileK = a.getTileK();
  s.kBatch = a.getKBatch();
  s.kWave = a.getKWave();
  s.wavesPerEU = a.getWavesPerEu();
  s.kBatchMode = static_cast<KBatchMode>(a.getKBatchMode());
  s.fusedQuant = static_cast<FusedQuant>(a.getFusedQuant());
  s.reduce = static_cast<ReduceMode>(a.getReduce());
  s.weightDecode = static_cast<WeightDecode>(a.getWeightDecode());
  s.prefetch = a.getPrefetch();
  s.xcdSwizzle = a.getXcdSwizzle();
  s.wait = static_cast<Stage2Wait>(a.getWait());
  return s;
}

/// The location of a part of the spec: where the .moe file wrote it, else the
/// layer's name.
static Location locationOf(MLIRContext *ctx, const MoeSpec &spec, llvm::StringRef key) {
  auto it = spec.locations.find(key.str());
  if (it == spec.locations.end())
    return NameLoc::get(StringAttr::get(ctx, spec.name + "." + key));
  return FileLineColLoc::get(ctx, it->second.file, it->second.line, it->second.col);
}

// Null when an attribute does not verify; the reason is a diagnostic on ctx.
OwningOpRef<ModuleOp> buildLayerModule(MLIRContext *ctx, const MoeSpec &spec, TargetAttr target) {
  ctx->getOrLoadDialect<MoeDialect>();
  Location loc = locationOf(ctx, spec, "layer");
  // Every attribute goes through its verifier: a spec built in C++ (or one
  // whose printed activation does not parse back) is a diagnostic, not an
  // assertion.
  auto errorAt = [&](llvm::StringRef key) {
    return [ctx, &spec, key] { return emitError(locationOf(ctx, spec, key)); };
  };
  const Problem &p = spec.problem;
  auto problem =
      ProblemAttr::getChecked(errorAt("layer"), ctx, p.modelDim, p.interDim, p.experts, p.topk,
                              static_cast<GateUpLayoutKind>(p.gateUp), p.doweightStage1);
  auto formats =
      FormatsAttr::getChecked(errorAt("layer"), ctx, toType(ctx, spec.formats.activation),
                              toType(ctx, spec.formats.weight), toType(ctx, spec.formats.output));
  std::string activationText = printActivation(spec.activation);
  auto activation =
      ActivationAttr::getChecked(errorAt("activation"), ctx, llvm::StringRef(activationText));
  ScheduleAttr stage1 = checkedAttr(errorAt("stage1"), ctx, spec.stage1);
  ScheduleAttr stage2 = checkedAttr(errorAt("stage2"), ctx, spec.stage2);
  if (!problem || !formats || !activation || !stage1 || !stage2)
    return nullptr;
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  (*module)->setAttr(kTargetAttrName, target);
  OpBuilder b = OpBuilder::atBlockEnd(module->getBody());
  auto layer = LayerOp::create(b, loc, spec.name, problem, formats, activation);
  b.setInsertionPointToStart(&layer.getBody().front());
  // Sorting pads to stage 1's tile_m, so it answers for the stage1 block.
  SortOp::create(b, locationOf(ctx, spec, "stage1"), "sort", spec.stage1.tileM);
  Stage1Op::create(b, locationOf(ctx, spec, "stage1"), "stage1", stage1);
  Stage2Op::create(b, locationOf(ctx, spec, "stage2"), "stage2", stage2);
  return module;
}

MoeSpec specFromLayer(LayerOp layer) {
  MoeSpec spec;
  spec.name = layer.getSymName().str();
  ProblemAttr p = layer.getProblem();
  spec.problem = {p.getModelDim(),
                  p.getInterDim(),
                  p.getExperts(),
                  p.getTopk(),
                  static_cast<GateUpLayout>(p.getGateUp()),
                  p.getDoweightStage1()};
  FormatsAttr f = layer.getFormats();
  spec.formats = {fromType(f.getActivation()), fromType(f.getWeight()), fromType(f.getOutput())};
  spec.activation = layer.getActivation().getExpr();
  for (Operation &op : layer.getBody().front()) {
    if (auto s1 = dyn_cast<Stage1Op>(op))
      spec.stage1 = fromAttr(s1.getSchedule());
    if (auto s2 = dyn_cast<Stage2Op>(op))
      spec.stage2 = fromAttr(s2.getSchedule());
  }
  return spec;
}

TargetAttr getTarget(ModuleOp module) { return module->getAttrOfType<TargetAttr>(kTargetAttrName); }

FailureOr<TargetInfo> getTargetInfo(ModuleOp module) {
  TargetAttr target = getTarget(module);
  if (!target)
    return module.emitError("missing the moe.target attribute (e.g. moe.target = "
                            "#moe.target<chip = \"gfx950\", abi = 6>)");
  std::optional<TargetInfo> info = TargetInfo::forChip(target.getChip(), target.getAbi());
  if (!info)
    return module.emitError() << "unsupported target chip '" << target.getChip()
                              << "'; moegen generates " << TargetInfo::supportedChips();
  return *info;
}

} // namespace moegen::moe
