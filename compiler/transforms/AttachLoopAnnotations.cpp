//===- AttachLoopAnnotations.cpp - moe-attach-loop-annotations ------------===//

#include "compiler/transforms/Passes.h"

namespace moegen {
#define GEN_PASS_DEF_MOEATTACHLOOPANNOTATIONS
#include "compiler/transforms/Passes.h.inc"

namespace {
constexpr llvm::StringLiteral kLoopAnnotation = "llvm.loop_annotation";

struct AttachLoopAnnotationsPass : impl::MoeAttachLoopAnnotationsBase<AttachLoopAnnotationsPass> {
  void runOnOperation() override {
    getOperation()->walk([](mlir::Operation *op) {
      auto hint = op->getAttrOfType<mlir::LLVM::LoopAnnotationAttr>(kLoopAnnotation);
      if (!hint)
        return;
      if (auto br = llvm::dyn_cast<mlir::LLVM::BrOp>(op))
        br.setLoopAnnotationAttr(hint);
      else if (auto condBr = llvm::dyn_cast<mlir::LLVM::CondBrOp>(op))
        condBr.setLoopAnnotationAttr(hint);
      else
        return;
      op->removeAttr(kLoopAnnotation);
    });
  }
};
} // namespace
} // namespace moegen
