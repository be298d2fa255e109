//===- KernelEstimate.h - One compiled kernel's modelled time ---*- C++ -*-===//
//
// Puts a compiled kernel through the latency model at a token count: its
// disassembly, the launch its family's contract gives (templates/*Plan.h),
// the workgroups that have rows under the routing assumption (Routing.h),
// the token count as its kernel argument, and loop trip hints for the loops
// whose bounds the scalar state cannot follow.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_BENCH_LATENCY_MODEL_KERNELESTIMATE_H
#define MOEGEN_BENCH_LATENCY_MODEL_KERNELESTIMATE_H

#include "bench/latency_model/Isa.h"
#include "bench/latency_model/KernelTime.h"

#include "compiler/spec/KernelFamily.h"
#include "compiler/spec/Spec.h"
#include "compiler/target/CodeObjectInfo.h"
#include "templates/KernelSignature.h"

#include <memory>

namespace moegen::latency {

struct ModelledKernel {
  KernelFamily family;
  KernelSignature signature;
  KernelResources resources;
  std::shared_ptr<const Program> program;
};

struct KernelEstimate {
  KernelLaunch launch;
  WaveResult wave;
  KernelTime time;
};

llvm::Expected<KernelEstimate> estimateKernel(const ModelledKernel &kernel, const MoeSpec &spec,
                                              int64_t tokens, const MachineModel &machine);

} // namespace moegen::latency

#endif // MOEGEN_BENCH_LATENCY_MODEL_KERNELESTIMATE_H
