//===- Backends.h - Creating a backend by name ------------------*- C++ -*-===//
#ifndef MOEGEN_RUNTIME_API_BACKENDS_H
#define MOEGEN_RUNTIME_API_BACKENDS_H

#include "runtime/backend/Backend.h"

namespace moegen::runtime {

/// "emu" (the gfx950 emulator on the CPU), "hip" (an AMD GPU through
/// libamdhip64, first gfx950 device, own stream) or "cuda" (an NVIDIA GPU
/// through libcuda, first sm_90a device, own stream).
llvm::Expected<std::unique_ptr<Backend>> createBackend(llvm::StringRef name);

} // namespace moegen::runtime

#endif // MOEGEN_RUNTIME_API_BACKENDS_H
