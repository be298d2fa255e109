//===- SpecConversion.h - MoeSpec <-> moe dialect ---------------*- C++ -*-===//
#ifndef MOEGEN_DIALECTS_MOE_SPECCONVERSION_H
#define MOEGEN_DIALECTS_MOE_SPECCONVERSION_H

#include "compiler/spec/Spec.h"
#include "compiler/spec/TargetInfo.h"
#include "dialects/moe/MoeOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace moegen::moe {

/// The module for one layer: `moe.layer` with its sort, stage1 and stage2
/// ops, and the `moe.target` attribute on the module.
mlir::OwningOpRef<mlir::ModuleOp> buildLayerModule(mlir::MLIRContext *ctx, const MoeSpec &spec,
                                                   TargetAttr target);

/// Reads a layer back into a MoeSpec (the inverse of buildLayerModule).
MoeSpec specFromLayer(LayerOp layer);

ScheduleAttr toAttr(mlir::MLIRContext *ctx, const StageSchedule &s);
StageSchedule fromAttr(ScheduleAttr a);
mlir::Type toType(mlir::MLIRContext *ctx, DType t);
DType fromType(mlir::Type t);

/// The module's target, or nullptr if it has none.
TargetAttr getTarget(mlir::ModuleOp module);
/// What the module's target is (the attribute verifier admits only chips
/// TargetInfo knows), or an error at the module when it has none.
mlir::FailureOr<TargetInfo> getTargetInfo(mlir::ModuleOp module);
constexpr llvm::StringLiteral kTargetAttrName = "moe.target";

} // namespace moegen::moe

#endif // MOEGEN_DIALECTS_MOE_SPECCONVERSION_H
