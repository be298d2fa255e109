//===- HipApi.cpp - libamdhip64 opened at run time ------------------------===//

#include "runtime/hip/HipApi.h"

#include "runtime/backend/DriverLibrary.h"

#include <cstdlib>
#include <dlfcn.h>

namespace moegen::hip {
namespace {

const std::string kLibraryNames[] = {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6"};

/// Resolves every symbol of HipSymbols.def; the missing required ones are
/// listed in the error.
llvm::Error resolve(HipApi &api) {
  std::string missing;
#define MOEGEN_HIP_RESOLVE(name, required)                                                         \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(api.handle, #name));                       \
  if (!api.name && required)                                                                       \
    missing += std::string(missing.empty() ? "" : ", ") + #name;
#define MOEGEN_HIP_REQUIRED(name, params) MOEGEN_HIP_RESOLVE(name, true)
#define MOEGEN_HIP_OPTIONAL(name, params) MOEGEN_HIP_RESOLVE(name, false)
#define MOEGEN_HIP_STRING(name, params) MOEGEN_HIP_RESOLVE(name, true)
#include "runtime/hip/HipSymbols.def"
#undef MOEGEN_HIP_RESOLVE
  if (missing.empty())
    return llvm::Error::success();
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "HIP runtime '%s' lacks %s (moegen needs HIP 6.0 or later)",
                                 api.libraryPath.c_str(), missing.c_str());
}

/// Tries the places of HipApi.h in order.
void *openLibrary(std::string &path, runtime::LibrarySearch &search) {
  if (void *h = search.alreadyLoaded(kLibraryNames, "a libamdhip64", path))
    return h;
  bool set = false;
  if (void *h = search.fromEnvironment("MOEGEN_HIP_LIB", path, set))
    return h;
  std::vector<std::string> candidates(std::begin(kLibraryNames), std::end(kLibraryNames));
  if (const char *rocm = std::getenv("ROCM_PATH"); rocm && *rocm)
    candidates.push_back(std::string(rocm) + "/lib/libamdhip64.so");
  candidates.push_back("/opt/rocm/lib/libamdhip64.so");
  return search.firstOf(candidates, path);
}

} // namespace

std::string HipApi::errorText(hipError_t e) const {
  const char *name = hipGetErrorName ? hipGetErrorName(e) : nullptr;
  const char *text = hipGetErrorString ? hipGetErrorString(e) : nullptr;
  return runtime::driverErrorText(name, text, "hipError " + std::to_string(e));
}

llvm::Expected<const HipApi &> loadHipApi() {
  return runtime::loadDriverOnce<HipApi>([](HipApi &api) -> llvm::Error {
    runtime::LibrarySearch search;
    api.handle = openLibrary(api.libraryPath, search);
    if (!api.handle)
      return search.notFound("no HIP runtime found (libamdhip64, from ROCm 6.0 or later)",
                             "Install ROCm or set MOEGEN_HIP_LIB to the path of libamdhip64.so.");
    if (llvm::Error e = resolve(api)) {
      dlclose(api.handle);
      return e;
    }
    if (hipError_t e = api.hipInit(0); e != hipSuccess)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "hipInit failed in '%s': %s",
                                     api.libraryPath.c_str(), api.errorText(e).c_str());
    return llvm::Error::success();
  });
}

} // namespace moegen::hip
