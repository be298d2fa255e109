//===- Backend.h - The device interface the runtime launches kernels on ----===//
//
// One interface for every way moegen runs a compiled kernel: the HIP backend
// (a real gfx950) and the emu backend (the CPU emulator). A backend loads a
// code bundle, resolves kernels by symbol, manages device memory and
// launches with a packed kernarg segment.
//
//   auto B = createEmuBackend();
//   auto Mod = B->loadCode(Bundle);              // CodeBundle{Hsaco, Bitcode}
//   auto K = B->getKernel(*Mod, "moe_sort");
//   auto Buf = B->allocate(Bytes);
//   B->copyToDevice(*Buf, Host, Bytes);
//   B->launch(*K, {Gx, 1, 1}, {256, 1, 1}, /*DynamicLds=*/0, Kernarg);
//   B->synchronize();
//
// Timing: events recorded in the launch order, on the same stream
// (createEvent/recordEvent/elapsedMs). A backend that cannot time (emu: the
// emulator's wall time says nothing about a GPU) returns an error saying so.
//
// Resources: kernelResources(K) is what a loaded kernel uses as the driver
// compiled it for the device (registers, local memory: spills and stack),
// for code whose registers are allocated at load time (PTX). Backends that
// load finished code objects (hip, emu) leave it to the code object's
// metadata and say so.
//
// Graphs: the launches and memsets issued while captureGraph's callback runs
// are recorded instead of run, and launchGraph submits them again, all at
// once, with the arguments they were recorded with:
//
//   auto G = B->captureGraph([&] { return Layer->run(Args); });
//   B->launchGraph(*G);                          // as often as wanted
//   B->destroyGraph(*G);
//
// While recording, a backend refuses (with an error naming the call) what a
// graph cannot hold or what would wait for the device: copies, synchronize,
// allocations, frees, loading code, recording and waiting for events. A
// backend without graphs (emu) says so.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_BACKEND_BACKEND_H
#define MOEGEN_RUNTIME_BACKEND_BACKEND_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace moegen::runtime {

/// What the compiler produces for one kernel family: the linked code object
/// for real devices and the optimized LLVM bitcode (what the emulator runs).
struct CodeBundle {
  std::vector<uint8_t> Hsaco;
  std::vector<uint8_t> Bitcode;
  std::string Name; // for messages
};

struct Dim3 {
  uint32_t X = 1, Y = 1, Z = 1;
};

/// A device address. 0 is never a valid allocation.
using DevicePtr = uint64_t;

/// Opaque handles, valid for the lifetime of the backend that returned them.
struct ModuleHandle {
  uint32_t Id = ~0u;
};
struct EventHandle {
  uint32_t Id = ~0u;
};
struct GraphHandle {
  uint32_t Id = ~0u;
};
struct KernelHandle {
  uint32_t Module = ~0u;
  std::string Symbol;
  uint32_t KernargBytes = 0; // explicit arguments, when the backend knows
};

/// What one loaded kernel uses, per the driver (Backend::kernelResources).
struct KernelResources {
  int64_t registers = 0;          // per thread
  int64_t localBytes = 0;         // local memory per thread: register spills and stack frame
  int64_t staticSharedBytes = 0;  // per block, declared by the kernel
  int64_t maxThreadsPerBlock = 0; // the largest block these registers allow
};

class Backend {
public:
  virtual ~Backend();
  /// "hip", "emu", ...
  virtual llvm::StringRef name() const = 0;

  virtual llvm::Expected<ModuleHandle> loadCode(const CodeBundle &Code) = 0;
  virtual llvm::Expected<KernelHandle> getKernel(ModuleHandle M, llvm::StringRef Symbol) = 0;

  virtual llvm::Expected<DevicePtr> allocate(size_t Bytes) = 0;
  virtual llvm::Error free(DevicePtr P) = 0;
  virtual llvm::Error copyToDevice(DevicePtr Dst, const void *Src, size_t Bytes) = 0;
  virtual llvm::Error copyToHost(void *Dst, DevicePtr Src, size_t Bytes) = 0;
  virtual llvm::Error memset(DevicePtr Dst, uint8_t Value, size_t Bytes) = 0;

  /// Kernarg: the explicit arguments packed as the AMDGPU kernel ABI lays
  /// them out (each at its natural alignment, in order).
  virtual llvm::Error launch(const KernelHandle &K, Dim3 Grid, Dim3 Block, uint32_t DynamicLdsBytes,
                             llvm::ArrayRef<uint8_t> Kernarg) = 0;
  /// Waits for every launch; returns the first error a launch produced.
  virtual llvm::Error synchronize() = 0;

  /// What `K` uses as the device's compiler built it. The default says that
  /// the backend does not report it.
  virtual llvm::Expected<KernelResources> kernelResources(const KernelHandle &K);

  /// An event for timing, destroyed with the backend. The default says that
  /// the backend cannot time.
  virtual llvm::Expected<EventHandle> createEvent();
  /// Records `E` after every launch so far.
  virtual llvm::Error recordEvent(EventHandle E);
  /// Milliseconds of device time from `Start` to `End`, both recorded; waits
  /// for `End`.
  virtual llvm::Expected<float> elapsedMs(EventHandle Start, EventHandle End);

  /// Records the work `Record` issues on this backend into a graph (nothing
  /// runs), ready to launch. The capture ends whatever `Record` returns; its
  /// error is returned and no graph is kept. Captures do not nest. The
  /// default says that the backend has no graphs.
  virtual llvm::Expected<GraphHandle> captureGraph(llvm::function_ref<llvm::Error()> Record);
  /// Submits the recorded work once, in order, after every launch so far.
  virtual llvm::Error launchGraph(GraphHandle G);
  /// Frees a graph (graphs left are freed with the backend).
  virtual llvm::Error destroyGraph(GraphHandle G);
  /// True while captureGraph records.
  virtual bool capturing() const { return false; }
};

/// Two events to time the work recorded between them.
struct EventPair {
  EventHandle Start, End;
};
llvm::Expected<EventPair> createEventPair(Backend &B);
/// Milliseconds of each of `Replays` launches of `G`, each between E.Start and
/// E.End: how a host application that replays a captured graph sees it.
llvm::Expected<std::vector<float>> timeGraphReplays(Backend &B, GraphHandle G, EventPair E,
                                                    int Replays);

/// Packs kernel arguments with the AMDGPU ABI alignment rule.
class KernargPacker {
public:
  template <class T> KernargPacker &add(const T &V) { return addBytes(&V, sizeof(T), alignof(T)); }
  KernargPacker &addBytes(const void *Data, size_t Size, size_t Align);
  llvm::ArrayRef<uint8_t> bytes() const { return Bytes; }

private:
  std::vector<uint8_t> Bytes;
};

} // namespace moegen::runtime

#endif
