//===- LowerToTarget.cpp - moe-lower-to-target ----------------------------===//

#include "compiler/pipeline/Pipeline.h"
#include "compiler/transforms/Passes.h"

#include "dialects/moe/SpecConversion.h"

namespace moegen {
#define GEN_PASS_DEF_MOELOWERTOTARGET
#include "compiler/transforms/Passes.h.inc"

namespace {
struct LowerToTargetPass : impl::MoeLowerToTargetBase<LowerToTargetPass> {
  // The dynamic pipeline's dialects must be loaded before the pass runs:
  // those of every target's lowering.
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    for (llvm::StringRef chip : {TargetInfo::kDefaultChip, TargetInfo::kHopperChip}) {
      mlir::OpPassManager pm(mlir::ModuleOp::getOperationName());
      buildTargetLoweringPipeline(pm, *TargetInfo::forChip(chip));
      pm.getDependentDialects(registry);
    }
  }

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::FailureOr<TargetInfo> info = moe::getTargetInfo(module);
    if (mlir::failed(info))
      return signalPassFailure();
    mlir::OpPassManager pm(mlir::ModuleOp::getOperationName());
    buildTargetLoweringPipeline(pm, *info);
    if (mlir::failed(runPipeline(pm, module)))
      signalPassFailure();
  }
};
} // namespace
} // namespace moegen
