//===- KernelTestUtil.h - Build one template kernel for gfx950 -*- C++ -*-===//
#ifndef MOEGEN_TEST_UNIT_TEMPLATES_KERNELTESTUTIL_H
#define MOEGEN_TEST_UNIT_TEMPLATES_KERNELTESTUTIL_H

#include "compiler/target/CodeObject.h"
#include "compiler/target/CodeObjectInfo.h"
#include "emulator/Emulator.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstring>
#include <memory>

namespace moegen::test {

struct BuiltKernel {
  CodeObject code;
  CodeObjectInfo info;
  KernelResources resources; // of the kernel named like the module
};

using KernelBodyBuilder =
    llvm::function_ref<void(mlir::ImplicitLocOpBuilder &, mlir::gpu::GPUModuleOp)>;

/// Builds a gpu.module @symbol for gfx950 with `build`, runs the moegen
/// gfx950 lowering and emits the code object, as the compiler does for each
/// kernel of a layer.
llvm::Expected<BuiltKernel> compileKernel(llvm::StringRef symbol, KernelBodyBuilder build);

/// Number of lines of `isa` whose instruction mnemonic is `mnemonic`.
int countInstructions(llvm::StringRef isa, llvm::StringRef mnemonic);

/// An emulator holding the kernel's optimized LLVM IR.
std::unique_ptr<emu::Emulator> loadOnEmulator(const BuiltKernel &k);

/// A host vector registered as device memory while the object lives.
template <class T> struct DeviceBuffer {
  DeviceBuffer(emu::Emulator &e, std::vector<T> init) : e(e), host(std::move(init)) {
    addr = e.registerBuffer(host.data(), host.size() * sizeof(T));
  }
  ~DeviceBuffer() { llvm::consumeError(e.unregisterBuffer(addr)); }
  emu::Emulator &e;
  std::vector<T> host;
  uint64_t addr;
};

/// Launches `kernel` with pointers and 32-bit scalars given in order.
class Launch {
public:
  Launch &ptr(uint64_t addr) { return raw(&addr, 8); }
  Launch &i32(int32_t v) { return raw(&v, 4); }
  llvm::Error run(emu::Emulator &e, llvm::StringRef kernel, std::array<int64_t, 3> grid,
                  int64_t block);

private:
  Launch &raw(const void *p, size_t n) {
    args.emplace_back(static_cast<const uint8_t *>(p), static_cast<const uint8_t *>(p) + n);
    return *this;
  }
  std::vector<std::vector<uint8_t>> args;
};

} // namespace moegen::test

#endif // MOEGEN_TEST_UNIT_TEMPLATES_KERNELTESTUTIL_H
