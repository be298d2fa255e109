//===- Emulator.h - Run gfx950 and sm_90a kernels (LLVM IR) on the CPU ----===//
//
// The emulator executes the LLVM IR of amdgcn-amd-amdhsa gfx950 kernels as it
// stands right before instruction selection, with wave64 semantics: a grid of
// workgroups, waves of 64 lanes, LDS per workgroup, s_barrier, the AMDGPU
// intrinsics moegen emits (MFMA, scaled conversions, buffer resources, LDS
// transpose reads, global->LDS loads) and sanitizer-style checks. NVPTX
// (sm_90a) kernels run the same way with warps of 32 lanes and the NVVM
// operations moegen emits (emulator/README.md, "NVPTX").
//
// Usage:
//   Emulator Emu;
//   if (Error E = Emu.loadIRFile("k.ll")) ...            // text or bitcode
//   uint64_t DevA = Emu.registerBuffer(HostA, BytesA);    // device address
//   auto K = Emu.getKernel("k");                          // Expected<const KernelInfo *>
//   KernargBuilder Args(**K);
//   Args.addPointer(DevA).addI32(N);
//   Error E = Emu.launch("k", {{Gx, 1, 1}, {256, 1, 1}, 0}, Args.bytes());
//
// Device addresses are virtual: each registered buffer gets its own range and
// kernels see only registered memory. An Emulator is not thread-safe; use one
// per thread.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_EMULATOR_EMULATOR_H
#define MOEGEN_EMULATOR_EMULATOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBufferRef.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace moegen::emu {

struct Dim3 {
  uint32_t X = 1, Y = 1, Z = 1;
  uint64_t count() const { return uint64_t(X) * Y * Z; }
};

struct LaunchConfig {
  Dim3 Grid;  // workgroups
  Dim3 Block; // work-items per workgroup (<= 1024)
  uint32_t DynamicLdsBytes = 0;
};

/// Which checks run. All on by default.
struct Options {
  bool CheckLdsRaces = true;
  bool CheckLdsUninit = true;
  bool CheckBarrierFences = true;
  /// Constructs whose semantics docs/gfx950-facts.md marks uncertain ([U]) are
  /// refused unless this is set: today ds_read_b64_tr_b4 ([I/U] lane layout,
  /// derived from Triton's lowering, not hardware-verified).
  bool AllowUncertainLayouts = false;
  /// Stop after this many lane-instructions per launch (0 = no limit): a guard
  /// against kernels that never terminate.
  uint64_t MaxLaneInstructions = 0;
  /// Host threads that run workgroups concurrently. With more than one, the
  /// order of global atomics (and so float atomic results) and which of
  /// several errors is reported depend on the schedule.
  unsigned Threads = 1;
};

/// One explicit kernel argument as the kernarg segment holds it.
struct KernelArg {
  uint32_t Offset = 0, Size = 0;
  bool IsPointer = false;
};

struct KernelInfo {
  std::string Name;
  std::vector<KernelArg> Args;
  uint32_t KernargBytes = 0; // explicit arguments only
  uint32_t StaticLdsBytes = 0;
};

/// Counters of the last launch.
struct Stats {
  uint64_t LaneInstructions = 0; // instructions executed, counted per lane
  uint64_t WaveOps = 0;          // wave-level operations (MFMA, ballot, ...)
  uint64_t Barriers = 0;
  uint64_t Workgroups = 0;
  uint64_t Waves = 0;
};

class Emulator {
public:
  explicit Emulator(Options Opts = Options());
  ~Emulator();
  Emulator(const Emulator &) = delete;
  Emulator &operator=(const Emulator &) = delete;

  /// Loads LLVM IR (text or bitcode) as one more module and returns its
  /// index. Kernels are decoded on first use. All modules share the memory
  /// registered with this emulator.
  llvm::Expected<unsigned> addIR(llvm::MemoryBufferRef Buffer);
  llvm::Error loadIRFile(llvm::StringRef Path);
  llvm::Error loadIR(llvm::MemoryBufferRef Buffer) { return addIR(Buffer).takeError(); }

  /// Makes Bytes bytes at Host visible to kernels; returns the device address.
  /// The memory must stay valid until unregisterBuffer().
  uint64_t registerBuffer(void *Host, uint64_t Bytes);
  llvm::Error unregisterBuffer(uint64_t DeviceAddr);
  /// Host pointer of a device address inside a registered buffer, or null.
  void *hostPointer(uint64_t DeviceAddr, uint64_t Bytes = 1) const;

  /// Decodes the kernel (once) and describes its arguments. Module = -1
  /// searches the modules from the most recently loaded one.
  llvm::Expected<const KernelInfo *> getKernel(llvm::StringRef Name, int Module = -1);
  std::vector<std::string> kernelNames(int Module = -1) const;

  /// Runs the kernel to completion. Kernarg holds the explicit arguments laid
  /// out as the AMDGPU ABI does (see KernelInfo). The first failed check or
  /// unsupported construct stops the run and is returned as the error.
  llvm::Error launch(llvm::StringRef Kernel, const LaunchConfig &Cfg,
                     llvm::ArrayRef<uint8_t> Kernarg, int Module = -1);

  const Stats &lastStats() const;
  Options &options();

private:
  struct Impl;
  std::unique_ptr<Impl> P;
};

/// Packs explicit kernel arguments at the offsets the kernel expects.
class KernargBuilder {
public:
  explicit KernargBuilder(const KernelInfo &K) : K(K), Bytes(K.KernargBytes, 0) {}
  KernargBuilder &addPointer(uint64_t DeviceAddr) { return add(&DeviceAddr, 8); }
  KernargBuilder &addI32(int32_t V) { return add(&V, 4); }
  KernargBuilder &addI64(int64_t V) { return add(&V, 8); }
  KernargBuilder &addF32(float V) { return add(&V, 4); }
  /// Adds the next argument from raw bytes (size must match the argument).
  KernargBuilder &add(const void *Data, uint32_t Size);
  llvm::ArrayRef<uint8_t> bytes() const { return Bytes; }
  bool complete() const { return Next == K.Args.size() && Ok; }

private:
  const KernelInfo &K;
  std::vector<uint8_t> Bytes;
  size_t Next = 0;
  bool Ok = true;
};

} // namespace moegen::emu

#endif
