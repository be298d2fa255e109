//===- EmuBackend.h - The backend that runs kernels on the gfx950 emulator --===//
#ifndef MOEGEN_RUNTIME_BACKEND_EMUBACKEND_H
#define MOEGEN_RUNTIME_BACKEND_EMUBACKEND_H

#include "runtime/backend/Backend.h"

#include "emulator/Emulator.h"

namespace moegen::runtime {

/// Runs the bundle's LLVM bitcode on the CPU emulator. Launches are
/// synchronous; a failed check is returned by launch() and by the next
/// synchronize(). Device memory is host memory registered with the emulator.
std::unique_ptr<Backend> createEmuBackend(emu::Options Opts = emu::Options());

/// The emulator behind an emu backend (statistics, options); null for any
/// other backend.
emu::Emulator *emulatorOf(Backend &B);

} // namespace moegen::runtime

#endif
