//===- Passes.h - moegen compiler passes ------------------------*- C++ -*-===//
#ifndef MOEGEN_COMPILER_TRANSFORMS_PASSES_H
#define MOEGEN_COMPILER_TRANSFORMS_PASSES_H

#include "compiler/spec/KernelFamily.h"
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

/// The `families` option of moe-verify-schedule and
/// moe-instantiate-templates as families; an unknown name is an error at
/// `module`.
mlir::FailureOr<std::vector<KernelFamily>> parseFamiliesOption(mlir::ModuleOp module,
                                                               llvm::ArrayRef<std::string> names);

} // namespace moegen

#endif // MOEGEN_COMPILER_TRANSFORMS_PASSES_H
