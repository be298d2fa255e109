//===- HipBackend.h - The backend for real gfx950 devices -------*- C++ -*-===//
//
// Runs code objects on an AMD GPU through libamdhip64, opened at run time
// (HipApi.h): hipModuleLoadData, hipModuleGetFunction, hipModuleLaunchKernel
// with the packed kernarg buffer, hipMalloc/hipFree and stream-ordered
// copies. All work goes to one stream, the caller's or the backend's own.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_HIP_HIPBACKEND_H
#define MOEGEN_RUNTIME_HIP_HIPBACKEND_H

#include "runtime/backend/Backend.h"

namespace moegen::runtime {

struct HipBackendOptions {
  /// The device index; -1 picks the first device whose architecture is
  /// `chip`.
  int device = -1;
  /// The chip the code objects are built for.
  std::string chip = "gfx950";
  /// A hipStream_t owned by the caller (e.g. PyTorch's current stream);
  /// null: the backend creates a non-blocking stream of its own.
  void *stream = nullptr;
};

/// Fails with an error that says what was looked for when no HIP runtime,
/// no device, or no device of `options.chip` is present.
llvm::Expected<std::unique_ptr<Backend>> createHipBackend(HipBackendOptions options = {});

} // namespace moegen::runtime

#endif // MOEGEN_RUNTIME_HIP_HIPBACKEND_H
