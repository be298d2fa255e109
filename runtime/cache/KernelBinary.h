//===- KernelBinary.h - One compiled kernel as the runtime keeps it -*- C++ -*-===//
//
// What the cache stores per kernel and the runtime launches from: the code
// (gfx950 code object for devices, optimized LLVM bitcode for the emulator)
// and the metadata needed to launch it without the compiler (symbol,
// argument list, workgroup size, resources). MLIR-free on purpose: host
// applications include it.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_CACHE_KERNELBINARY_H
#define MOEGEN_RUNTIME_CACHE_KERNELBINARY_H

#include "compiler/spec/KernelFamily.h"

#include <cstdint>
#include <string>
#include <vector>

namespace moegen::cache {

/// How one kernel argument is passed: a 64-bit device address or a 32-bit
/// scalar (the compiler's KernelArgKind, same order).
enum class ArgKind : uint8_t { Pointer = 0, I32 = 1, F32 = 2 };

struct ArgInfo {
  std::string name;
  ArgKind kind = ArgKind::Pointer;

  bool operator==(const ArgInfo &) const = default;
};

struct KernelMeta {
  KernelFamily family = KernelFamily::Sort; // stored by name (toString)
  std::string symbol;
  std::vector<ArgInfo> args;
  int64_t blockSize = 0;
  /// Bytes of dynamic shared memory each launch provides (KernelSignature).
  int64_t dynamicSharedBytes = 0;
  // Resources, as the code object's metadata note records them.
  int64_t vgprs = 0, agprs = 0, sgprs = 0;
  int64_t ldsBytes = 0, scratchBytes = 0;
  int64_t vgprSpills = 0, sgprSpills = 0;
  int64_t kernargBytes = 0, codeBytes = 0;
  double compileMs = 0;
  /// What it was compiled from, for `moegen cache ls`: "<layer> for <target>".
  std::string description;

  bool operator==(const KernelMeta &) const = default;
};

struct KernelBinary {
  KernelMeta meta;
  std::vector<uint8_t> hsaco;
  std::vector<uint8_t> bitcode;

  bool operator==(const KernelBinary &) const = default;
};

} // namespace moegen::cache

#endif // MOEGEN_RUNTIME_CACHE_KERNELBINARY_H
