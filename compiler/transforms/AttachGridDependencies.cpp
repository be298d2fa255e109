//===- AttachGridDependencies.cpp - moe-attach-grid-dependencies ----------===//

#include "compiler/transforms/Passes.h"
#include "templates/KernelBuilder.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace moegen {
#define GEN_PASS_DEF_MOEATTACHGRIDDEPENDENCIES
#include "compiler/transforms/Passes.h.inc"

namespace {
struct AttachGridDependenciesPass
    : impl::MoeAttachGridDependenciesBase<AttachGridDependenciesPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<mlir::gpu::GPUFuncOp>()) {
      if (!func.isKernel() || func.getBody().empty())
        continue;
      if (func->hasAttr(kGridWaitAtExitAttrName)) {
        // Before every return: no thread exits, so the grid does not
        // complete, before the kernels ahead of it have.
        func.walk([](mlir::gpu::ReturnOp ret) {
          mlir::ImplicitLocOpBuilder b(ret.getLoc(), ret);
          emitGridWait(b);
        });
        continue;
      }
      mlir::ImplicitLocOpBuilder b(func.getLoc(), &func.getBody().front(),
                                   func.getBody().front().begin());
      emitGridWait(b);
    }
  }
};
} // namespace
} // namespace moegen
