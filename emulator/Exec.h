//===- Exec.h - Execution state of a launch (internal) ---------------------===//
#ifndef MOEGEN_EMULATOR_EXEC_H
#define MOEGEN_EMULATOR_EXEC_H

#include "emulator/GlobalMemory.h"
#include "emulator/LdsShadow.h"
#include "emulator/Program.h"

#include <array>
#include <cstring>
#include <string>
#include <vector>

namespace moegen::emu {

struct Options;

template <class T> inline T rd(const uint8_t *F, uint32_t Off) {
  T V;
  std::memcpy(&V, F + Off, sizeof(T));
  return V;
}
template <class T> inline void wr(uint8_t *F, uint32_t Off, T V) {
  std::memcpy(F + Off, &V, sizeof(T));
}
/// The 48-bit base address of a buffer resource (V#).
inline uint64_t rsrcBase(const uint8_t *Rsrc) {
  return uint64_t(rd<uint32_t>(Rsrc, 0)) | (uint64_t(rd<uint32_t>(Rsrc, 4) & 0xFFFF) << 32);
}

template <unsigned N> inline void moveFixed(uint8_t *Dst, const uint8_t *Src) {
  uint8_t T[N];
  std::memcpy(T, Src, N);
  std::memcpy(Dst, T, N);
}

/// memmove of frame bytes: the common power-of-two sizes without a library call.
inline void moveBytes(uint8_t *Dst, const uint8_t *Src, size_t N) {
  switch (N) {
  case 1:
    *Dst = *Src;
    return;
  case 2:
    return moveFixed<2>(Dst, Src);
  case 4:
    return moveFixed<4>(Dst, Src);
  case 8:
    return moveFixed<8>(Dst, Src);
  case 16:
    return moveFixed<16>(Dst, Src);
  case 32:
    return moveFixed<32>(Dst, Src);
  case 64:
    return moveFixed<64>(Dst, Src);
  default:
    std::memmove(Dst, Src, N);
  }
}

/// One entry of a wave's reconvergence stack: the lanes of Mask run from Pc
/// until they reach Rpc, where the entry below waits for them.
struct PathEntry {
  uint32_t Pc, Rpc;
  uint64_t Mask;
};

/// A cp.async global -> shared copy in flight (NVPTX): the data moves when a
/// wait for its group completes it.
struct AsyncCopy {
  uint32_t Lane, Group;
  uint32_t DstOff;          // shared-memory offset
  uint64_t SrcAddr;         // global address
  uint32_t Bytes, SrcBytes; // copied, of which read from SrcAddr (the rest zero)
  const Inst *I;
};

/// Shared memory a wgmma reads (NVPTX): read at issue here, but on the GPU
/// the tensor cores may read it until a wgmma.wait_group releases its group,
/// so it stays read (for the race check) and must not be written until then.
struct WgmmaRead {
  uint32_t Group; // the warp's committed groups at issue
  uint32_t Off, Bytes;
  const Inst *I; // the wgmma
};

/// A fence.proxy.async (NVPTX) of the lanes in Mask: their shared-memory
/// writes through the generic proxy before it (ProxySeq up to Seq) become
/// visible to the async proxy, to other warps once a barrier follows.
struct ProxyFence {
  uint64_t Seq, Mask;
  uint32_t Epoch;
};

struct Wave {
  unsigned Index = 0;
  unsigned NumLanes = 0;        // lanes that exist (the last wave may be partial)
  std::vector<uint8_t> Frames;  // NumLanes * FrameBytes
  std::vector<uint8_t> Private; // NumLanes * PrivateBytes
  /// The paths still to run, innermost last; the wave has finished when it
  /// is empty. The top entry's Pc is the barrier while the wave waits at one.
  std::vector<PathEntry> Paths;
  uint64_t DoneLanes = 0; // lanes that returned
  bool AtBarrier = false;
  uint64_t allLanes() const { return NumLanes == 64 ? ~0ull : (1ull << NumLanes) - 1; }
  uint64_t liveLanes() const { return allLanes() & ~DoneLanes; }
  uint32_t Regs = 0; // NVPTX: registers a thread (setmaxnreg moves them)
  // Fence bookkeeping per lane for the barrier/fence check (docs/gfx950-facts.md §7.1).
  std::array<uint64_t, 64> LastLdsWrite{}, LastRelease{};
  std::array<uint32_t, 64> AcquireEpoch{};
  std::vector<uint8_t> ReleasedEpoch; // epoch -> every LDS write released
  // NVPTX cp.async: copies issued and not yet waited for, oldest first, and
  // each lane's committed groups (a copy belongs to group AsyncGroups[lane]
  // at its issue: committed once that count passes it).
  std::vector<AsyncCopy> AsyncCopies;
  std::array<uint32_t, 64> AsyncGroups{};
  // NVPTX wgmma: the shared memory the warp's warpgroup MMAs read and that
  // their wgmma.wait_group has not yet released, and the groups committed.
  std::vector<WgmmaRead> WgmmaReads;
  uint32_t WgmmaGroups = 0;
  std::vector<ProxyFence> ProxyFences; // in issue order
};

struct Runner;

struct Workgroup {
  std::array<uint32_t, 3> Id{};
  // Per-host-thread state: counters and the buffer-lookup hint.
  uint64_t LaneInsts = 0, WaveOps = 0, Barriers = 0, Count = 0, WavesRun = 0;
  uint64_t Tick = 1; // orders LDS writes and release fences within a lane
  size_t MemHint = ~size_t(0);
  std::vector<uint8_t> Lds;
  LdsShadow Shadow;
  // Program::UsesAsyncProxy: each shared-memory byte's last generic-proxy
  // write (ProxySeq at it, 0: none) and its writer (wave x 64 + lane).
  std::vector<uint64_t> GenericWriteSeq;
  std::vector<uint16_t> GenericWriter;
  uint64_t ProxySeq = 0;
  uint32_t Epoch = 1; // barriers completed + 1
  // NVVM named barriers: the threads that arrived at each (bar.arrive)
  // without waiting, in its current phase, and the thread count they named.
  std::array<uint32_t, 16> Arrived{}, ArriveCount{};
  // setmaxnreg: registers released by .dec and not yet taken by .inc.
  uint64_t RegPool = 0;
  std::vector<Wave> Waves;
};

/// What a lane-level handler sees.
struct LaneCtx {
  Runner *R = nullptr;
  Workgroup *WG = nullptr;
  Wave *W = nullptr;
  unsigned Lane = 0; // lane in the wave
  uint8_t *F = nullptr;
  uint64_t Seq = 0; // per-lane event counter for the fence check
};

} // namespace moegen::emu

#endif
