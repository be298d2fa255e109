//===- MemOps.cpp - load, store, atomicrmw, cmpxchg, fence -----------------===//
#include "emulator/Ops.h"
#include "emulator/Runner.h"

#include "llvm/IR/Instructions.h"

#include <bit>
#include <cmath>

using llvm::AtomicRMWInst;

namespace moegen::emu {

// Sub-byte vectors and odd integers are bit-packed in memory, LSB first.
// Tab: [bits, elementBytes, N, memoryBytes].
static void unpack(const uint32_t *T, const uint8_t *Mem, uint8_t *Reg) {
  unsigned Pos = 0;
  for (unsigned E = 0; E < T[2]; ++E) {
    uint64_t V = 0;
    for (unsigned B = 0; B < T[0]; ++B, ++Pos)
      V |= uint64_t((Mem[Pos / 8] >> (Pos % 8)) & 1) << B;
    writeInt(Reg + E * T[1], T[1], V);
  }
}

static void pack(const uint32_t *T, const uint8_t *Reg, uint8_t *Mem) {
  std::memset(Mem, 0, T[3]);
  unsigned Pos = 0;
  for (unsigned E = 0; E < T[2]; ++E) {
    uint64_t V = readInt(Reg + E * T[1], T[1]);
    for (unsigned B = 0; B < T[0]; ++B, ++Pos)
      Mem[Pos / 8] |= uint8_t(((V >> B) & 1) << (Pos % 8));
  }
}

/// Refuses an access whose address is off the alignment its instruction
/// promises (I.D = align - 1). Buffer accesses count from the resource's
/// base; LDS and private ones from their 32-bit offsets.
static bool misaligned(const Inst &I, LaneCtx &C, uint64_t Addr) {
  return C.R->fail(I, C,
                   "misaligned " + std::to_string(I.Aux) +
                       "-byte access: the instruction promises " +
                       std::to_string(uint64_t(I.D) + 1) + "-byte alignment",
                   Addr);
}

LLVM_ATTRIBUTE_ALWAYS_INLINE static bool aligned(const Inst &I, LaneCtx &C) {
  if (!I.D)
    return true;
  uint64_t Addr;
  if (I.Pred == ASBuf) {
    Addr = rsrcBase(C.F + I.A) + rd<uint32_t>(C.F, I.A + 16);
  } else if (I.Pred == ASLds || I.Pred == ASPriv) {
    Addr = rd<uint32_t>(C.F, I.A);
  } else {
    Addr = rd<uint64_t>(C.F, I.A);
  }
  return (Addr & I.D) == 0 || misaligned(I, C, Addr);
}

LLVM_ATTRIBUTE_ALWAYS_INLINE static bool loadLane(const Inst &I, LaneCtx &C) {
  uint8_t *F = C.F;
  uint8_t Tmp[512];
  if (I.Aux > sizeof(Tmp))
    return C.R->fail(I, C, "load too wide");
  if (!aligned(I, C))
    return false;
  if (I.Pred == ASBuf) {
    uint8_t *Out = I.Tab ? Tmp : F + I.Dst;
    if (!C.R->bufferAccess(C, I, F + I.A, rd<uint32_t>(F, I.A + 16), I.Aux, Out, false))
      return false;
    if (I.Tab)
      unpack(I.Tab, Tmp, F + I.Dst);
    return true;
  }
  uint8_t *H = C.R->resolve(C, I, I.Pred, I.A, I.Aux, false);
  if (!H)
    return false;
  if (I.Tab)
    unpack(I.Tab, H, F + I.Dst);
  else
    moveBytes(F + I.Dst, H, I.Aux2);
  return true;
}

LLVM_ATTRIBUTE_ALWAYS_INLINE static bool storeLane(const Inst &I, LaneCtx &C) {
  uint8_t *F = C.F;
  uint8_t Tmp[512];
  if (I.Aux > sizeof(Tmp))
    return C.R->fail(I, C, "store too wide");
  if (!aligned(I, C))
    return false;
  const uint8_t *Src = F + I.B;
  if (I.Tab) {
    pack(I.Tab, F + I.B, Tmp);
    Src = Tmp;
  }
  if (I.Pred == ASBuf) {
    moveBytes(Tmp, Src, I.Aux);
    return C.R->bufferAccess(C, I, F + I.A, rd<uint32_t>(F, I.A + 16), I.Aux, Tmp, true);
  }
  uint8_t *H = C.R->resolve(C, I, I.Pred, I.A, I.Aux, true);
  if (!H)
    return false;
  moveBytes(H, Src, I.Aux);
  return true;
}

/// A lane handler run for each active lane in lane order, stopping at the
/// first that fails (as Kind::Ctx does), in one call: Fn inlines here.
template <bool (*Fn)(const Inst &, LaneCtx &)> static bool overLanes(const Inst &I, WaveCtx &W) {
  LaneCtx C;
  C.R = W.R;
  C.WG = W.WG;
  C.W = W.W;
  uint8_t *Base = W.frame(0);
  const size_t Stride = W.R->P.FrameBytes;
  for (uint64_t M = W.Active; M; M &= M - 1) {
    C.Lane = unsigned(std::countr_zero(M));
    C.F = Base + C.Lane * Stride;
    if (!Fn(I, C))
      return false;
  }
  return true;
}

bool lanesLoad(const Inst &I, WaveCtx &W) { return overLanes<loadLane>(I, W); }
bool lanesStore(const Inst &I, WaveCtx &W) { return overLanes<storeLane>(I, W); }

/// The memory word of an atomic: bounds-checked, without race bookkeeping for
/// LDS (atomics are ordered among themselves).
static uint8_t *atomicTarget(const Inst &I, LaneCtx &C) {
  uint8_t *F = C.F;
  if (!aligned(I, C))
    return nullptr;
  if (I.Pred == ASBuf)
    return C.R->bufferAtomic(C, I, F + I.A, rd<uint32_t>(F, I.A + 16), I.Aux);
  uint32_t LdsOff;
  if (I.Pred == ASLds)
    LdsOff = rd<uint32_t>(F, I.A);
  else if (I.Pred != ASPriv && (rd<uint64_t>(F, I.A) & ApertureMask) == LdsAperture)
    LdsOff = uint32_t(rd<uint64_t>(F, I.A));
  else
    return C.R->resolve(C, I, I.Pred, I.A, I.Aux, true);
  if (uint64_t(LdsOff) + I.Aux > C.R->LdsBytes) {
    C.R->fail(I, C, "out-of-bounds LDS atomic of " + std::to_string(I.Aux) + " bytes", LdsOff);
    return nullptr;
  }
  if (C.R->O.CheckLdsRaces || C.R->O.CheckLdsUninit || C.R->O.CheckBarrierFences)
    C.WG->Shadow.markAtomic(LdsOff, I.Aux, uint16_t(C.W->Index));
  return C.WG->Lds.data() + LdsOff;
}

static double fpRmw(unsigned Op, double Old, double V) {
  switch (Op) {
  case AtomicRMWInst::FAdd:
    return Old + V;
  case AtomicRMWInst::FSub:
    return Old - V;
  case AtomicRMWInst::FMax:
    return std::fmax(Old, V);
  case AtomicRMWInst::FMin:
    return std::fmin(Old, V);
  default:
    return V;
  }
}

bool applyRmw(unsigned Op, EK Ty, unsigned Bits, unsigned N, uint8_t *Mem, const uint8_t *Val) {
  unsigned EB = elemBytes(Ty, Bits);
  for (unsigned E = 0; E < N; ++E) {
    uint8_t *M = Mem + E * EB;
    const uint8_t *V = Val + E * EB;
    if (Ty == EK::F32 || Ty == EK::F64 || Ty == EK::BF16 || Ty == EK::F16) {
      if (Op == AtomicRMWInst::Xchg) {
        std::memcpy(M, V, EB);
        continue;
      }
      if (Op != AtomicRMWInst::FAdd && Op != AtomicRMWInst::FSub && Op != AtomicRMWInst::FMax &&
          Op != AtomicRMWInst::FMin)
        return false;
      writeFp(M, Ty, fpRmw(Op, readFp(M, Ty), readFp(V, Ty)));
      continue;
    }
    uint64_t A = readInt(M, EB), B = readInt(V, EB), R;
    unsigned W = EB * 8;
    switch (Op) {
    case AtomicRMWInst::Xchg:
      R = B;
      break;
    case AtomicRMWInst::Add:
      R = A + B;
      break;
    case AtomicRMWInst::Sub:
      R = A - B;
      break;
    case AtomicRMWInst::And:
      R = A & B;
      break;
    case AtomicRMWInst::Nand:
      R = ~(A & B);
      break;
    case AtomicRMWInst::Or:
      R = A | B;
      break;
    case AtomicRMWInst::Xor:
      R = A ^ B;
      break;
    case AtomicRMWInst::Max:
      R = signExtend(A, W) > signExtend(B, W) ? A : B;
      break;
    case AtomicRMWInst::Min:
      R = signExtend(A, W) < signExtend(B, W) ? A : B;
      break;
    case AtomicRMWInst::UMax:
      R = std::max(A, B);
      break;
    case AtomicRMWInst::UMin:
      R = std::min(A, B);
      break;
    case AtomicRMWInst::UIncWrap:
      R = A >= B ? 0 : A + 1;
      break;
    case AtomicRMWInst::UDecWrap:
      R = (A == 0 || A > B) ? B : A - 1;
      break;
    default:
      return false;
    }
    writeInt(M, EB, maskBits(R, W));
  }
  return true;
}

/// Whether an atomic's target is global memory (shared between workgroups).
static bool isGlobalAtomic(const Inst &I, LaneCtx &C) {
  if (I.Pred == ASLds || I.Pred == ASPriv)
    return false;
  if (I.Pred == ASBuf)
    return true;
  return (rd<uint64_t>(C.F, I.A) & ApertureMask) == 0;
}

bool ctxAtomicRMW(const Inst &I, LaneCtx &C) {
  uint8_t *F = C.F;
  AtomicGuard Guard(*C.R, isGlobalAtomic(I, C));
  uint8_t *H = atomicTarget(I, C);
  if (!H)
    return false;
  std::memcpy(F + I.Dst, H, I.Aux2);
  if (!applyRmw(I.Sub, I.Ty, I.Bits, I.N, H, F + I.B))
    return C.R->fail(I, C, "unsupported atomicrmw operation");
  return true;
}

bool ctxCmpXchg(const Inst &I, LaneCtx &C) {
  uint8_t *F = C.F;
  AtomicGuard Guard(*C.R, isGlobalAtomic(I, C));
  uint8_t *H = atomicTarget(I, C);
  if (!H)
    return false;
  bool Eq = std::memcmp(H, F + I.B, I.Aux) == 0;
  std::memcpy(F + I.Dst, H, I.Aux);
  F[I.Dst + ((I.Aux2 + 7) & ~7u)] = Eq;
  if (Eq)
    std::memcpy(H, F + I.C, I.Aux);
  return true;
}

bool ctxFence(const Inst &I, LaneCtx &C) {
  if (!I.Sub)
    return true; // wavefront or single-thread scope
  if (I.Pred & 2)
    C.W->LastRelease[C.Lane] = C.WG->Tick++;
  if (I.Pred & 1)
    C.W->AcquireEpoch[C.Lane] = C.WG->Epoch;
  return true;
}

} // namespace moegen::emu
