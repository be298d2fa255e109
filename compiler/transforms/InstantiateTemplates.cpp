//===- InstantiateTemplates.cpp - moe-instantiate-templates ---------------===//

#include "compiler/transforms/Passes.h"

#include "dialects/moe/SpecConversion.h"
#include "templates/LayerKernels.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace moegen {
#define GEN_PASS_DEF_MOEINSTANTIATETEMPLATES
#include "compiler/transforms/Passes.h.inc"

namespace {

/// A gpu.module holding one kernel, for the module's target.
mlir::gpu::GPUModuleOp createKernelModule(mlir::ImplicitLocOpBuilder &b, llvm::StringRef name,
                                          const TargetInfo &target) {
  mlir::MLIRContext *ctx = b.getContext();
  // Optimization happens on the LLVM module (O3) in the code-object emitter;
  // the attribute records the chip and the code object version (the PTX
  // ISA, TargetInfo::llvmFeatures, for NVIDIA).
  if (target.isNvptx()) {
    auto nvvmTarget = mlir::NVVM::NVVMTargetAttr::get(ctx, /*optLevel=*/3, target.triple(),
                                                      target.chip, target.llvmFeatures());
    return mlir::gpu::GPUModuleOp::create(b, name, b.getArrayAttr({nvvmTarget}));
  }
  auto rocdlTarget = mlir::ROCDL::ROCDLTargetAttr::get(
      ctx, /*optLevel=*/3, "amdgcn-amd-amdhsa", target.chip,
      /*features=*/"", std::to_string(target.codeObjectVersion * 100));
  auto module = mlir::gpu::GPUModuleOp::create(b, name, b.getArrayAttr({rocdlTarget}));
  return module;
}

struct InstantiateTemplatesPass : impl::MoeInstantiateTemplatesBase<InstantiateTemplatesPass> {
  using MoeInstantiateTemplatesBase::MoeInstantiateTemplatesBase;
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::FailureOr<LayerPassScope> scope = getLayerPassScope(module, families);
    if (mlir::failed(scope))
      return signalPassFailure();
    const TargetInfo &info = scope->target;
    const std::vector<KernelFamily> &only = scope->families;
    llvm::SmallVector<moe::LayerOp> layers(module.getOps<moe::LayerOp>());
    for (moe::LayerOp layer : layers) {
      MoeSpec spec = moe::specFromLayer(layer);
      ScheduleIssues issues;
      std::vector<PlannedKernel> kernels = planLayerKernels(spec, info, issues);
      if (!issues.empty()) {
        layer.emitError() << "moe-instantiate-templates needs a verified schedule: "
                          << issues.front().str();
        return signalPassFailure();
      }
      mlir::ImplicitLocOpBuilder b(layer.getLoc(), layer);
      for (const PlannedKernel &k : kernels) {
        if (!only.empty() && !llvm::is_contained(only, k.family))
          continue;
        // Each kernel takes the location of the op of the stage it serves.
        for (mlir::Operation &op : layer.getBody().front())
          if (op.getName().stripDialect() == toString(k.family) ||
              op.getName().stripDialect() == toString(gemmFamily(servedStage(k.family))))
            b.setLoc(op.getLoc());
        b.setInsertionPoint(layer);
        auto kernelModule = createKernelModule(b, k.signature.symbol, info);
        kernelModule->setAttr("moe.family", b.getStringAttr(toString(k.family)));
        if (!buildLayerKernel(b, kernelModule, spec, info, k))
          return signalPassFailure();
      }
      layer.erase();
    }
  }
};

} // namespace
} // namespace moegen
