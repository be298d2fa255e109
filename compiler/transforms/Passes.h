//===- Passes.h - moegen compiler passes ------------------------*- C++ -*-===//
#ifndef MOEGEN_COMPILER_TRANSFORMS_PASSES_H
#define MOEGEN_COMPILER_TRANSFORMS_PASSES_H

#include "compiler/spec/KernelFamily.h"
#include "compiler/spec/TargetInfo.h"
#include "dialects/moe/MoeOps.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace moegen {

#define GEN_PASS_DECL
#include "compiler/transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/transforms/Passes.h.inc"

/// What moe-verify-schedule and moe-instantiate-templates work for: the
/// module's target, and the kernel families of their `families` option
/// (empty: all).
struct LayerPassScope {
  TargetInfo target;
  std::vector<KernelFamily> families;
};

/// `module`'s scope; a module without a target, or an unknown family name,
/// is an error at `module`.
mlir::FailureOr<LayerPassScope> getLayerPassScope(mlir::ModuleOp module,
                                                  llvm::ArrayRef<std::string> families);

} // namespace moegen

#endif // MOEGEN_COMPILER_TRANSFORMS_PASSES_H
