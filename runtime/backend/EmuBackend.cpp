//===- EmuBackend.cpp -----------------------------------------------------===//
#include "runtime/backend/EmuBackend.h"

#include "llvm/Support/MemoryBuffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>

using namespace llvm;

namespace moegen::runtime {

namespace {
class EmuBackend final : public Backend {
public:
  explicit EmuBackend(emu::Options O) : Emu(O) {}
  ~EmuBackend() override {
    for (auto &[Addr, A] : Allocations) {
      consumeError(Emu.unregisterBuffer(Addr));
      release(A);
    }
  }

  StringRef name() const override { return "emu"; }

  Expected<ModuleHandle> loadCode(const CodeBundle &Code) override {
    if (Code.Bitcode.empty())
      return createStringError(inconvertibleErrorCode(),
                               "emu backend: code bundle '%s' has no LLVM bitcode",
                               Code.Name.c_str());
    MemoryBufferRef Buf(
        StringRef(reinterpret_cast<const char *>(Code.Bitcode.data()), Code.Bitcode.size()),
        // Both arms StringRef: a std::string arm would make the buffer name a
        // temporary copy that dies before the module is parsed.
        Code.Name.empty() ? StringRef("bundle") : StringRef(Code.Name));
    auto Index = Emu.addIR(Buf);
    if (!Index)
      return Index.takeError();
    return ModuleHandle{*Index};
  }

  Expected<KernelHandle> getKernel(ModuleHandle M, StringRef Symbol) override {
    // Code objects name kernel descriptors "<name>.kd"; accept both.
    StringRef Name = Symbol.ends_with(".kd") ? Symbol.drop_back(3) : Symbol;
    auto K = Emu.getKernel(Name, int(M.Id));
    if (!K)
      return K.takeError();
    return KernelHandle{M.Id, Name.str(), (*K)->KernargBytes};
  }

  Expected<DevicePtr> allocate(size_t Bytes) override {
    size_t Rounded = (std::max<size_t>(Bytes, 1) + 255) & ~size_t(255);
    Allocation A;
    A.Bytes = Rounded;
    if (Rounded >= MapThreshold) {
      // Fresh anonymous pages read as zero and cost no memory until written:
      // a large buffer of which a kernel touches a part (the weights of the
      // routed experts) stays small.
      void *P =
          ::mmap(nullptr, Rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      A.Host = P == MAP_FAILED ? nullptr : P;
      A.Mapped = true;
    } else {
      A.Host = std::aligned_alloc(256, Rounded);
      if (A.Host)
        std::memset(A.Host, 0, Rounded);
    }
    if (!A.Host)
      return createStringError(std::errc::not_enough_memory,
                               "emu backend: cannot allocate %zu bytes", Bytes);
    DevicePtr Addr = Emu.registerBuffer(A.Host, Bytes);
    Allocations[Addr] = A;
    return Addr;
  }

  Error free(DevicePtr P) override {
    auto It = Allocations.find(P);
    if (It == Allocations.end())
      return createStringError(inconvertibleErrorCode(),
                               "emu backend: free of 0x%llx, which is not an allocation",
                               (unsigned long long)P);
    if (Error E = Emu.unregisterBuffer(P))
      return E;
    release(It->second);
    Allocations.erase(It);
    return Error::success();
  }

  Error copyToDevice(DevicePtr Dst, const void *Src, size_t Bytes) override {
    void *H = Emu.hostPointer(Dst, Bytes);
    if (!H)
      return rangeError("copy to device", Dst, Bytes);
    std::memcpy(H, Src, Bytes);
    return Error::success();
  }

  Error copyToHost(void *Dst, DevicePtr Src, size_t Bytes) override {
    void *H = Emu.hostPointer(Src, Bytes);
    if (!H)
      return rangeError("copy to host", Src, Bytes);
    std::memcpy(Dst, H, Bytes);
    return Error::success();
  }

  Error memset(DevicePtr Dst, uint8_t Value, size_t Bytes) override {
    void *H = Emu.hostPointer(Dst, Bytes);
    if (!H)
      return rangeError("memset", Dst, Bytes);
    if (Value == 0 && Bytes >= MapThreshold && isMapped(Dst)) {
      // Zeroing whole pages of an anonymous mapping: hand them back instead
      // of writing them (they read as zero again, and cost nothing).
      auto *B = static_cast<uint8_t *>(H);
      size_t Page = size_t(::sysconf(_SC_PAGESIZE));
      uintptr_t Lo = (reinterpret_cast<uintptr_t>(B) + Page - 1) & ~(Page - 1);
      uintptr_t Hi = (reinterpret_cast<uintptr_t>(B) + Bytes) & ~(Page - 1);
      if (Hi > Lo && ::madvise(reinterpret_cast<void *>(Lo), Hi - Lo, MADV_DONTNEED) == 0) {
        std::memset(B, 0, Lo - reinterpret_cast<uintptr_t>(B));
        std::memset(reinterpret_cast<void *>(Hi), 0, reinterpret_cast<uintptr_t>(B) + Bytes - Hi);
        return Error::success();
      }
    }
    std::memset(H, Value, Bytes);
    return Error::success();
  }

  Error launch(const KernelHandle &K, Dim3 Grid, Dim3 Block, uint32_t DynamicLdsBytes,
               ArrayRef<uint8_t> Kernarg) override {
    emu::LaunchConfig Cfg;
    Cfg.Grid = {Grid.X, Grid.Y, Grid.Z};
    Cfg.Block = {Block.X, Block.Y, Block.Z};
    Cfg.DynamicLdsBytes = DynamicLdsBytes;
    Error E = Emu.launch(K.Symbol, Cfg, Kernarg, int(K.Module));
    if (!E)
      return Error::success();
    std::string Msg = toString(std::move(E));
    if (Pending.empty())
      Pending = Msg;
    return createStringError(inconvertibleErrorCode(), Msg);
  }

  Error synchronize() override {
    if (Pending.empty())
      return Error::success();
    std::string Msg = std::move(Pending);
    Pending.clear();
    return createStringError(inconvertibleErrorCode(), Msg);
  }

  // The emulator's wall time says nothing about a GPU's: no events.
  Expected<EventHandle> createEvent() override {
    return createStringError(std::errc::not_supported,
                             "emu backend: cannot time kernels (it runs them on the CPU "
                             "emulator); time on the cuda or hip backend");
  }

  emu::Emulator Emu;

private:
  static Error rangeError(const char *What, DevicePtr P, size_t Bytes) {
    return createStringError(inconvertibleErrorCode(),
                             "emu backend: %s of %zu bytes at 0x%llx is outside every allocation",
                             What, Bytes, (unsigned long long)P);
  }

  struct Allocation {
    void *Host = nullptr;
    size_t Bytes = 0;
    bool Mapped = false; // an anonymous mapping (large), else aligned_alloc
  };
  static constexpr size_t MapThreshold = size_t(1) << 20;

  static void release(const Allocation &A) {
    if (A.Mapped)
      ::munmap(A.Host, A.Bytes);
    else
      std::free(A.Host);
  }
  /// Whether Dst lies in an allocation that is an anonymous mapping.
  bool isMapped(DevicePtr Dst) const {
    auto It = Allocations.upper_bound(Dst);
    if (It == Allocations.begin())
      return false;
    --It;
    return It->second.Mapped && Dst - It->first < It->second.Bytes;
  }

  std::map<DevicePtr, Allocation> Allocations;
  std::string Pending;
};
} // namespace

std::unique_ptr<Backend> createEmuBackend(emu::Options Opts) {
  return std::make_unique<EmuBackend>(Opts);
}

emu::Emulator *emulatorOf(Backend &B) {
  if (auto *E = dynamic_cast<EmuBackend *>(&B))
    return &E->Emu;
  return nullptr;
}

} // namespace moegen::runtime
