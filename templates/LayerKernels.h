//===- LayerKernels.h - The kernels that implement a layer ------*- C++ -*-===//
#ifndef MOEGEN_TEMPLATES_LAYERKERNELS_H
#define MOEGEN_TEMPLATES_LAYERKERNELS_H

#include "compiler/spec/TargetInfo.h"
#include "templates/KernelBuilder.h"
#include "templates/ScheduleIssue.h"

namespace moegen {

/// One kernel of a layer: its family ("sort", "stage1", ...) and signature.
struct PlannedKernel {
  std::string family;
  KernelSignature signature;
};

/// The kernels moegen generates for `spec`, in launch order. Kernel families
/// whose templates have not landed yet are absent.
std::vector<PlannedKernel> planLayerKernels(const MoeSpec &spec, const TargetInfo &target,
                                            ScheduleIssues &issues);

/// The stage a kernel family serves ("stage1" for sort, input quantization
/// and the split-K finish; "stage2" for the inter-stage quantization and the
/// reduction): where its diagnostics point.
llvm::StringRef ownerFamily(llvm::StringRef family);

/// Builds the kernel `k` of `spec` into `module`.
mlir::gpu::GPUFuncOp buildLayerKernel(mlir::ImplicitLocOpBuilder &b, mlir::gpu::GPUModuleOp module,
                                      const MoeSpec &spec, const TargetInfo &target,
                                      const PlannedKernel &k);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_LAYERKERNELS_H
