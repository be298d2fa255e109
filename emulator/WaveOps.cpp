//===- WaveOps.cpp - Cross-lane operations, LDS transpose reads, LDS DMA ---===//
#include "emulator/Ops.h"
#include "emulator/Runner.h"

#include "llvm/IR/Instruction.h"

#include <bit>
#include <cmath>

namespace moegen::emu {

static bool active(const WaveCtx &W, unsigned L) { return (W.Active >> L) & 1; }
static unsigned firstActive(const WaveCtx &W) { return unsigned(std::countr_zero(W.Active)); }

bool waveReadFirstLane(const Inst &I, WaveCtx &W) {
  uint8_t Val[64];
  std::memcpy(Val, W.frame(firstActive(W)) + I.A, I.Aux);
  for (unsigned L = 0; L < 64; ++L)
    if (active(W, L))
      std::memcpy(W.frame(L) + I.Dst, Val, I.Aux);
  return true;
}

bool waveReadLane(const Inst &I, WaveCtx &W) {
  unsigned Src = rd<uint32_t>(W.frame(firstActive(W)), I.B) & 63;
  if (Src >= W.W->NumLanes)
    return W.R->fail(I, W.WG, W.W, int(firstActive(W)), "readlane of a lane that does not exist");
  uint8_t Val[64];
  std::memcpy(Val, W.frame(Src) + I.A, I.Aux);
  for (unsigned L = 0; L < 64; ++L)
    if (active(W, L))
      std::memcpy(W.frame(L) + I.Dst, Val, I.Aux);
  return true;
}

bool waveBallot(const Inst &I, WaveCtx &W) {
  uint64_t Mask = 0;
  for (unsigned L = 0; L < 64; ++L)
    if (active(W, L) && (W.frame(L)[I.A] & 1))
      Mask |= 1ull << L;
  for (unsigned L = 0; L < 64; ++L)
    if (active(W, L))
      writeInt(W.frame(L) + I.Dst, I.Aux, Mask);
  return true;
}

// llvm.amdgcn.wave.reduce.*: the reduction over the active lanes, given to
// every active lane.
bool waveReduce(const Inst &I, WaveCtx &W) {
  unsigned EB = elemBytes(I.Ty, I.Bits);
  bool Fp = I.Ty == EK::F32 || I.Ty == EK::F64;
  uint64_t IAcc = 0;
  double FAcc = 0;
  bool First = true;
  for (unsigned L = 0; L < 64; ++L) {
    if (!active(W, L))
      continue;
    const uint8_t *P = W.frame(L) + I.A;
    if (Fp) {
      double V = readFp(P, I.Ty);
      if (First)
        FAcc = I.Sub == llvm::Instruction::FSub ? -V : V;
      else if (I.Sub == llvm::Instruction::FAdd)
        FAcc = I.Ty == EK::F32 ? double(float(FAcc) + float(V)) : FAcc + V;
      else if (I.Sub == llvm::Instruction::FSub)
        FAcc = I.Ty == EK::F32 ? double(float(FAcc) - float(V)) : FAcc - V;
      else
        FAcc = I.Sub == 1000 + M_MinNum ? std::fmin(FAcc, V) : std::fmax(FAcc, V);
    } else {
      uint64_t V = readInt(P, EB);
      int64_t SA = signExtend(IAcc, I.Bits), SV = signExtend(V, I.Bits);
      if (First)
        IAcc = I.Sub == llvm::Instruction::Sub ? 0 - V : V;
      else
        switch (I.Sub) {
        case llvm::Instruction::Add:
          IAcc += V;
          break;
        case llvm::Instruction::Sub:
          IAcc -= V;
          break;
        case llvm::Instruction::And:
          IAcc &= V;
          break;
        case llvm::Instruction::Or:
          IAcc |= V;
          break;
        case llvm::Instruction::Xor:
          IAcc ^= V;
          break;
        case 1000 + M_UMin:
          IAcc = std::min(IAcc, V);
          break;
        case 1000 + M_UMax:
          IAcc = std::max(IAcc, V);
          break;
        case 1000 + M_SMin:
          IAcc = uint64_t(std::min(SA, SV));
          break;
        default:
          IAcc = uint64_t(std::max(SA, SV));
        }
      IAcc = maskBits(IAcc, I.Bits);
    }
    First = false;
  }
  for (unsigned L = 0; L < 64; ++L)
    if (active(W, L)) {
      if (Fp)
        writeFp(W.frame(L) + I.Dst, I.Ty, FAcc);
      else
        writeInt(W.frame(L) + I.Dst, EB, IAcc);
    }
  return true;
}

// v_permlane32_swap: the upper 32 lanes of vdst trade places with the lower 32
// lanes of vsrc; v_permlane16_swap does the same for the odd 16-lane rows of
// vdst and the even rows of vsrc (LLVM AMDGPUUsage / IntrinsicsAMDGPU.td).
bool wavePermlaneSwap(const Inst &I, WaveCtx &W) {
  if (W.Active != ~0ull)
    return W.R->fail(I, W.WG, W.W, -1, "permlane swap with inactive lanes (not modelled)");
  uint32_t Dst[64], Src[64];
  for (unsigned L = 0; L < 64; ++L) {
    Dst[L] = rd<uint32_t>(W.frame(L), I.A);
    Src[L] = rd<uint32_t>(W.frame(L), I.B);
  }
  unsigned S = I.Sub;
  for (unsigned L = 0; L < 64; ++L) {
    bool Upper = (L / S) & 1; // odd half (32) or odd row (16)
    uint32_t NewDst = Upper ? Src[L - S] : Dst[L];
    uint32_t NewSrc = Upper ? Src[L] : Dst[L + S];
    wr<uint32_t>(W.frame(L), I.Dst, NewDst);
    wr<uint32_t>(W.frame(L), I.Dst + 8, NewSrc);
  }
  return true;
}

bool waveDsSwizzle(const Inst &I, WaveCtx &W) {
  uint32_t In[64] = {}, Out[64];
  for (unsigned L = 0; L < 64; ++L)
    if (active(W, L))
      In[L] = rd<uint32_t>(W.frame(L), I.A);
  uint32_t Off = I.Aux;
  for (unsigned L = 0; L < 64; ++L) {
    unsigned Src;
    if (Off & 0x8000) { // quad permute
      Src = (L & ~3u) | ((Off >> (2 * (L & 3))) & 3);
    } else { // bit mode on the lane id within 32 lanes
      unsigned And = Off & 0x1F, Or = (Off >> 5) & 0x1F, Xor = (Off >> 10) & 0x1F;
      Src = (L & 0x20) | (((L & And) | Or) ^ Xor);
    }
    Out[L] = active(W, Src) ? In[Src] : 0;
  }
  for (unsigned L = 0; L < 64; ++L)
    if (active(W, L))
      wr<uint32_t>(W.frame(L), I.Dst, Out[L]);
  return true;
}

// DPP on gfx9: returns the source lane for dpp_ctrl, or -1 when invalid.
static int dppSource(unsigned Ctrl, unsigned L) {
  unsigned Row = L & ~15u, InRow = L & 15;
  if (Ctrl <= 0xFF)
    return int((L & ~3u) | ((Ctrl >> (2 * (L & 3))) & 3));
  if (Ctrl >= 0x101 && Ctrl <= 0x10F) {
    unsigned N = Ctrl & 15;
    return InRow + N < 16 ? int(L + N) : -1;
  }
  if (Ctrl >= 0x111 && Ctrl <= 0x11F) {
    unsigned N = Ctrl & 15;
    return InRow >= N ? int(L - N) : -1;
  }
  if (Ctrl >= 0x121 && Ctrl <= 0x12F)
    return int(Row | ((InRow - (Ctrl & 15)) & 15));
  switch (Ctrl) {
  case 0x130: // wave_shl1
    return L + 1 < 64 ? int(L + 1) : -1;
  case 0x134: // wave_rol1
    return int((L + 1) & 63);
  case 0x138: // wave_shr1
    return L >= 1 ? int(L - 1) : -1;
  case 0x13C: // wave_ror1
    return int((L + 63) & 63);
  case 0x140: // row_mirror
    return int(Row | (15 - InRow));
  case 0x141: // row_half_mirror
    return int((L & ~7u) | (7 - (L & 7)));
  case 0x142: // row_bcast15
    return L >= 16 ? int(Row - 1) : -1;
  case 0x143: // row_bcast31
    return L >= 32 ? int((L & ~31u) - 1) : -1;
  }
  return -2;
}

bool waveDpp(const Inst &I, WaveCtx &W) {
  unsigned Bytes = I.Aux2;
  if (Bytes > 8)
    return W.R->fail(I, W.WG, W.W, -1, "DPP on a value wider than 64 bits");
  uint64_t Old[64] = {}, Src[64] = {}, Out[64];
  for (unsigned L = 0; L < 64; ++L)
    if (active(W, L)) {
      std::memcpy(&Old[L], W.frame(L) + I.A, Bytes);
      std::memcpy(&Src[L], W.frame(L) + I.B, Bytes);
    }
  unsigned RowMask = I.Sub & 15, BankMask = (I.Sub >> 4) & 15;
  for (unsigned L = 0; L < 64; ++L) {
    Out[L] = Old[L];
    if (!((RowMask >> (L / 16)) & 1) || !((BankMask >> ((L & 15) / 4)) & 1))
      continue;
    int S = dppSource(I.Aux, L);
    if (S == -2)
      return W.R->fail(I, W.WG, W.W, int(L), "unsupported dpp_ctrl " + std::to_string(I.Aux));
    if (S >= 0 && active(W, unsigned(S)))
      Out[L] = Src[S];
    else if (I.Pred) // bound_ctrl: invalid sources read 0
      Out[L] = 0;
  }
  for (unsigned L = 0; L < 64; ++L)
    if (active(W, L))
      std::memcpy(W.frame(L) + I.Dst, &Out[L], Bytes);
  return true;
}

bool waveBpermute(const Inst &I, WaveCtx &W) {
  uint32_t Data[64] = {}, Out[64] = {};
  for (unsigned L = 0; L < 64; ++L)
    if (active(W, L))
      Data[L] = rd<uint32_t>(W.frame(L), I.B);
  for (unsigned L = 0; L < 64; ++L) {
    if (!active(W, L))
      continue;
    unsigned Idx = (rd<uint32_t>(W.frame(L), I.A) >> 2) & 63;
    if (I.Sub) // permute: push
      Out[Idx] = Data[L];
    else // bpermute: pull; inactive sources read 0
      Out[L] = active(W, Idx) ? Data[Idx] : 0;
  }
  for (unsigned L = 0; L < 64; ++L)
    if (active(W, L))
      wr<uint32_t>(W.frame(L), I.Dst, Out[L]);
  return true;
}

// ds_read_b64_tr_b{16,8,4} (docs/gfx950-facts.md §6.2): within each group of 16 lanes,
// concatenate the 64-bit reads as E elements each (F); lane d gets F[16r + d]
// as its element r. b16 is [V]; b8 [I] and b4 [I/U] come from Triton's
// production lowering and are used as stated there.
bool waveDsReadTr(const Inst &I, WaveCtx &W) {
  unsigned Bits = I.Sub, E = 64 / Bits;
  if (Bits == 4 && !W.R->O.AllowUncertainLayouts)
    return W.R->fail(I, W.WG, W.W, -1,
                     "ds_read_b64_tr_b4: lane layout uncertain [U]; refused (set "
                     "Options::AllowUncertainLayouts to use the Triton-derived layout)");
  // Partial EXEC is [U] (§6.2): on gfx1250 one active lane makes the whole
  // wave take part, so even a wholly inactive 16-lane group is refused.
  if (W.Active != ~0ull)
    return W.R->fail(I, W.WG, W.W, std::countr_one(W.Active),
                     "ds_read_tr with inactive lanes (EXEC is not all 64 lanes; behaviour "
                     "unknown [U])");
  for (unsigned G = 0; G < 4; ++G) {
    uint64_t In[16];
    for (unsigned D = 0; D < 16; ++D) {
      unsigned L = 16 * G + D;
      uint32_t Addr = rd<uint32_t>(W.frame(L), I.A);
      if (Addr % 8)
        return W.R->fail(I, W.WG, W.W, int(L), "ds_read_tr address not 8-byte aligned", Addr);
      uint8_t *H = W.R->lds(I, *W.WG, *W.W, L, Addr, 8, false);
      if (!H)
        return false;
      std::memcpy(&In[D], H, 8);
    }
    uint64_t Mask = Bits == 64 ? ~0ull : (1ull << Bits) - 1;
    for (unsigned D = 0; D < 16; ++D) {
      uint64_t Out = 0;
      for (unsigned R = 0; R < E; ++R) {
        unsigned Flat = 16 * R + D;
        uint64_t V = (In[Flat / E] >> (Bits * (Flat % E))) & Mask;
        Out |= V << (Bits * R);
      }
      wr<uint64_t>(W.frame(16 * G + D), I.Dst, Out);
    }
  }
  return true;
}

/// A lane's LDS slot: sizes 1 and 2 take a dword (zero-extended), 12 takes
/// 16 bytes of which only the 12 loaded are written (§6.3).
static uint32_t ldsSlotBytes(uint32_t Size) { return Size < 4 ? 4 : Size == 12 ? 16 : Size; }
static uint32_t ldsWrittenBytes(uint32_t Size) { return Size < 4 ? 4 : Size; }

/// Writes lane L's data to its slot of the LDS DMA at Base; false after
/// fail().
static bool writeLdsSlot(const Inst &I, WaveCtx &W, unsigned L, uint32_t Base,
                         const uint8_t *Data) {
  uint32_t Bytes = ldsWrittenBytes(I.Aux);
  uint8_t *D = W.R->lds(I, *W.WG, *W.W, L, Base + I.Aux2 + L * ldsSlotBytes(I.Aux), Bytes, true);
  if (!D)
    return false;
  std::memcpy(D, Data, Bytes);
  return true;
}

/// What a lane-level memory access of lane L sees (for its checks and reports).
static LaneCtx laneOf(const WaveCtx &W, unsigned L) {
  LaneCtx C;
  C.R = W.R;
  C.WG = W.WG;
  C.W = W.W;
  C.Lane = L;
  C.F = W.frame(L);
  return C;
}

/// The wave-uniform LDS base (M0) of the LDS DMA operations.
static bool uniformLdsBase(const Inst &I, WaveCtx &W, uint32_t Slot, uint32_t &Base) {
  Base = rd<uint32_t>(W.frame(firstActive(W)), Slot);
  for (unsigned L = 0; L < 64; ++L)
    if (active(W, L) && rd<uint32_t>(W.frame(L), Slot) != Base)
      return W.R->fail(I, W.WG, W.W, int(L), "LDS base of a global->LDS load is not wave-uniform");
  return true;
}

/// The LDS DMA loop: for each active lane in lane order, Fetch(C, Data) reads
/// the lane's bytes (Data starts zeroed), which go to the lane's LDS slot.
template <class FetchFn> static bool ldsDma(const Inst &I, WaveCtx &W, FetchFn Fetch) {
  uint32_t Base;
  if (!uniformLdsBase(I, W, I.B, Base))
    return false;
  for (unsigned L = 0; L < 64; ++L) {
    if (!active(W, L))
      continue;
    uint8_t Data[16] = {};
    LaneCtx C = laneOf(W, L);
    if (!Fetch(C, Data) || !writeLdsSlot(I, W, L, Base, Data))
      return false;
  }
  return true;
}

// global_load_lds / load.to.lds (docs/gfx950-facts.md §6.3): lane l reads Size bytes
// from its own address + imm_offset and writes them to M0 + imm_offset +
// l * slot, in lane order (sizes 1 and 2 zero-extended to a dword).
bool waveLoadToLds(const Inst &I, WaveCtx &W) {
  return ldsDma(I, W, [&](LaneCtx &C, uint8_t *Data) {
    if (I.Pred == ASBuf) {
      uint32_t Off = rd<uint32_t>(C.F, I.A + 16) + I.Aux2;
      return W.R->bufferAccess(C, I, C.F + I.A, Off, I.Aux, Data, false);
    }
    uint8_t *H = W.R->global(C, I, rd<uint64_t>(C.F, I.A) + I.Aux2, I.Aux, false);
    if (!H)
      return false;
    std::memcpy(Data, H, I.Aux);
    return true;
  });
}

// raw.ptr.buffer.load.lds(rsrc, lds, size, voffset, soffset, imm, aux):
// out-of-range lanes write zeros to their slot.
bool waveBufferLoadLds(const Inst &I, WaveCtx &W) {
  return ldsDma(I, W, [&](LaneCtx &C, uint8_t *Data) {
    if (rd<uint32_t>(C.F, I.D) != 0)
      return W.R->fail(I, W.WG, W.W, int(C.Lane),
                       "buffer access with non-zero soffset (range-check rule uncertain [U])");
    uint32_t Off = rd<uint32_t>(C.F, I.C) + I.Aux2;
    return W.R->bufferAccess(C, I, C.F + I.A, Off, I.Aux, Data, false);
  });
}

} // namespace moegen::emu
