//===- CudaApi.h - The CUDA driver opened at run time -----------*- C++ -*-===//
//
// moegen builds without the CUDA toolkit: the few driver-API types it needs
// are declared here and the functions are resolved with dlopen/dlsym when a
// cuda backend is created (driver API only; no runtime library). The driver
// library is looked for in this order, and an error lists every place tried:
//   1. $MOEGEN_CUDA_LIB (a path): when set, the only place tried;
//   2. a libcuda already loaded in the process (RTLD_NOLOAD), e.g. PyTorch's;
//   3. libcuda.so.1, libcuda.so (the loader's search path).
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_CUDA_CUDAAPI_H
#define MOEGEN_RUNTIME_CUDA_CUDAAPI_H

#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace moegen::cuda {

// The driver ABI types moegen uses (cuda.h).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;
constexpr CUresult CUDA_SUCCESS = 0;
constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
/// CUstreamCaptureMode: only the capturing thread is barred from calls that
/// would break the capture (other threads may allocate, synchronize, ...).
constexpr int CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;
constexpr unsigned CU_EVENT_DEFAULT = 0;
// CUdevice_attribute values.
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
// CUfunction_attribute values.
constexpr int CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
constexpr int CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
constexpr int CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3;
constexpr int CU_FUNC_ATTRIBUTE_NUM_REGS = 4;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
// CUjit_option values for cuModuleLoadDataEx.
constexpr int CU_JIT_INFO_LOG_BUFFER = 3;
constexpr int CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
/// The `extra` argument of cuLaunchKernelEx: a packed parameter buffer.
inline void *const kLaunchParamBufferPointer = reinterpret_cast<void *>(0x01);
inline void *const kLaunchParamBufferSize = reinterpret_cast<void *>(0x02);
inline void *const kLaunchParamEnd = reinterpret_cast<void *>(0x00);

/// cuLaunchKernelEx's configuration (CUDA 12.0): CUlaunchAttribute is its id
/// padded to 8 bytes and a 64-byte value union; CUlaunchConfig the grid,
/// block, dynamic shared memory, stream and attribute list.
constexpr int CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6;
struct CUlaunchAttribute {
  int id = 0;
  char pad[4] = {};
  union {
    char bytes[64];
    int programmaticStreamSerializationAllowed;
  } value = {};
};
static_assert(sizeof(CUlaunchAttribute) == 72, "cuda.h's CUlaunchAttribute is 72 bytes");
struct CUlaunchConfig {
  unsigned gridDimX = 1, gridDimY = 1, gridDimZ = 1;
  unsigned blockDimX = 1, blockDimY = 1, blockDimZ = 1;
  unsigned sharedMemBytes = 0;
  CUstream hStream = nullptr;
  CUlaunchAttribute *attrs = nullptr;
  unsigned numAttrs = 0;
};

struct CudaApi {
#define MOEGEN_CUDA_REQUIRED(name, symbol, params) CUresult(*name) params = nullptr;
#include "runtime/cuda/CudaSymbols.def"

  std::string libraryPath; // what was opened, for messages
  void *handle = nullptr;
  int driverVersion = 0; // 13000 for CUDA 13.0

  /// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for a driver error code.
  std::string errorText(CUresult e) const;
};

/// Opens the CUDA driver (see above), resolves every symbol and calls
/// cuInit; the result lives for the rest of the process. Thread-safe; the
/// first outcome is kept.
llvm::Expected<const CudaApi &> loadCudaApi();

} // namespace moegen::cuda

#endif // MOEGEN_RUNTIME_CUDA_CUDAAPI_H
