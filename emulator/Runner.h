//===- Runner.h - One kernel launch (internal) ------------------------------===//
#ifndef MOEGEN_EMULATOR_RUNNER_H
#define MOEGEN_EMULATOR_RUNNER_H

#include "emulator/Emulator.h"
#include "emulator/Exec.h"
#include "emulator/Handlers.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Compiler.h"

#include <atomic>
#include <mutex>
#include <optional>

namespace moegen::emu {

/// Where a buffer access lies with respect to num_records (Exec.cpp).
enum class BufferRange { In, Out, Straddles };

struct Runner {
  Runner(const Program &P, const Options &O, GlobalMemory &Mem, Stats &St, const LaunchConfig &Cfg)
      : P(P), O(O), Mem(Mem), St(St), Cfg(Cfg) {}

  llvm::Error run(llvm::ArrayRef<uint8_t> Kernarg);

  /// Records the first error of the launch. Always returns false.
  bool fail(const Inst &I, const Workgroup *WG, const Wave *W, int Lane, const std::string &Msg,
            std::optional<uint64_t> Addr = std::nullopt);
  bool fail(const Inst &I, LaneCtx &C, const std::string &Msg,
            std::optional<uint64_t> Addr = std::nullopt) {
    return fail(I, C.WG, C.W, int(C.Lane), Msg, Addr);
  }

  // Address resolution with checks; null after fail(). The common case
  // (an address inside a registered buffer, an in-range raw buffer access)
  // is inline; everything else, errors included, is the *Slow path.
  LLVM_ATTRIBUTE_ALWAYS_INLINE uint8_t *global(LaneCtx &C, const Inst &I, uint64_t Addr,
                                               uint32_t Bytes, bool Write) {
    const uint64_t Aperture = Addr & ApertureMask;
    if (Aperture != LdsAperture && Aperture != PrivAperture)
      if (uint8_t *H = Mem.translate(Addr, Bytes, C.WG->MemHint))
        return H;
    return globalSlow(C, I, Addr, Bytes, Write);
  }
  /// With Uninit, a read of never-written bytes sets *Uninit instead of
  /// failing (the caller decides what such bytes may affect).
  uint8_t *lds(const Inst &I, Workgroup &WG, Wave &W, unsigned Lane, uint32_t Off, uint32_t Bytes,
               bool Write, bool *Uninit = nullptr);
  uint8_t *priv(LaneCtx &C, const Inst &I, uint32_t Off, uint32_t Bytes);
  /// A read of [Off, Off + Bytes) through the async proxy (a wgmma operand)
  /// by warp W: every byte written there through the generic proxy must
  /// have been fenced (fence.proxy.async) by its writer after the write,
  /// and by a barrier before this read where the writer is another warp.
  bool asyncProxyRead(const Inst &I, Workgroup &WG, Wave &W, uint32_t Off, uint32_t Bytes);
  /// Generic pointer of address space AS held at frame offset Slot.
  LLVM_ATTRIBUTE_ALWAYS_INLINE uint8_t *resolve(LaneCtx &C, const Inst &I, unsigned AS,
                                                uint32_t Slot, uint32_t Bytes, bool Write) {
    switch (AS) {
    case ASLds:
      return lds(I, *C.WG, *C.W, C.Lane, rd<uint32_t>(C.F, Slot), Bytes, Write);
    case ASPriv:
      return priv(C, I, rd<uint32_t>(C.F, Slot), Bytes);
    default:
      return global(C, I, rd<uint64_t>(C.F, Slot), Bytes, Write);
    }
  }
  /// Buffer-resource access with the range rule: out-of-range loads read 0,
  /// stores are dropped, an access of a dword or more partly in range is
  /// refused. Data is the register image (load destination / store source).
  /// Returns false after fail().
  LLVM_ATTRIBUTE_ALWAYS_INLINE bool bufferAccess(LaneCtx &C, const Inst &I, const uint8_t *Rsrc,
                                                 uint32_t Offset, uint32_t Bytes, uint8_t *Data,
                                                 bool Write) {
    uint64_t Base;
    BufferRange Range;
    if (!rawBuffer(C, I, Rsrc, Offset, Bytes, Base, Range))
      return false;
    // Out of range: loads read 0, stores are dropped.
    if (Range == BufferRange::Out) {
      if (!Write)
        std::memset(Data, 0, Bytes);
      return true;
    }
    uint8_t *H = global(C, I, Base + Offset, Bytes, Write);
    if (!H)
      return false;
    if (Write)
      moveBytes(H, Data, Bytes);
    else
      moveBytes(Data, H, Bytes);
    return true;
  }
  /// For atomics on a buffer: the host pointer if in range; out of range, a
  /// zeroed scratch word (the atomic is dropped and returns 0); null after
  /// fail().
  uint8_t *bufferAtomic(LaneCtx &C, const Inst &I, const uint8_t *Rsrc, uint32_t Offset,
                        uint32_t Bytes);
  /// The resource's base and num_records of a raw (stride 0) buffer, and
  /// where the access lies; false after fail().
  LLVM_ATTRIBUTE_ALWAYS_INLINE bool rawBuffer(LaneCtx &C, const Inst &I, const uint8_t *Rsrc,
                                              uint32_t Offset, uint32_t Bytes, uint64_t &Base,
                                              BufferRange &Range) {
    const uint32_t W1 = rd<uint32_t>(Rsrc, 4), NumRecords = rd<uint32_t>(Rsrc, 8);
    if ((W1 >> 16 & 0x3FFF) == 0 && uint64_t(Offset) + Bytes <= NumRecords) {
      Base = rsrcBase(Rsrc);
      Range = BufferRange::In;
      return true;
    }
    return rawBufferSlow(C, I, Rsrc, Offset, Bytes, Base, Range);
  }

  LaneCtx laneCtx(Workgroup &WG, Wave &W, unsigned Lane);
  /// The work-item id of a lane in dimension Dim (0..2), computed on demand:
  /// few instructions need it, and the divisions are not free.
  uint32_t workItemId(const LaneCtx &C, unsigned Dim) const;
  uint8_t *frame(const Wave &W, unsigned Lane) const {
    return const_cast<uint8_t *>(W.Frames.data()) + size_t(Lane) * P.FrameBytes;
  }

  const Program &P;
  const Options &O;
  GlobalMemory &Mem;
  Stats &St;
  LaunchConfig Cfg;
  uint32_t LdsBytes = 0;
  uint64_t ImplicitArgs = 0, DispatchPacket = 0, Kernargs = 0;
  std::vector<uint8_t> Template;
  std::atomic<bool> Failed{false};
  std::mutex FailLock;
  std::string Message;
  /// Serializes global-memory atomics when workgroups run on several threads.
  std::mutex AtomicLock;
  bool Concurrent = false;

private:
  uint8_t *globalSlow(LaneCtx &C, const Inst &I, uint64_t Addr, uint32_t Bytes, bool Write);
  bool rawBufferSlow(LaneCtx &C, const Inst &I, const uint8_t *Rsrc, uint32_t Offset,
                     uint32_t Bytes, uint64_t &Base, BufferRange &Range);
  enum class Stop { Barrier, Done, Reconverged, Split, Error };
  Stop runGroup(Workgroup &WG, Wave &W, uint64_t Mask);
  void splitPath(Wave &W, uint32_t Join,
                 llvm::SmallVectorImpl<std::pair<uint32_t, uint64_t>> &Targets);
  bool runWave(Workgroup &WG, Wave &W);
  bool runWorkgroup(Workgroup &WG);
  bool runOne(Workgroup &WG, uint64_t Linear, unsigned NumWaves, uint64_t WorkItems);
  bool releaseBarrier(Workgroup &WG);
  bool releaseNvvmBarriers(Workgroup &WG);
  /// The phi moves of an edge for the lanes of Mask (frames at Base + lane *
  /// Stride).
  void takeEdge(uint32_t EdgeIdx, uint8_t *Base, size_t Stride, uint64_t Mask) const;
};

inline uint8_t *WaveCtx::frame(unsigned Lane) const { return R->frame(*W, Lane); }

/// Holds the atomic lock for global-memory atomics when the launch runs
/// workgroups concurrently.
class AtomicGuard {
public:
  AtomicGuard(Runner &R, bool Global) {
    if (R.Concurrent && Global) {
      Lock = &R.AtomicLock;
      Lock->lock();
    }
  }
  ~AtomicGuard() {
    if (Lock)
      Lock->unlock();
  }

private:
  std::mutex *Lock = nullptr;
};

} // namespace moegen::emu

#endif
