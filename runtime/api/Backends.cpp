//===- Backends.cpp - Creating a backend by name --------------------------===//

#include "runtime/api/Backends.h"

#ifdef MOEGEN_HAVE_EMU_BACKEND
#include "runtime/backend/EmuBackend.h"
#endif
#include "runtime/cuda/CudaBackend.h"
#include "runtime/hip/HipBackend.h"

namespace moegen::runtime {

llvm::Expected<std::unique_ptr<Backend>> createBackend(llvm::StringRef name) {
  if (name == "emu")
#ifdef MOEGEN_HAVE_EMU_BACKEND
    return createEmuBackend();
#else
    return llvm::createStringError(std::errc::not_supported,
                                   "backend 'emu' is not part of this build (the static device "
                                   "build leaves the emulator out)");
#endif
  if (name == "hip")
    return createHipBackend();
  if (name == "cuda")
    return createCudaBackend();
  return llvm::createStringError(std::errc::invalid_argument,
                                 "unknown backend '%s' (available: emu, hip, cuda)",
                                 name.str().c_str());
}

} // namespace moegen::runtime
