//===- HipApi.h - libamdhip64 opened at run time ----------------*- C++ -*-===//
//
// moegen builds without ROCm: the few HIP types it needs are declared here
// and the functions are resolved with dlopen/dlsym when a HIP backend is
// created. The library is looked for in this order, and an error lists every
// place tried:
//   1. a libamdhip64 already loaded in the process (RTLD_NOLOAD), so moegen
//      shares the HIP runtime of, e.g., PyTorch;
//   2. $MOEGEN_HIP_LIB (a path);
//   3. libamdhip64.so, libamdhip64.so.7, libamdhip64.so.6 (the loader's
//      search path), then $ROCM_PATH/lib and /opt/rocm/lib.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_HIP_HIPAPI_H
#define MOEGEN_RUNTIME_HIP_HIPAPI_H

#include "llvm/Support/Error.h"

#include <cstddef>
#include <string>

namespace moegen::hip {

// The HIP ABI types moegen uses (hip_runtime_api.h).
using hipError_t = int;
using hipModule_t = struct ihipModule_t *;
using hipFunction_t = struct ihipModuleSymbol_t *;
using hipStream_t = struct ihipStream_t *;
using hipDeviceptr_t = void *;
using hipEvent_t = struct ihipEvent_t *;
using hipGraph_t = struct ihipGraph *;
using hipGraphExec_t = struct hipGraphExec *;
constexpr hipError_t hipSuccess = 0;
constexpr unsigned hipStreamNonBlocking = 1;
/// hipStreamCaptureModeThreadLocal: only this thread's calls can break the
/// capture.
constexpr int hipStreamCaptureModeThreadLocal = 1;
/// The `extra` argument of hipModuleLaunchKernel: a packed kernarg buffer.
inline void *const kLaunchParamBufferPointer = reinterpret_cast<void *>(0x01);
inline void *const kLaunchParamBufferSize = reinterpret_cast<void *>(0x02);
inline void *const kLaunchParamEnd = reinterpret_cast<void *>(0x03);
/// hipDeviceProp_tR0600: gcnArchName ("gfx950:sramecc+:xnack-") is at byte
/// 1160; the whole struct is under 1600 bytes.
constexpr size_t kDevicePropGcnArchNameOffset = 1160;
constexpr size_t kDevicePropBufferBytes = 4096;

struct HipApi {
#define MOEGEN_HIP_REQUIRED(name, params) hipError_t(*name) params = nullptr;
#define MOEGEN_HIP_STRING(name, params) const char *(*name)params = nullptr;
#include "runtime/hip/HipSymbols.def"

  std::string libraryPath; // what was opened, for messages
  void *handle = nullptr;

  /// "hipErrorOutOfMemory (out of memory)" for a HIP error code.
  std::string errorText(hipError_t e) const;
};

/// Opens libamdhip64 (see above) and resolves every symbol; the result lives
/// for the rest of the process. Thread-safe; the first outcome is kept.
llvm::Expected<const HipApi &> loadHipApi();

} // namespace moegen::hip

#endif // MOEGEN_RUNTIME_HIP_HIPAPI_H
