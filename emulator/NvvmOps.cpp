//===- NvvmOps.cpp - NVPTX (sm_90a) operations: warps, cp.async, MMAs -----===//
//
// Semantics from the PTX ISA (8.x): warps of 32 lanes, `shfl.sync`,
// `vote.sync`, `prmt`, `cp.async` groups, `mma.sync.m16n8k16` and
// `wgmma.mma_async` m64nNk16 with bf16 operands, and the inline asm moegen
// emits (the bf16x2 global reductions, movmatrix, the wgmma and its register
// pass).
// A warp's lanes run in lockstep here, so a `.sync` operation sees the lanes
// of the current path as the ones that arrived; a member lane that exited is
// refused (the hardware would wait for it forever).
//
//===----------------------------------------------------------------------===//
#include "emulator/Formats.h"
#include "emulator/Ops.h"
#include "emulator/Runner.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/IR/Instructions.h"

#include <bit>
#include <cmath>

namespace moegen::emu {

static bool active(const WaveCtx &W, unsigned L) { return (W.Active >> L) & 1; }

bool ctxNvvmSreg(const Inst &I, LaneCtx &C) {
  const LaunchConfig &Cfg = C.R->Cfg;
  const uint32_t Block[3] = {Cfg.Block.X, Cfg.Block.Y, Cfg.Block.Z};
  const uint32_t Grid[3] = {Cfg.Grid.X, Cfg.Grid.Y, Cfg.Grid.Z};
  uint32_t V = 0;
  switch (I.Sub) {
  case NS_Ntid:
    V = Block[I.Pred];
    break;
  case NS_Nctaid:
    V = Grid[I.Pred];
    break;
  case NS_LaneId:
    V = C.Lane;
    break;
  case NS_WarpSize:
    V = C.R->P.WaveLanes;
    break;
  }
  wr<uint32_t>(C.F, I.Dst, V);
  return true;
}

/// The membermask at slot A must hold every active lane and no lane that
/// exited (the lanes in lockstep are the ones that arrived).
static bool checkMembers(const Inst &I, WaveCtx &W) {
  for (unsigned L = 0; L < W.W->NumLanes; ++L) {
    if (!active(W, L))
      continue;
    uint32_t Mask = rd<uint32_t>(W.frame(L), I.A);
    if (!(Mask >> L & 1))
      return W.R->fail(I, W.WG, W.W, int(L),
                       "lane executes a .sync operation outside its membermask");
    uint64_t Exited = W.W->DoneLanes & Mask;
    if (Exited)
      return W.R->fail(I, W.WG, W.W, int(L),
                       "membermask names lane " + std::to_string(std::countr_zero(Exited)) +
                           ", which exited");
  }
  return true;
}

bool waveShflSync(const Inst &I, WaveCtx &W) {
  if (!checkMembers(I, W))
    return false;
  uint32_t Out[64];
  bool In[64] = {};
  for (unsigned L = 0; L < W.W->NumLanes; ++L) {
    if (!active(W, L))
      continue;
    const uint8_t *F = W.frame(L);
    uint32_t B = rd<uint32_t>(F, I.C) & 31, Cv = rd<uint32_t>(F, I.D);
    uint32_t Clamp = Cv & 31, Seg = (Cv >> 8) & 31;
    uint32_t MaxLane = (L & Seg) | (Clamp & ~Seg), MinLane = L & Seg;
    int J = int(L);
    bool P = false;
    switch (I.Sub) {
    case NF_Up:
      J = int(L) - int(B);
      P = J >= int(MaxLane);
      break;
    case NF_Down:
      J = int(L + B);
      P = J <= int(MaxLane);
      break;
    case NF_Bfly:
      J = int(L ^ B);
      P = J <= int(MaxLane);
      break;
    case NF_Idx:
      J = int(MinLane | (B & ~Seg));
      P = J <= int(MaxLane);
      break;
    }
    if (!P)
      J = int(L);
    if (!active(W, unsigned(J)))
      return W.R->fail(I, W.WG, W.W, int(L),
                       "shfl.sync reads lane " + std::to_string(J) + ", which is not active");
    Out[L] = rd<uint32_t>(W.frame(unsigned(J)), I.B);
    In[L] = P;
  }
  for (unsigned L = 0; L < W.W->NumLanes; ++L)
    if (active(W, L)) {
      wr<uint32_t>(W.frame(L), I.Dst, Out[L]);
      if (I.Aux) // the {value, i1} form: the predicate follows at 8 bytes
        W.frame(L)[I.Dst + 8] = In[L];
    }
  return true;
}

bool waveVoteSync(const Inst &I, WaveCtx &W) {
  if (!checkMembers(I, W))
    return false;
  uint32_t Ballot = 0;
  unsigned Voters = 0;
  for (unsigned L = 0; L < W.W->NumLanes; ++L)
    if (active(W, L)) {
      Ballot |= uint32_t(W.frame(L)[I.B] & 1) << L;
      ++Voters;
    }
  unsigned Yes = unsigned(std::popcount(Ballot));
  for (unsigned L = 0; L < W.W->NumLanes; ++L) {
    if (!active(W, L))
      continue;
    uint8_t *F = W.frame(L);
    switch (I.Sub) {
    case NV_Ballot:
      wr<uint32_t>(F, I.Dst, Ballot);
      break;
    case NV_Any:
      F[I.Dst] = Yes > 0;
      break;
    case NV_All:
      F[I.Dst] = Yes == Voters;
      break;
    case NV_Uni:
      F[I.Dst] = Yes == 0 || Yes == Voters;
      break;
    }
  }
  return true;
}

void opPrmt(const Inst &I, uint8_t *F) {
  const uint64_t X = uint64_t(rd<uint32_t>(F, I.A)) | uint64_t(rd<uint32_t>(F, I.B)) << 32;
  const uint32_t Sel = rd<uint32_t>(F, I.C);
  uint32_t R = 0;
  for (unsigned Byte = 0; Byte < 4; ++Byte) {
    uint32_t S = (Sel >> (4 * Byte)) & 0xF;
    uint32_t V = uint32_t(X >> (8 * (S & 7))) & 0xFF;
    if (S & 8) // sign replicate: the selected byte's msb in all 8 bits
      V = (V & 0x80) ? 0xFF : 0;
    R |= V << (8 * Byte);
  }
  wr<uint32_t>(F, I.Dst, R);
}

void opEx2Approx(const Inst &I, uint8_t *F) { wr<float>(F, I.Dst, std::exp2(rd<float>(F, I.A))); }

/// Lane (g = G, t = T)'s part of a 16 x 16 bf16 A fragment (mma.sync's, and
/// a warp's rows of wgmma's): register r at slot Slots[r] holds
/// A[g + 8 (r & 1)][2t + 8 (r >> 1) + {0, 1}].
static void readAFragment(const uint8_t *F, const uint32_t *Slots, unsigned G, unsigned T,
                          float (&A)[16][16]) {
  for (unsigned R = 0; R < 4; ++R) {
    uint32_t V = rd<uint32_t>(F, Slots[R]);
    unsigned Row = G + 8 * (R & 1), Col = 2 * T + 8 * (R >> 1);
    A[Row][Col] = bf16ToFloat(uint16_t(V));
    A[Row][Col + 1] = bf16ToFloat(uint16_t(V >> 16));
  }
}

/// movmatrix.sync.aligned.m8n8.trans.b16 d, a: lane (g, t) holds row g,
/// columns 2t and 2t + 1 (low half first) of an 8x8 matrix of b16 in a, and
/// gets those of its transpose in d.
bool waveMovMatrixTrans(const Inst &I, WaveCtx &W) {
  if (W.Active != 0xFFFFFFFFull || W.W->NumLanes != 32)
    return W.R->fail(I, W.WG, W.W, -1, "movmatrix executed by a partially active warp");
  uint16_t M[8][8];
  for (unsigned L = 0; L < 32; ++L) {
    uint32_t V = rd<uint32_t>(W.frame(L), I.A);
    M[L / 4][2 * (L % 4)] = uint16_t(V);
    M[L / 4][2 * (L % 4) + 1] = uint16_t(V >> 16);
  }
  for (unsigned L = 0; L < 32; ++L) {
    unsigned G = L / 4, T = L % 4;
    wr<uint32_t>(W.frame(L), I.Dst, uint32_t(M[2 * T][G]) | uint32_t(M[2 * T + 1][G]) << 16);
  }
  return true;
}

/// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 with the PTX ISA's
/// fragments (g = lane / 4, t = lane % 4):
///   A: register r holds A[g + 8 (r & 1)][2t + 8 (r >> 1) + {0, 1}];
///   B: register r holds B[2t + 8r + {0, 1}][g];
///   C/D: element e holds C[g + 8 (e >> 1)][2t + (e & 1)].
/// The products are exact in f64; the sum is rounded once to f32 (the
/// hardware's internal order and rounding are not documented).
bool waveMmaBf16(const Inst &I, WaveCtx &W) {
  if (W.Active != 0xFFFFFFFFull || W.W->NumLanes != 32)
    return W.R->fail(I, W.WG, W.W, -1, "mma.sync executed by a partially active warp");
  const uint32_t *Slot = I.Tab; // a0..a3, b0, b1, c0..c3
  float A[16][16], B[16][8], C[16][8];
  for (unsigned L = 0; L < 32; ++L) {
    const uint8_t *F = W.frame(L);
    unsigned G = L / 4, T = L % 4;
    readAFragment(F, Slot, G, T, A);
    for (unsigned R = 0; R < 2; ++R) {
      uint32_t V = rd<uint32_t>(F, Slot[4 + R]);
      B[2 * T + 8 * R][G] = bf16ToFloat(uint16_t(V));
      B[2 * T + 8 * R + 1][G] = bf16ToFloat(uint16_t(V >> 16));
    }
    for (unsigned E = 0; E < 4; ++E)
      C[G + 8 * (E >> 1)][2 * T + (E & 1)] = rd<float>(F, Slot[6 + E]);
  }
  for (unsigned L = 0; L < 32; ++L) {
    uint8_t *F = W.frame(L);
    unsigned G = L / 4, T = L % 4;
    for (unsigned E = 0; E < 4; ++E) {
      unsigned Row = G + 8 * (E >> 1), Col = 2 * T + (E & 1);
      double Sum = C[Row][Col];
      for (unsigned K = 0; K < 16; ++K)
        Sum += double(A[Row][K]) * double(B[K][Col]);
      wr<float>(F, I.Dst + 8 * E, float(Sum));
    }
  }
  return true;
}

/// wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16 with A in registers
/// or in shared memory: warp w of the warpgroup supplies rows 16w..16w + 15
/// of A and holds those rows of D, so each warp's part depends only on its
/// own registers or rows and the shared B, and runs here on its own. A in
/// registers as mma.sync's A fragment; in shared memory (M x K, K-major, no
/// swizzle) by a descriptor read as B's, its 8-row groups at the stride
/// byte offset; D element
/// e holds D[g + 8 ((e >> 1) & 1)][8 (e >> 2) + 2t + (e & 1)]. B (K x N,
/// K-major, no swizzle) from the descriptor: start address, leading byte
/// offset (between core matrices along K) and stride byte offset (between
/// 8-column groups along N), each in 16-byte units; a core matrix is 8
/// columns of 8 K-adjacent elements, 16 bytes each. scale-d = 0 ignores
/// the accumulators' inputs. Computed when issued (sum exact, rounded once
/// to f32, as waveMmaBf16); the shared memory read stays claimed until the
/// group's wgmma.wait_group (WgmmaRead).
bool waveWgmmaBf16(const Inst &I, WaveCtx &W) {
  if (W.Active != 0xFFFFFFFFull || W.W->NumLanes != 32)
    return W.R->fail(I, W.WG, W.W, -1, "wgmma executed by a partially active warp");
  if (uint64_t Threads = W.R->Cfg.Block.count(); Threads % 128)
    return W.R->fail(I, W.WG, W.W, -1,
                     "wgmma in a CTA of " + std::to_string(Threads) +
                         " threads: a warpgroup is 4 whole warps (128 threads)");
  const unsigned NAcc = I.Aux, N = 2 * NAcc;
  const bool SharedA = I.Sub == 1;
  // acc[NAcc], then a0..a3 or A's descriptor, B's descriptor, scale-d.
  const uint32_t *Slot = I.Tab;
  const unsigned DescASlot = NAcc, DescBSlot = NAcc + (SharedA ? 1 : 4), ScaleSlot = DescBSlot + 1;
  const uint64_t DescA = SharedA ? rd<uint64_t>(W.frame(0), Slot[DescASlot]) : 0;
  const uint64_t Desc = rd<uint64_t>(W.frame(0), Slot[DescBSlot]);
  const uint32_t ScaleD = rd<uint32_t>(W.frame(0), Slot[ScaleSlot]);
  for (unsigned L = 1; L < 32; ++L)
    if (rd<uint64_t>(W.frame(L), Slot[DescBSlot]) != Desc ||
        rd<uint32_t>(W.frame(L), Slot[ScaleSlot]) != ScaleD ||
        (SharedA && rd<uint64_t>(W.frame(L), Slot[DescASlot]) != DescA))
      return W.R->fail(I, W.WG, W.W, int(L),
                       "wgmma descriptor or scale-d differs between the lanes of a warp");
  struct Layout {
    uint32_t Start, Leading, Stride;
  };
  // A descriptor's fields, in 16-byte units; only the unswizzled layout.
  auto layoutOf = [&](uint64_t D, Layout &Out) {
    const unsigned Swizzle = unsigned(D >> 62), BaseOffset = unsigned(D >> 49) & 7;
    if (Swizzle || BaseOffset)
      return W.R->fail(I, W.WG, W.W, -1,
                       "wgmma descriptor with swizzle mode " + std::to_string(Swizzle) +
                           " and base offset " + std::to_string(BaseOffset) +
                           " (only the unswizzled layout is modelled)");
    Out = {uint32_t(D & 0x3FFF) << 4, uint32_t(D >> 16 & 0x3FFF) << 4,
           uint32_t(D >> 32 & 0x3FFF) << 4};
    return true;
  };
  // Reads the 16-byte row of a core matrix at `Off` (8 K-adjacent bf16)
  // through the async proxy; Uninit: some byte was never written.
  auto coreRow = [&](uint32_t Off, bool &Uninit) -> const uint8_t * {
    const uint8_t *Row = W.R->lds(I, *W.WG, *W.W, 0, Off, 16, false, &Uninit);
    if (!Row || !W.R->asyncProxyRead(I, *W.WG, *W.W, Off, 16))
      return nullptr;
    return Row;
  };
  Layout BL, AL;
  if (!layoutOf(Desc, BL) || (SharedA && !layoutOf(DescA, AL)))
    return false;
  static thread_local float B[16][256], Acc[16][256];
  bool Garbage[256] = {};
  float A[16][16];
  for (unsigned Group = 0; Group < N / 8; ++Group)
    for (unsigned Half = 0; Half < 2; ++Half) {
      const uint32_t Off = BL.Start + Group * BL.Stride + Half * BL.Leading;
      for (unsigned Col = 0; Col < 8; ++Col) {
        // A column of B never written (rows a tile does not fill) only
        // makes its own column of D undefined: NaN, so that using it fails.
        bool Uninit = false;
        const uint8_t *Row = coreRow(Off + 16 * Col, Uninit);
        if (!Row)
          return false;
        Garbage[8 * Group + Col] |= Uninit;
        for (unsigned K = 0; K < 8; ++K)
          B[8 * Half + K][8 * Group + Col] = bf16ToFloat(rd<uint16_t>(Row, 2 * K));
      }
      W.W->WgmmaReads.push_back({W.W->WgmmaGroups, Off, 128, &I});
    }
  if (SharedA) {
    // This warp's rows 16w..16w + 15: the warpgroup's 8-row groups 2w, 2w + 1.
    const unsigned Warp = W.W->Index % 4;
    for (unsigned Group = 0; Group < 2; ++Group)
      for (unsigned Half = 0; Half < 2; ++Half) {
        const uint32_t Off = AL.Start + (2 * Warp + Group) * AL.Stride + Half * AL.Leading;
        for (unsigned R = 0; R < 8; ++R) {
          bool Uninit = false;
          const uint8_t *Row = coreRow(Off + 16 * R, Uninit);
          if (!Row)
            return false;
          for (unsigned K = 0; K < 8; ++K)
            A[8 * Group + R][8 * Half + K] =
                Uninit ? std::nanf("") : bf16ToFloat(rd<uint16_t>(Row, 2 * K));
        }
        W.W->WgmmaReads.push_back({W.W->WgmmaGroups, Off, 128, &I});
      }
  }
  for (unsigned L = 0; L < 32; ++L) {
    const uint8_t *F = W.frame(L);
    unsigned G = L / 4, T = L % 4;
    if (!SharedA)
      readAFragment(F, Slot + NAcc, G, T, A);
    for (unsigned E = 0; E < NAcc; ++E)
      Acc[G + 8 * ((E >> 1) & 1)][8 * (E >> 2) + 2 * T + (E & 1)] =
          ScaleD ? rd<float>(F, Slot[E]) : 0.0f;
  }
  for (unsigned L = 0; L < 32; ++L) {
    uint8_t *F = W.frame(L);
    unsigned G = L / 4, T = L % 4;
    for (unsigned E = 0; E < NAcc; ++E) {
      unsigned Row = G + 8 * ((E >> 1) & 1), Col = 8 * (E >> 2) + 2 * T + (E & 1);
      double Sum = Acc[Row][Col];
      for (unsigned K = 0; K < 16; ++K)
        Sum += double(A[Row][K]) * double(B[K][Col]);
      wr<float>(F, I.Dst + 8 * E, Garbage[Col] ? std::nanf("") : float(Sum));
    }
  }
  return true;
}

bool waveFenceProxyAsync(const Inst &, WaveCtx &W) {
  if (W.R->P.UsesAsyncProxy)
    W.W->ProxyFences.push_back({W.WG->ProxySeq, W.Active, W.WG->Epoch});
  return true;
}

/// barrier.cta.arrive(.aligned) id, count: the whole warp arrives (its lanes
/// in lockstep), names the same id and count in every lane, and goes on; the
/// phase completes when the threads that arrived and those that wait at the
/// barrier (Runner::releaseNvvmBarriers) make the count, or here when the
/// arrivals alone make it.
bool waveBarrierArrive(const Inst &I, WaveCtx &W) {
  if (W.Active != W.W->liveLanes())
    return W.R->fail(I, W.WG, W.W, -1,
                     "divergent barrier arrive: some lanes of the warp are on another path or "
                     "exited");
  const unsigned First = unsigned(std::countr_zero(W.Active));
  const uint32_t Id = rd<uint32_t>(W.frame(First), I.A);
  const uint32_t Count = rd<uint32_t>(W.frame(First), I.B);
  for (unsigned L = First + 1; L < W.W->NumLanes; ++L)
    if (active(W, L) &&
        (rd<uint32_t>(W.frame(L), I.A) != Id || rd<uint32_t>(W.frame(L), I.B) != Count))
      return W.R->fail(I, W.WG, W.W, int(L),
                       "barrier id or thread count differs between the lanes of a warp");
  const uint64_t CtaThreads = W.R->Cfg.Block.count();
  if (Id > 15)
    return W.R->fail(I, W.WG, W.W, int(First), "barrier id " + std::to_string(Id) + " (0..15)");
  if (Count == 0 || Count % W.R->P.WaveLanes || Count > CtaThreads)
    return W.R->fail(I, W.WG, W.W, int(First),
                     "barrier arrive thread count " + std::to_string(Count) +
                         " is not a multiple of 32 from 32 up to the CTA's " +
                         std::to_string(CtaThreads));
  Workgroup &WG = *W.WG;
  if (WG.ArriveCount[Id] && WG.ArriveCount[Id] != Count)
    return W.R->fail(I, W.WG, W.W, int(First),
                     "warps arrive at barrier " + std::to_string(Id) + " with thread counts " +
                         std::to_string(WG.ArriveCount[Id]) + " and " + std::to_string(Count));
  WG.ArriveCount[Id] = Count;
  WG.Arrived[Id] += W.R->P.WaveLanes;
  if (WG.Arrived[Id] == Count) {
    // Nobody waits in this phase: it completes with the last arrival.
    WG.Arrived[Id] = WG.ArriveCount[Id] = 0;
    ++WG.Barriers;
  }
  return true;
}

bool waveSetMaxRegDec(const Inst &I, WaveCtx &W) {
  if (W.Active != W.W->liveLanes())
    return W.R->fail(I, W.WG, W.W, -1, "setmaxnreg executed by part of a warp");
  if (I.Aux > W.W->Regs)
    return W.R->fail(I, W.WG, W.W, -1,
                     "setmaxnreg.dec to " + std::to_string(I.Aux) + " registers, above the " +
                         std::to_string(W.W->Regs) + " the warp holds");
  W.WG->RegPool += uint64_t(W.R->P.WaveLanes) * (W.W->Regs - I.Aux);
  W.W->Regs = I.Aux;
  return true;
}

bool waveCheckAccumulatorRead(const Inst &I, WaveCtx &W) {
  if (W.W->WgmmaReads.empty())
    return true;
  return W.R->fail(I, W.WG, W.W, -1,
                   "reads a wgmma accumulator while a wgmma of the warp is in flight (before "
                   "its wgmma.wait_group)");
}

bool waveWgmmaCommit(const Inst &, WaveCtx &W) {
  ++W.W->WgmmaGroups;
  return true;
}

/// wgmma.wait_group N: every committed group but the N most recent is done;
/// its shared memory is released.
bool waveWgmmaWait(const Inst &I, WaveCtx &W) {
  std::vector<WgmmaRead> &Reads = W.W->WgmmaReads;
  llvm::erase_if(
      Reads, [&](const WgmmaRead &Rd) { return uint64_t(Rd.Group) + I.Aux < W.W->WgmmaGroups; });
  return true;
}

void opXorWords(const Inst &I, uint8_t *F) {
  const uint32_t Mask = rd<uint32_t>(F, I.Tab[I.Aux]);
  for (unsigned E = 0; E < I.Aux; ++E)
    wr<uint32_t>(F, I.Dst + 8 * E, rd<uint32_t>(F, I.Tab[E]) ^ Mask);
}

bool ctxCpAsync(const Inst &I, LaneCtx &C) {
  const uint32_t Dst = rd<uint32_t>(C.F, I.A);
  const uint64_t Src = rd<uint64_t>(C.F, I.B);
  const uint32_t Bytes = I.Aux;
  const uint32_t SrcBytes = (I.Pred & 1) ? rd<uint32_t>(C.F, I.C) : Bytes;
  if (Dst % Bytes || Src % Bytes)
    return C.R->fail(I, C,
                     "cp.async of " + std::to_string(Bytes) + " bytes from a source or to a " +
                         "destination not aligned to them",
                     Dst % Bytes ? uint64_t(Dst) : Src);
  if (SrcBytes > Bytes)
    return C.R->fail(I, C,
                     "cp.async source size " + std::to_string(SrcBytes) + " exceeds its " +
                         std::to_string(Bytes) + " bytes");
  C.W->AsyncCopies.push_back({C.Lane, C.W->AsyncGroups[C.Lane], Dst, Src, Bytes, SrcBytes, &I});
  return true;
}

bool ctxCpAsyncCommit(const Inst &, LaneCtx &C) {
  ++C.W->AsyncGroups[C.Lane];
  return true;
}

/// cp.async.wait_group N (Aux): the lane's copies of every committed group
/// but the N most recent land in shared memory now (Sub = 1: wait_all, which
/// commits the open group first).
bool ctxCpAsyncWait(const Inst &I, LaneCtx &C) {
  if (I.Sub)
    ++C.W->AsyncGroups[C.Lane];
  std::vector<AsyncCopy> &Copies = C.W->AsyncCopies;
  const uint32_t Committed = C.W->AsyncGroups[C.Lane];
  size_t Kept = 0;
  for (size_t K = 0; K < Copies.size(); ++K) {
    const AsyncCopy Cp = Copies[K];
    if (Cp.Lane != C.Lane || uint64_t(Cp.Group) + I.Aux >= Committed) {
      Copies[Kept++] = Cp;
      continue;
    }
    uint8_t Data[16] = {};
    if (Cp.SrcBytes) {
      const uint8_t *S = C.R->global(C, *Cp.I, Cp.SrcAddr, Cp.SrcBytes, false);
      if (!S)
        return false;
      std::memcpy(Data, S, Cp.SrcBytes);
    }
    uint8_t *D = C.R->lds(*Cp.I, *C.WG, *C.W, C.Lane, Cp.DstOff, Cp.Bytes, true);
    if (!D)
      return false;
    std::memcpy(D, Data, Cp.Bytes);
  }
  Copies.resize(Kept);
  return true;
}

/// `Words` packed bf16x2 added at Addr (aligned to their size), each half
/// rounded to nearest even, subnormals kept; Slots: the words' frame slots.
static bool redAddBf16x2Words(const Inst &I, LaneCtx &C, const char *Name, uint64_t Addr,
                              llvm::ArrayRef<uint32_t> Slots) {
  const unsigned Bytes = 4 * Slots.size();
  if (Addr % Bytes)
    return C.R->fail(I, C,
                     std::string(Name) + " at an address not aligned to " + std::to_string(Bytes) +
                         " bytes",
                     Addr);
  AtomicGuard Guard(*C.R, true);
  uint8_t *H = C.R->global(C, I, Addr, Bytes, true);
  if (!H)
    return false;
  for (size_t W = 0; W < Slots.size(); ++W)
    applyRmw(llvm::AtomicRMWInst::FAdd, EK::BF16, 16, 2, H + 4 * W, C.F + Slots[W]);
  return true;
}

/// red.relaxed.gpu.global.add.noftz.bf16x2 [A], B.
bool ctxRedAddBf16x2(const Inst &I, LaneCtx &C) {
  return redAddBf16x2Words(I, C, "red.global.add.bf16x2", rd<uint64_t>(C.F, I.A), {I.B});
}

/// red.relaxed.gpu.global.add.noftz.v4.bf16x2 [A], {B0, B1, B2, B3}: 16
/// bytes (8 bf16). I.Tab: the address's and the four words' slots.
bool ctxRedAddV4Bf16x2(const Inst &I, LaneCtx &C) {
  return redAddBf16x2Words(I, C, "red.global.add.v4.bf16x2", rd<uint64_t>(C.F, I.Tab[0]),
                           llvm::ArrayRef<uint32_t>(I.Tab + 1, 4));
}

} // namespace moegen::emu
