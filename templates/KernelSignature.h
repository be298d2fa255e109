//===- KernelSignature.h - How a kernel is called ---------------*- C++ -*-===//
//
// Part of each template's launch contract, MLIR-free so that the runtime and
// the cache can plan a layer's kernels without the compiler.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEMPLATES_KERNELSIGNATURE_H
#define MOEGEN_TEMPLATES_KERNELSIGNATURE_H

#include <cstdint>
#include <string>
#include <vector>

namespace moegen {

/// How the host passes one kernel argument. Pointers are 64-bit device
/// addresses (bare pointers); scalars are 32-bit.
enum class KernelArgKind : uint8_t { Pointer, I32, F32 };

struct KernelArg {
  std::string name;
  KernelArgKind kind;
};

/// What the runtime needs to launch a kernel besides its code: the symbol,
/// the argument list in order, the fixed workgroup size, and the dynamic
/// shared memory each launch provides (sm_90a kernels above the 48 KiB of
/// static shared memory; the backend opts the kernel in).
struct KernelSignature {
  std::string symbol;
  std::vector<KernelArg> args;
  int64_t blockSize = 0;
  int64_t dynamicSharedBytes = 0;
};

} // namespace moegen

#endif // MOEGEN_TEMPLATES_KERNELSIGNATURE_H
