//===- VerifySchedule.cpp - moe-verify-schedule ---------------------------===//

#include "compiler/transforms/Passes.h"

#include "dialects/moe/SpecConversion.h"
#include "templates/LayerRules.h"

namespace moegen {
#define GEN_PASS_DEF_MOEVERIFYSCHEDULE
#include "compiler/transforms/Passes.h.inc"

mlir::FailureOr<std::vector<KernelFamily>> parseFamiliesOption(mlir::ModuleOp module,
                                                               llvm::ArrayRef<std::string> names) {
  auto families = parseKernelFamilies(names);
  if (!families)
    return module.emitError() << llvm::toString(families.takeError());
  return std::move(*families);
}

namespace {
struct VerifySchedulePass : impl::MoeVerifyScheduleBase<VerifySchedulePass> {
  using MoeVerifyScheduleBase::MoeVerifyScheduleBase;
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::FailureOr<TargetInfo> info = moe::getTargetInfo(module);
    if (mlir::failed(info))
      return signalPassFailure();
    mlir::FailureOr<std::vector<KernelFamily>> only = parseFamiliesOption(module, families);
    if (mlir::failed(only))
      return signalPassFailure();
    bool failed = false;
    module.walk([&](moe::LayerOp layer) {
      MoeSpec spec = moe::specFromLayer(layer);
      for (const ScheduleIssue &issue : checkLayer(spec, *info, *only)) {
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
