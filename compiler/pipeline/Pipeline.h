//===- Pipeline.h - The moegen pass pipeline --------------------*- C++ -*-===//
//
// One pipeline, built here and used by the CLI, the JIT and moegen-opt (as
// --moegen-pipeline), so the tests exercise exactly what users run.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_COMPILER_PIPELINE_PIPELINE_H
#define MOEGEN_COMPILER_PIPELINE_PIPELINE_H

#include "compiler/spec/TargetInfo.h"

#include "mlir/Pass/PassManager.h"

namespace mlir {
class DialectRegistry;
}

namespace moegen {

/// moe-verify-schedule, moe-instantiate-templates and moe-lower-to-target:
/// every kernel's gpu.module lowered to the LLVM dialect for the module's
/// `moe.target`. `families` (names of KernelFamily), when not empty, limits
/// verification of template availability and instantiation to those kernels.
void buildMoegenPipeline(mlir::OpPassManager &pm, llvm::ArrayRef<std::string> families = {});

/// Only the part before code generation: verification and template expansion.
void buildMoegenFrontendPipeline(mlir::OpPassManager &pm,
                                 llvm::ArrayRef<std::string> families = {});

/// The lowering of `target` (what moe-lower-to-target runs). gfx950: scf ->
/// cf, amdgpu -> rocdl, gpu -> rocdl with bare-pointer kernel arguments on
/// each gpu.module; sm_90a: scf -> cf, gpu -> nvvm (bare pointers, 64-bit
/// index); then cast reconciliation and canonicalization.
void buildTargetLoweringPipeline(mlir::OpPassManager &pm, const TargetInfo &target);

/// Every dialect and translation interface the pipeline needs.
void registerMoegenDialects(mlir::DialectRegistry &registry);

/// Registers the moegen passes and the named pipelines ("moegen-pipeline",
/// "moegen-frontend", "moegen-lower") with the global registry.
void registerMoegenPassesAndPipelines();

} // namespace moegen

#endif // MOEGEN_COMPILER_PIPELINE_PIPELINE_H
