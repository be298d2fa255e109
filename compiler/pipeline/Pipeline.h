//===- Pipeline.h - The moegen pass pipeline --------------------*- C++ -*-===//
//
// One pipeline, built here and used by the CLI, the JIT and moegen-opt (as
// --moegen-pipeline), so the tests exercise exactly what users run.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_COMPILER_PIPELINE_PIPELINE_H
#define MOEGEN_COMPILER_PIPELINE_PIPELINE_H

#include "mlir/Pass/PassManager.h"

namespace mlir {
class DialectRegistry;
}

namespace moegen {

/// moe-verify-schedule, moe-instantiate-templates and the gfx950 lowering of
/// every kernel's gpu.module to the LLVM dialect (scf -> cf, amdgpu -> rocdl,
/// gpu -> rocdl with bare-pointer kernel arguments, cast reconciliation).
void buildMoegenPipeline(mlir::OpPassManager &pm);

/// Only the part before code generation: verification and template expansion.
void buildMoegenFrontendPipeline(mlir::OpPassManager &pm);

/// The target lowering applied to each gpu.module.
void buildGfx950LoweringPipeline(mlir::OpPassManager &pm);

/// Every dialect and translation interface the pipeline needs.
void registerMoegenDialects(mlir::DialectRegistry &registry);

/// Registers the moegen passes and the named pipelines ("moegen-pipeline",
/// "moegen-frontend", "moegen-lower-gfx950") with the global registry.
void registerMoegenPassesAndPipelines();

} // namespace moegen

#endif // MOEGEN_COMPILER_PIPELINE_PIPELINE_H
