//===- CudaApi.cpp - The CUDA driver opened at run time -------------------===//

#include "runtime/cuda/CudaApi.h"

#include <cstdlib>
#include <dlfcn.h>
#include <memory>
#include <mutex>
#include <vector>

namespace moegen::cuda {
namespace {

const char *const kLibraryNames[] = {"libcuda.so.1", "libcuda.so"};

std::string dlerrorText() {
  const char *e = dlerror();
  return e ? e : "unknown dlopen error";
}

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

/// Tries the places of CudaApi.h in order; `tried` collects one line each.
void *openLibrary(std::string &path, std::vector<std::string> &tried) {
  if (const char *env = std::getenv("MOEGEN_CUDA_LIB"); env && *env) {
    if (void *h = dlopen(env, RTLD_NOW | RTLD_LOCAL)) {
      path = env;
      return h;
    }
    tried.push_back(std::string("$MOEGEN_CUDA_LIB=") + env + ": " + dlerrorText());
    return nullptr;
  }
  tried.push_back("$MOEGEN_CUDA_LIB: not set");
  for (const char *name : kLibraryNames) {
    if (void *h = dlopen(name, RTLD_NOW | RTLD_NOLOAD)) {
      path = std::string(name) + " (already loaded)";
      return h;
    }
  }
  tried.push_back("a libcuda already loaded in the process: none");
  for (const char *name : kLibraryNames) {
    if (void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL)) {
      path = name;
      return h;
    }
    tried.push_back(std::string(name) + ": " + dlerrorText());
  }
  return nullptr;
}

} // namespace

std::string CudaApi::errorText(CUresult e) const {
  const char *name = nullptr, *text = nullptr;
  if (cuGetErrorName)
    cuGetErrorName(e, &name);
  if (cuGetErrorString)
    cuGetErrorString(e, &text);
  std::string out = name ? name : "CUresult " + std::to_string(e);
  if (text)
    out += std::string(" (") + text + ")";
  return out;
}

llvm::Expected<const CudaApi &> loadCudaApi() {
  static std::mutex m;
  static CudaApi *loaded = nullptr; // kept for the process: modules outlive callers
  std::lock_guard<std::mutex> lock(m);
  if (loaded)
    return *loaded;
  auto api = std::make_unique<CudaApi>();
  std::vector<std::string> tried;
  api->handle = openLibrary(api->libraryPath, tried);
  if (!api->handle) {
    std::string msg = "no CUDA driver found (libcuda.so.1, from an NVIDIA driver for CUDA 12 or "
                      "later); looked for:";
    for (const std::string &t : tried)
      msg += "\n  " + t;
    msg += "\nInstall the NVIDIA driver or set MOEGEN_CUDA_LIB to the path of libcuda.so.1.";
    return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
  }
  if (llvm::Error e = resolve(*api)) {
    dlclose(api->handle);
    return std::move(e);
  }
  if (CUresult e = api->cuInit(0); e != CUDA_SUCCESS)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "cuInit failed in '%s': %s",
                                   api->libraryPath.c_str(), api->errorText(e).c_str());
  api->cuDriverGetVersion(&api->driverVersion);
  loaded = api.release();
  return *loaded;
}

} // namespace moegen::cuda
