//===- LayerKernels.h - Builds the kernels of a layer -----------*- C++ -*-===//
#ifndef MOEGEN_TEMPLATES_LAYERKERNELS_H
#define MOEGEN_TEMPLATES_LAYERKERNELS_H

#include "templates/KernelBuilder.h"
#include "templates/LayerPlan.h"

namespace moegen {

/// Builds the kernel `k` (planned by planLayerKernels) of `spec` into `module`.
mlir::gpu::GPUFuncOp buildLayerKernel(mlir::ImplicitLocOpBuilder &b, mlir::gpu::GPUModuleOp module,
                                      const MoeSpec &spec, const TargetInfo &target,
                                      const PlannedKernel &k);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_LAYERKERNELS_H
