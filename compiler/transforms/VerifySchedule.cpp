//===- VerifySchedule.cpp - moe-verify-schedule ---------------------------===//

#include "compiler/transforms/Passes.h"

#include "dialects/moe/SpecConversion.h"
#include "templates/LayerRules.h"

namespace moegen {
#define GEN_PASS_DEF_MOEVERIFYSCHEDULE
#include "compiler/transforms/Passes.h.inc"

namespace {
struct VerifySchedulePass : impl::MoeVerifyScheduleBase<VerifySchedulePass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::FailureOr<TargetInfo> info = moe::getTargetInfo(module);
    if (mlir::failed(info))
      return signalPassFailure();
    bool failed = false;
    module.walk([&](moe::LayerOp layer) {
      MoeSpec spec = moe::specFromLayer(layer);
      for (const ScheduleIssue &issue : checkLayer(spec, *info)) {
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
