//===- CudaApi.cpp - The CUDA driver opened at run time -------------------===//

#include "runtime/cuda/CudaApi.h"

#include "runtime/backend/DriverLibrary.h"

#include <dlfcn.h>

namespace moegen::cuda {
namespace {

const std::string kLibraryNames[] = {"libcuda.so.1", "libcuda.so"};

/// Resolves every symbol of CudaSymbols.def; the missing ones are listed.
llvm::Error resolve(CudaApi &api) {
  std::string missing;
#define MOEGEN_CUDA_REQUIRED(name, symbol, params)                                                 \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(api.handle, #symbol));                     \
  if (!api.name)                                                                                   \
    missing += std::string(missing.empty() ? "" : ", ") + #symbol;
#include "runtime/cuda/CudaSymbols.def"
  if (missing.empty())
    return llvm::Error::success();
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "CUDA driver '%s' lacks %s (moegen needs a CUDA 12 or later "
                                 "driver)",
                                 api.libraryPath.c_str(), missing.c_str());
}

/// Tries the places of CudaApi.h in order.
void *openLibrary(std::string &path, runtime::LibrarySearch &search) {
  bool set = false;
  if (void *h = search.fromEnvironment("MOEGEN_CUDA_LIB", path, set); h || set)
    return h; // when set, the only place tried
  if (void *h = search.alreadyLoaded(kLibraryNames, "a libcuda", path))
    return h;
  return search.firstOf(kLibraryNames, path);
}

} // namespace

std::string CudaApi::errorText(CUresult e) const {
  const char *name = nullptr, *text = nullptr;
  if (cuGetErrorName)
    cuGetErrorName(e, &name);
  if (cuGetErrorString)
    cuGetErrorString(e, &text);
  return runtime::driverErrorText(name, text, "CUresult " + std::to_string(e));
}

llvm::Expected<const CudaApi &> loadCudaApi() {
  return runtime::loadDriverOnce<CudaApi>([](CudaApi &api) -> llvm::Error {
    runtime::LibrarySearch search;
    api.handle = openLibrary(api.libraryPath, search);
    if (!api.handle)
      return search.notFound(
          "no CUDA driver found (libcuda.so.1, from an NVIDIA driver for CUDA 12 or later)",
          "Install the NVIDIA driver or set MOEGEN_CUDA_LIB to the path of libcuda.so.1.");
    if (llvm::Error e = resolve(api)) {
      dlclose(api.handle);
      return e;
    }
    if (CUresult e = api.cuInit(0); e != CUDA_SUCCESS)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "cuInit failed in '%s': %s",
                                     api.libraryPath.c_str(), api.errorText(e).c_str());
    api.cuDriverGetVersion(&api.driverVersion);
    return llvm::Error::success();
  });
}

} // namespace moegen::cuda
