//===- CudaBackend.h - The backend for NVIDIA GPUs (sm_90a) -----*- C++ -*-===//
//
// Runs PTX code objects on an NVIDIA GPU through the CUDA driver, opened at
// run time (CudaApi.h): the device's primary context, cuModuleLoadDataEx (the
// driver compiles the PTX for the device; its log is part of any error),
// cuLaunchKernelEx with the packed parameter buffer (laid out as
// KernargPacker lays out the AMDGPU kernarg segment: natural alignment, in
// order) and, for kernels that wait for their predecessors first thing
// (PtxGridWait.h; moegen's sm_90a kernels: moe-attach-grid-dependencies),
// programmatic stream serialization (launched as the one before finishes),
// cuMemAlloc/cuMemFree and stream-ordered copies. All work goes to one
// stream, the caller's or the backend's own. Graphs: stream capture
// (cuStreamBeginCapture_v2, thread-local mode) around the recorded work,
// cuGraphInstantiateWithFlags, cuGraphLaunch on the same stream.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_CUDA_CUDABACKEND_H
#define MOEGEN_RUNTIME_CUDA_CUDABACKEND_H

#include "runtime/backend/Backend.h"

namespace moegen::runtime {

struct CudaBackendOptions {
  /// The device ordinal; -1 picks the first device of `chip`'s compute
  /// capability.
  int device = -1;
  /// The chip the PTX is generated for: "sm_90a" needs compute capability
  /// 9.0 exactly (arch-specific features do not run on later chips).
  std::string chip = "sm_90a";
  /// A CUstream owned by the caller (e.g. PyTorch's current stream); null:
  /// the backend creates a non-blocking stream of its own.
  void *stream = nullptr;
};

/// Fails with an error that says what was looked for when no CUDA driver, no
/// device, or no device of `options.chip` is present.
llvm::Expected<std::unique_ptr<Backend>> createCudaBackend(CudaBackendOptions options = {});

/// "sm_90a" -> {9, 0}; nullopt for a name that is not sm_<major><minor>[a].
std::optional<std::pair<int, int>> computeCapabilityOf(llvm::StringRef chip);

} // namespace moegen::runtime

#endif // MOEGEN_RUNTIME_CUDA_CUDABACKEND_H
