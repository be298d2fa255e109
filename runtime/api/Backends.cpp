//===- Backends.cpp - Creating a backend by name --------------------------===//

#include "runtime/api/Backends.h"

#include "runtime/backend/EmuBackend.h"
#include "runtime/cuda/CudaBackend.h"
#include "runtime/hip/HipBackend.h"

namespace moegen::runtime {

llvm::Expected<std::unique_ptr<Backend>> createBackend(llvm::StringRef name) {
  if (name == "emu")
    return createEmuBackend();
  if (name == "hip")
    return createHipBackend();
  if (name == "cuda")
    return createCudaBackend();
  return llvm::createStringError(std::errc::invalid_argument,
                                 "unknown backend '%s' (available: emu, hip, cuda)",
                                 name.str().c_str());
}

} // namespace moegen::runtime
