//===- VerifySchedule.cpp - moe-verify-schedule ---------------------------===//

#include "compiler/transforms/Passes.h"

#include "dialects/moe/SpecConversion.h"
#include "templates/LayerRules.h"

namespace moegen {
#define GEN_PASS_DEF_MOEVERIFYSCHEDULE
#include "compiler/transforms/Passes.h.inc"

mlir::FailureOr<LayerPassScope> getLayerPassScope(mlir::ModuleOp module,
                                                  llvm::ArrayRef<std::string> families) {
  mlir::FailureOr<TargetInfo> target = moe::getTargetInfo(module);
  if (mlir::failed(target))
    return mlir::failure();
  auto parsed = parseKernelFamilies(families);
  if (!parsed)
    return module.emitError() << llvm::toString(parsed.takeError());
  return LayerPassScope{std::move(*target), std::move(*parsed)};
}

namespace {
struct VerifySchedulePass : impl::MoeVerifyScheduleBase<VerifySchedulePass> {
  using MoeVerifyScheduleBase::MoeVerifyScheduleBase;
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::FailureOr<LayerPassScope> scope = getLayerPassScope(module, families);
    if (mlir::failed(scope))
      return signalPassFailure();
    bool failed = false;
    module.walk([&](moe::LayerOp layer) {
      MoeSpec spec = moe::specFromLayer(layer);
      for (const ScheduleIssue &issue : checkLayer(spec, scope->target, scope->families)) {
        // Report at the op of the kernel family that owns the rule.
        mlir::Operation *at = layer;
        for (mlir::Operation &op : layer.getBody().front())
          if (op.getName().stripDialect() == toString(issue.family))
            at = &op;
        at->emitError() << issue.str();
        failed = true;
      }
    });
    if (failed)
      signalPassFailure();
  }
};
} // namespace
} // namespace moegen
