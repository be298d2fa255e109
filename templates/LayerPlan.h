//===- LayerPlan.h - The kernels that implement a layer ---------*- C++ -*-===//
//
// Which kernels a layer compiles to, with their symbols and signatures,
// known without building them: the compiler builds exactly these, the cache
// finds their entries by them and the runtime launches them. MLIR-free.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEMPLATES_LAYERPLAN_H
#define MOEGEN_TEMPLATES_LAYERPLAN_H

#include "compiler/spec/KernelFamily.h"
#include "compiler/spec/TargetInfo.h"
#include "templates/KernelSignature.h"
#include "templates/ScheduleIssue.h"

#include <vector>

namespace moegen {

/// One kernel of a layer: its family and signature.
struct PlannedKernel {
  KernelFamily family;
  KernelSignature signature;
};

/// The kernels moegen generates for `spec`, in launch order; appends every
/// rule the spec breaks to `issues`.
std::vector<PlannedKernel> planLayerKernels(const MoeSpec &spec, const TargetInfo &target,
                                            ScheduleIssues &issues);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_LAYERPLAN_H
