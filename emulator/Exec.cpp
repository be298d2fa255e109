//===- Exec.cpp - The interpreter: lanes, waves, workgroups, barriers -------===//
//
// The lanes of a wave run in lockstep, like the hardware under its EXEC mask:
// where they diverge at a branch, each path runs in turn and its lanes wait at
// the branch's immediate post-dominator until the other paths arrive (a
// reconvergence stack per wave). A wave operation runs once for the lanes of
// the path (the active lanes); a barrier releases when every wave of the
// workgroup has all its live lanes waiting at it.
//
//===----------------------------------------------------------------------===//
#include "emulator/Ops.h"
#include "emulator/Runner.h"

#include "llvm/IR/Instruction.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"

#include <bit>
#include <cmath>

using namespace llvm;

namespace moegen::emu {

bool Runner::fail(const Inst &I, const Workgroup *WG, const Wave *W, int Lane,
                  const std::string &Msg, std::optional<uint64_t> Addr) {
  std::lock_guard<std::mutex> Guard(FailLock);
  if (Failed)
    return false;
  Failed = true;
  raw_string_ostream OS(Message);
  OS << "kernel '" << P.Name << "': " << Msg;
  if (WG)
    OS << "\n  workgroup (" << WG->Id[0] << ", " << WG->Id[1] << ", " << WG->Id[2] << ")";
  if (W)
    OS << (P.Nvptx ? " warp " : " wave ") << W->Index;
  if (Lane >= 0 && W) {
    unsigned T = W->Index * P.WaveLanes + unsigned(Lane);
    unsigned BX = Cfg.Block.X, BY = Cfg.Block.Y;
    OS << " lane " << Lane << " (thread " << T % BX << ", " << (T / BX) % BY << ", "
       << T / (BX * BY) << ")";
  }
  if (Addr)
    OS << "\n  address " << format_hex(*Addr, 18);
  if (I.Src)
    OS << "\n  instruction:" << *I.Src;
  return false;
}

uint8_t *Runner::globalSlow(LaneCtx &C, const Inst &I, uint64_t Addr, uint32_t Bytes, bool Write) {
  if ((Addr & ApertureMask) == LdsAperture)
    return lds(I, *C.WG, *C.W, C.Lane, uint32_t(Addr), Bytes, Write);
  if ((Addr & ApertureMask) == PrivAperture)
    return priv(C, I, uint32_t(Addr), Bytes);
  uint8_t *H = Mem.translate(Addr, Bytes, C.WG->MemHint);
  if (!H)
    fail(I, C,
         std::string("out-of-bounds global ") + (Write ? "write" : "read") + " of " +
             std::to_string(Bytes) + " bytes",
         Addr);
  return H;
}

bool Runner::asyncProxyRead(const Inst &I, Workgroup &WG, Wave &W, uint32_t Off, uint32_t Bytes) {
  for (uint32_t B = Off; B < Off + Bytes; ++B) {
    const uint64_t Seq = WG.GenericWriteSeq[B];
    if (!Seq)
      continue;
    const unsigned WriterWave = WG.GenericWriter[B] / 64, Lane = WG.GenericWriter[B] % 64;
    const std::vector<ProxyFence> &Fences = WG.Waves[WriterWave].ProxyFences;
    // The writer's first fence after the write (fences record the ProxySeq
    // they cover, so they are in order).
    auto F = std::partition_point(Fences.begin(), Fences.end(),
                                  [&](const ProxyFence &Fe) { return Fe.Seq < Seq; });
    while (F != Fences.end() && !(F->Mask >> Lane & 1))
      ++F;
    const bool Unfenced = F == Fences.end();
    if (Unfenced || (F->Epoch == WG.Epoch && WriterWave != W.Index))
      return fail(I, &WG, &W, -1,
                  "wgmma reads shared memory that warp " + std::to_string(WriterWave) + " lane " +
                      std::to_string(Lane) +
                      (Unfenced ? " wrote through the generic proxy (a store or cp.async) with "
                                  "no fence.proxy.async after the write"
                                : " fenced to the async proxy with no barrier between its "
                                  "fence.proxy.async and the wgmma"),
                  B);
  }
  return true;
}

uint8_t *Runner::priv(LaneCtx &C, const Inst &I, uint32_t Off, uint32_t Bytes) {
  if (uint64_t(Off) + Bytes > P.PrivateBytes) {
    fail(I, C, "out-of-bounds private (scratch) access of " + std::to_string(Bytes) + " bytes",
         Off);
    return nullptr;
  }
  return C.W->Private.data() + size_t(C.Lane) * P.PrivateBytes + Off;
}

static const char *issueText(LdsShadow::Issue I) {
  switch (I) {
  case LdsShadow::Issue::Uninit:
    return "read of never-written LDS";
  case LdsShadow::Issue::RaceWriteRead:
    return "LDS race: read of a byte another wave wrote with no barrier in between";
  case LdsShadow::Issue::RaceReadWrite:
    return "LDS race: write of a byte another wave read with no barrier in between";
  case LdsShadow::Issue::RaceWriteWrite:
    return "LDS race: write of a byte another wave wrote with no barrier in between";
  default:
    return "";
  }
}

uint8_t *Runner::lds(const Inst &I, Workgroup &WG, Wave &W, unsigned Lane, uint32_t Off,
                     uint32_t Bytes, bool Write, bool *Uninit) {
  if (uint64_t(Off) + Bytes > LdsBytes) {
    fail(I, &WG, &W, int(Lane),
         std::string("out-of-bounds LDS ") + (Write ? "write" : "read") + " of " +
             std::to_string(Bytes) + " bytes (LDS size " + std::to_string(LdsBytes) + ")",
         Off);
    return nullptr;
  }
  if (Write && !W.WgmmaReads.empty())
    for (const WgmmaRead &Rd : W.WgmmaReads)
      if (Off < Rd.Off + Rd.Bytes && Rd.Off < Off + Bytes) {
        fail(I, &WG, &W, int(Lane),
             "shared memory written while a wgmma of this warp may still read it (before its "
             "wgmma.wait_group)",
             std::max(Off, Rd.Off));
        return nullptr;
      }
  if (Write && P.UsesAsyncProxy) {
    std::fill_n(WG.GenericWriteSeq.begin() + Off, Bytes, ++WG.ProxySeq);
    std::fill_n(WG.GenericWriter.begin() + Off, Bytes, uint16_t(W.Index * 64 + Lane));
  }
  bool Races = O.CheckLdsRaces;
  if (Races || O.CheckLdsUninit || O.CheckBarrierFences) {
    LdsShadow::Result Res =
        Write ? WG.Shadow.write(Off, Bytes, uint16_t(W.Index), WG.Epoch)
              : WG.Shadow.read(Off, Bytes, uint16_t(W.Index), WG.Epoch, O.CheckLdsUninit);
    bool IsRace = Res.What != LdsShadow::Issue::None && Res.What != LdsShadow::Issue::Uninit;
    bool IsUninit = Res.What == LdsShadow::Issue::Uninit && O.CheckLdsUninit;
    if (IsUninit && !(IsRace && Races) && Uninit) {
      *Uninit = true;
    } else if ((IsRace && Races) || IsUninit) {
      std::string Msg = issueText(Res.What);
      if (IsRace)
        Msg += " (other wave " + std::to_string(Res.OtherWave) + ")";
      fail(I, &WG, &W, int(Lane), Msg, Res.Offset);
      return nullptr;
    }
    if (Write) {
      W.LastLdsWrite[Lane] = WG.Tick++;
    } else if (Res.CrossWave && O.CheckBarrierFences && !P.Nvptx) {
      // Barrier-separated communication needs release (writer) and acquire
      // (reader) fences at workgroup scope: s_barrier alone orders nothing.
      const Wave &Writer = WG.Waves[Res.WriterWave];
      if (Res.WriterEpoch < Writer.ReleasedEpoch.size() && !Writer.ReleasedEpoch[Res.WriterEpoch]) {
        fail(I, &WG, &W, int(Lane),
             "LDS read of data wave " + std::to_string(Res.WriterWave) +
                 " wrote before a barrier without a workgroup release fence between its store "
                 "and the barrier",
             Res.Offset);
        return nullptr;
      }
      if (W.AcquireEpoch[Lane] <= Res.WriterEpoch) {
        fail(I, &WG, &W, int(Lane),
             "LDS read of data wave " + std::to_string(Res.WriterWave) +
                 " wrote before a barrier without a workgroup acquire fence after the barrier",
             Res.Offset);
        return nullptr;
      }
    }
  }
  return WG.Lds.data() + Off;
}

static void decodeRsrc(const uint8_t *R, uint64_t &Base, uint32_t &Stride, uint32_t &NumRecords) {
  uint32_t W1 = rd<uint32_t>(R, 4);
  Base = rsrcBase(R);
  Stride = (W1 >> 16) & 0x3FFF;
  NumRecords = rd<uint32_t>(R, 8);
}

/// Byte and short accesses are one element (docs/gfx950-facts.md §3.3); one
/// of a dword or more that is partly in range straddles.
static BufferRange bufferRange(uint32_t Offset, uint32_t Bytes, uint32_t NR) {
  if (uint64_t(Offset) + Bytes <= NR)
    return BufferRange::In;
  return Bytes >= 4 && Offset < NR ? BufferRange::Straddles : BufferRange::Out;
}

bool Runner::rawBufferSlow(LaneCtx &C, const Inst &I, const uint8_t *Rsrc, uint32_t Offset,
                           uint32_t Bytes, uint64_t &Base, BufferRange &Range) {
  uint32_t Stride, NR;
  decodeRsrc(Rsrc, Base, Stride, NR);
  if (Stride != 0)
    return fail(I, C, "buffer resource with a non-zero stride is not supported");
  Range = bufferRange(Offset, Bytes, NR);
  // Per dword, the in-range part would be transferred (§3.3, R2); the MLIR
  // contract calls partially out-of-range vectors chipset dependent (L4).
  if (Range == BufferRange::Straddles)
    return fail(I, C,
                "buffer access of " + std::to_string(Bytes) + " bytes at offset " +
                    std::to_string(Offset) + " straddles num_records " + std::to_string(NR) +
                    " (partly in range: behaviour uncertain [U])",
                Base + Offset);
  return true;
}

uint8_t *Runner::bufferAtomic(LaneCtx &C, const Inst &I, const uint8_t *Rsrc, uint32_t Offset,
                              uint32_t Bytes) {
  uint64_t Base;
  BufferRange Range;
  if (!rawBuffer(C, I, Rsrc, Offset, Bytes, Base, Range))
    return nullptr;
  if (Range == BufferRange::In)
    return global(C, I, Base + Offset, Bytes, true);
  // Sources disagree on gfx950 (dropped, or a memory fault:
  // docs/gfx950-facts.md §3.3), so no kernel may rely on either.
  fail(I, C,
       "out-of-range buffer atomic (offset " + std::to_string(Offset) + ", " +
           std::to_string(Bytes) + " bytes): dropped or faulting on hardware, refused here");
  return nullptr;
}

void Runner::takeEdge(uint32_t EdgeIdx, uint8_t *Base, size_t Stride, uint64_t Mask) const {
  const Edge &E = P.Edges[EdgeIdx];
  const Move *M = P.Moves.data() + E.FirstMove;
  // Move by move, each for every lane: one size per inner loop.
  auto Lanes = [&](uint32_t Dst, uint32_t Src, uint32_t Bytes) {
    if (Mask == ~0ull) {
      for (uint8_t *F = Base, *End = Base + 64 * Stride; F != End; F += Stride)
        moveBytes(F + Dst, F + Src, Bytes);
      return;
    }
    for (uint64_t Ls = Mask; Ls; Ls &= Ls - 1) {
      uint8_t *F = Base + size_t(std::countr_zero(Ls)) * Stride;
      moveBytes(F + Dst, F + Src, Bytes);
    }
  };
  if (!E.NeedsTemp) {
    for (uint32_t K = 0; K < E.NumMoves; ++K)
      Lanes(M[K].Dst, M[K].Src, M[K].Bytes);
    return;
  }
  for (uint32_t K = 0; K < E.NumMoves; ++K)
    Lanes(M[K].TempOff, M[K].Src, M[K].Bytes);
  for (uint32_t K = 0; K < E.NumMoves; ++K)
    Lanes(M[K].Dst, M[K].TempOff, M[K].Bytes);
}

/// Runs the lanes of Mask, the top path of the wave, in lockstep from the
/// path's pc: each instruction once for every lane (lanes in ascending
/// order); a wave operation runs once with Mask as the active lanes. Stops at
/// a barrier, at the end, where the path reaches its reconvergence pc, or
/// where it splits (the new paths are pushed).
Runner::Stop Runner::runGroup(Workgroup &WG, Wave &W, uint64_t Mask) {
  const Inst *Code = P.Code.data();
  uint8_t *Base = W.Frames.data();
  const size_t Stride = P.FrameBytes;
  const uint64_t Lanes = uint64_t(std::popcount(Mask));
  uint32_t Pc = W.Paths.back().Pc;
  uint64_t Count = 0; // instructions run (each for every lane of the group)
  Stop S = Stop::Done;
  // Lanes per branch target (at most one per switch case and the default).
  llvm::SmallVector<std::pair<uint32_t, uint64_t>, 4> Targets;
  // The lanes of the group in ascending order; all 64 (the common case) by
  // a plain stride, which the compiler unrolls.
#define FOR_LANES(...)                                                                             \
  if (Mask == ~0ull) {                                                                             \
    for (uint8_t *F = Base, *End = Base + 64 * Stride; F != End; F += Stride) {                    \
      __VA_ARGS__;                                                                                 \
    }                                                                                              \
  } else {                                                                                         \
    for (uint64_t M = Mask; M; M &= M - 1) {                                                       \
      uint8_t *F = Base + size_t(std::countr_zero(M)) * Stride;                                    \
      __VA_ARGS__;                                                                                 \
    }                                                                                              \
  }
  for (;;) {
    const Inst &I = Code[Pc];
    ++Count;
    switch (I.K) {
    case Kind::Pure: {
      PureFn Fn = I.Fn.Pure;
      FOR_LANES(Fn(I, F))
      ++Pc;
      continue;
    }
#define BIN(K, T, EXPR)                                                                            \
  case Kind::K: {                                                                                  \
    FOR_LANES({                                                                                    \
      T A = rd<T>(F, I.A), B = rd<T>(F, I.B);                                                      \
      wr<T>(F, I.Dst, T(EXPR));                                                                    \
    })                                                                                             \
    ++Pc;                                                                                          \
    continue;                                                                                      \
  }
      BIN(AddI32, uint32_t, A + B)
      BIN(SubI32, uint32_t, A - B)
      BIN(MulI32, uint32_t, A * B)
      BIN(AndI32, uint32_t, A & B)
      BIN(OrI32, uint32_t, A | B)
      BIN(XorI32, uint32_t, A ^ B)
      BIN(ShlI32, uint32_t, B >= 32 ? 0 : A << B)
      BIN(LShrI32, uint32_t, B >= 32 ? 0 : A >> B)
      BIN(AddI64, uint64_t, A + B)
      BIN(SubI64, uint64_t, A - B)
      BIN(MulI64, uint64_t, A * B)
      BIN(AndI64, uint64_t, A & B)
      BIN(OrI64, uint64_t, A | B)
      BIN(ShlI64, uint64_t, B >= 64 ? 0 : A << B)
      BIN(LShrI64, uint64_t, B >= 64 ? 0 : A >> B)
      BIN(AddF32, float, A + B)
      BIN(SubF32, float, A - B)
      BIN(MulF32, float, A *B)
#undef BIN
    case Kind::FmaF32:
      FOR_LANES(
          wr<float>(F, I.Dst, std::fma(rd<float>(F, I.A), rd<float>(F, I.B), rd<float>(F, I.C))))
      ++Pc;
      continue;
    case Kind::ICmpI32:
      FOR_LANES(F[I.Dst] = evalICmp(I.Pred, rd<uint32_t>(F, I.A), rd<uint32_t>(F, I.B), 32))
      ++Pc;
      continue;
    case Kind::ICmpI64:
      FOR_LANES(F[I.Dst] = evalICmp(I.Pred, rd<uint64_t>(F, I.A), rd<uint64_t>(F, I.B), 64))
      ++Pc;
      continue;
    case Kind::Copy4:
    case Kind::TruncI64I32:
      FOR_LANES(wr<uint32_t>(F, I.Dst, rd<uint32_t>(F, I.A)))
      ++Pc;
      continue;
    case Kind::Copy8:
      FOR_LANES(wr<uint64_t>(F, I.Dst, rd<uint64_t>(F, I.A)))
      ++Pc;
      continue;
    case Kind::ZExtI32I64:
      FOR_LANES(wr<uint64_t>(F, I.Dst, rd<uint32_t>(F, I.A)))
      ++Pc;
      continue;
    case Kind::SExtI32I64:
      FOR_LANES(wr<uint64_t>(F, I.Dst, uint64_t(int64_t(rd<int32_t>(F, I.A)))))
      ++Pc;
      continue;
    case Kind::SIToFPI32F32:
      FOR_LANES(wr<float>(F, I.Dst, float(rd<int32_t>(F, I.A))))
      ++Pc;
      continue;
    case Kind::ZExtI8I32:
      FOR_LANES(wr<uint32_t>(F, I.Dst, F[I.A]))
      ++Pc;
      continue;
    case Kind::Concat: {
      const size_t Half = size_t(I.Aux) * I.D;
      FOR_LANES({
        moveBytes(F + I.Dst, F + I.A, Half);
        moveBytes(F + I.Dst + Half, F + I.B, Half);
      })
      ++Pc;
      continue;
    }
    case Kind::GepP64:
    case Kind::GepP32:
    case Kind::GepPBuf: {
      // opGep for its common forms (fastKind): the same offset arithmetic.
      const uint32_t *T = I.Tab;
      const uint64_t Off = uint64_t(T[0]) | (uint64_t(T[1]) << 32);
      const bool Indexed = T[2] == 1, Wide = (T[4] & 0xFF) == 64;
      const uint64_t Scale = Indexed ? uint64_t(T[5]) | (uint64_t(T[6]) << 32) : 0;
      const uint32_t IdxSlot = Indexed ? T[3] : 0;
      auto index = [&](const uint8_t *F) -> uint64_t {
        if (!Indexed)
          return 0;
        int64_t Idx = Wide ? rd<int64_t>(F, IdxSlot) : int64_t(rd<int32_t>(F, IdxSlot));
        return uint64_t(Idx) * Scale;
      };
      if (I.K == Kind::GepP64)
        FOR_LANES(wr<uint64_t>(F, I.Dst, rd<uint64_t>(F, I.A) + Off + index(F)))
      else if (I.K == Kind::GepP32)
        FOR_LANES(wr<uint32_t>(F, I.Dst, uint32_t(rd<uint32_t>(F, I.A) + Off + index(F))))
      else
        FOR_LANES({
          const uint32_t Offset = uint32_t(rd<uint32_t>(F, I.A + 16) + Off + index(F));
          moveFixed<16>(F + I.Dst, F + I.A);
          wr<uint32_t>(F, I.Dst + 16, Offset);
        })
      ++Pc;
      continue;
    }
    case Kind::Ctx:
      for (uint64_t M = Mask; M; M &= M - 1) {
        LaneCtx C = laneCtx(WG, W, unsigned(std::countr_zero(M)));
        if (!I.Fn.Ctx(I, C)) {
          S = Stop::Error;
          goto out;
        }
      }
      ++Pc;
      continue;
    case Kind::Lanes: {
      WaveCtx WC{this, &WG, &W, Mask};
      if (!reinterpret_cast<WaveFn>(I.Fn.Wave)(I, WC)) {
        S = Stop::Error;
        goto out;
      }
      ++Pc;
      continue;
    }
    case Kind::WaveOp: {
      WaveCtx WC{this, &WG, &W, Mask};
      ++WG.WaveOps;
      if (!reinterpret_cast<WaveFn>(I.Fn.Wave)(I, WC)) {
        S = Stop::Error;
        goto out;
      }
      ++Pc;
      continue;
    }
    case Kind::Br:
      takeEdge(I.A, Base, Stride, Mask);
      Targets.assign(1, {P.Edges[I.A].Target, Mask});
      break;
    case Kind::CondBr: {
      // The lanes of each way, then each edge's moves for its lanes.
      uint64_t Taken = 0;
      for (uint64_t M = Mask; M; M &= M - 1) {
        const unsigned L = unsigned(std::countr_zero(M));
        Taken |= uint64_t(Base[size_t(L) * Stride + I.A] & 1) << L;
      }
      takeEdge(I.B, Base, Stride, Taken);
      takeEdge(I.C, Base, Stride, Mask & ~Taken);
      Targets.clear();
      const uint32_t TrueTarget = P.Edges[I.B].Target, FalseTarget = P.Edges[I.C].Target;
      if (TrueTarget == FalseTarget)
        Targets.push_back({TrueTarget, Mask});
      else
        for (const auto &[T, Lanes] : {std::pair{TrueTarget, Taken}, {FalseTarget, Mask & ~Taken}})
          if (Lanes)
            Targets.push_back({T, Lanes});
      break;
    }
    case Kind::Switch:
      Targets.clear();
      for (uint64_t M = Mask; M; M &= M - 1) {
        unsigned L = unsigned(std::countr_zero(M));
        uint8_t *F = Base + size_t(L) * Stride;
        uint64_t V = readInt(F + I.A, I.Pred);
        uint32_t E = I.B;
        for (uint32_t K = 0; K < I.Aux2; ++K)
          if (P.Cases[I.Aux + K].Value == V) {
            E = P.Cases[I.Aux + K].Edge;
            break;
          }
        takeEdge(E, Base, Stride, 1ull << L);
        uint32_t T = P.Edges[E].Target;
        auto It = llvm::find_if(Targets, [T](const auto &X) { return X.first == T; });
        if (It == Targets.end())
          Targets.push_back({T, 1ull << L});
        else
          It->second |= 1ull << L;
      }
      break;
    case Kind::Ret:
      S = Stop::Done;
      goto out;
    case Kind::Unreachable:
      fail(I, &WG, &W, std::countr_zero(Mask), "reached 'unreachable'");
      S = Stop::Error;
      goto out;
    case Kind::Barrier:
      W.Paths.back().Pc = Pc;
      S = Stop::Barrier;
      goto out;
    }
    // The block ended: bound the run so that a kernel that never ends is
    // reported.
    if (O.MaxLaneInstructions && WG.LaneInsts + Count * Lanes > O.MaxLaneInstructions) {
      fail(I, &WG, &W, std::countr_zero(Mask),
           "lane-instruction limit exceeded (kernel does not terminate?)");
      S = Stop::Error;
      break;
    }
    if (Targets.size() == 1) {
      // Every lane goes the same way: on, unless the path has come back to
      // where the lanes of the enclosing path wait.
      Pc = Targets[0].first;
      if (Pc == W.Paths.back().Rpc) {
        S = Stop::Reconverged;
        break;
      }
      continue;
    }
    splitPath(W, I.D, Targets);
    S = Stop::Split;
    break;
  }
#undef FOR_LANES
out:
  WG.LaneInsts += Count * Lanes;
  return S;
}

/// The lanes of the top path went to several targets at a branch whose
/// immediate post-dominator is Join: they run one target after another (the
/// lowest pc first) and wait at Join, as the hardware masks EXEC until its
/// paths meet. Lanes that went straight to Join wait there.
void Runner::splitPath(Wave &W, uint32_t Join,
                       llvm::SmallVectorImpl<std::pair<uint32_t, uint64_t>> &Targets) {
  PathEntry &Top = W.Paths.back();
  // The path below already waits at Join with these lanes: reuse it.
  if (Join == Top.Rpc && W.Paths.size() > 1)
    W.Paths.pop_back();
  else
    Top.Pc = Join;
  llvm::sort(Targets, [](const auto &A, const auto &B) { return A.first > B.first; });
  for (const auto &[Target, Lanes] : Targets)
    if (Target != Join)
      W.Paths.push_back({Target, Join, Lanes});
}

LaneCtx Runner::laneCtx(Workgroup &WG, Wave &W, unsigned L) {
  LaneCtx C;
  C.R = this;
  C.WG = &WG;
  C.W = &W;
  C.Lane = L;
  C.F = frame(W, L);
  return C;
}

uint32_t Runner::workItemId(const LaneCtx &C, unsigned Dim) const {
  const uint32_t T = C.W->Index * P.WaveLanes + C.Lane, X = Cfg.Block.X, Y = Cfg.Block.Y;
  return Dim == 0 ? T % X : Dim == 1 ? (T / X) % Y : T / (X * Y);
}

/// Runs the wave's paths until it finishes or waits at a barrier. A barrier
/// must be reached by every live lane of the wave, at the same instruction.
bool Runner::runWave(Workgroup &WG, Wave &W) {
  const uint64_t AllLanes = W.allLanes();
  while (!W.Paths.empty()) {
    PathEntry &Top = W.Paths.back();
    uint64_t Mask = Top.Mask & ~W.DoneLanes;
    if (!Mask || Top.Pc == Top.Rpc) {
      W.Paths.pop_back();
      continue;
    }
    switch (runGroup(WG, W, Mask)) {
    case Stop::Error:
      return false;
    case Stop::Done:
      W.DoneLanes |= Mask;
      W.Paths.pop_back();
      continue;
    case Stop::Reconverged:
      W.Paths.pop_back();
      continue;
    case Stop::Split:
      continue;
    case Stop::Barrier: {
      const Inst &I = P.Code[W.Paths.back().Pc];
      uint64_t Elsewhere = AllLanes & ~W.DoneLanes & ~Mask;
      if (Elsewhere)
        return fail(I, &WG, &W, std::countr_zero(Mask),
                    "divergent barrier: lane " + std::to_string(std::countr_zero(Elsewhere)) +
                        " of this wave is on another path while other lanes wait at the barrier");
      if (W.DoneLanes)
        return fail(I, &WG, &W, std::countr_zero(Mask),
                    "divergent barrier: lane " + std::to_string(std::countr_zero(W.DoneLanes)) +
                        " of this wave exited while other lanes wait at the barrier");
      W.AtBarrier = true;
      return true;
    }
    }
  }
  return true;
}

bool Runner::releaseBarrier(Workgroup &WG) {
  int Waiting = -1, Exited = -1;
  for (Wave &W : WG.Waves)
    (W.AtBarrier ? Waiting : Exited) = int(W.Index);
  if (Waiting < 0)
    return true;
  if (Exited >= 0) {
    Wave &W = WG.Waves[unsigned(Waiting)];
    return fail(P.Code[W.Paths.back().Pc], &WG, &W, -1,
                "barrier deadlock: wave " + std::to_string(Exited) +
                    " exited without reaching the barrier this wave waits at");
  }
  // The epoch ends: record which waves released all their LDS writes.
  for (Wave &W : WG.Waves) {
    bool Released = true;
    for (unsigned L = 0; L < W.NumLanes; ++L) {
      if (W.LastLdsWrite[L] && W.LastRelease[L] < W.LastLdsWrite[L])
        Released = false;
      W.LastLdsWrite[L] = 0;
    }
    W.AtBarrier = false;
    ++W.Paths.back().Pc;
    if (W.ReleasedEpoch.size() <= WG.Epoch)
      W.ReleasedEpoch.resize(WG.Epoch + 1, 1);
    W.ReleasedEpoch[WG.Epoch] = Released;
  }
  ++WG.Epoch;
  ++WG.Barriers;
  return true;
}

/// NVVM barriers (`bar.sync` / `barrier.cta.*`): each waiting warp names a
/// barrier id and, for a named barrier of some warps, a thread count. A
/// barrier releases when the warps at it hold all the CTA's threads (no
/// count) or, with the threads that arrived at it without waiting
/// (`barrier.cta.arrive`, waveBarrierArrive), exactly `count` threads; a
/// reduction barrier gives every
/// participant the OR of their predicates. Barriers order shared memory on
/// their own (no fences). Every release ends the race check's epoch, so a
/// named barrier of two warps also separates the other warps' accesses
/// (races across it between non-participants go unreported).
bool Runner::releaseNvvmBarriers(Workgroup &WG) {
  struct Group {
    uint32_t Id, Count = 0, Threads = 0;
    llvm::SmallVector<Wave *, 8> Waves;
  };
  llvm::SmallVector<Group, 4> Groups;
  int Exited = -1;
  uint32_t CtaThreads = uint32_t(Cfg.Block.count());
  // setmaxnreg.inc: a warp goes on once the pool holds its registers.
  bool Granted = false;
  Wave *RegWaiter = nullptr;
  for (Wave &W : WG.Waves) {
    if (!W.AtBarrier)
      continue;
    const Inst &I = P.Code[W.Paths.back().Pc];
    if (!(I.Pred & BarrierRegInc))
      continue;
    if (I.Aux < W.Regs)
      return fail(I, &WG, &W, -1,
                  "setmaxnreg.inc to " + std::to_string(I.Aux) + " registers, below the " +
                      std::to_string(W.Regs) + " the warp holds");
    uint64_t Need = uint64_t(P.WaveLanes) * (I.Aux - W.Regs);
    if (WG.RegPool < Need) {
      RegWaiter = &W;
      continue;
    }
    WG.RegPool -= Need;
    W.Regs = I.Aux;
    W.AtBarrier = false;
    ++W.Paths.back().Pc;
    Granted = true;
  }
  if (Granted)
    return true;
  for (Wave &W : WG.Waves) {
    if (!W.AtBarrier) {
      Exited = int(W.Index);
      continue;
    }
    const Inst &I = P.Code[W.Paths.back().Pc];
    if (I.Pred & BarrierRegInc)
      continue;
    unsigned First = unsigned(std::countr_zero(W.Paths.back().Mask & ~W.DoneLanes));
    const uint8_t *F = frame(W, First);
    uint32_t Id = (I.Pred & BarrierHasId) ? rd<uint32_t>(F, I.A) : 0;
    uint32_t Count = (I.Pred & BarrierHasCount) ? rd<uint32_t>(F, I.B) : 0;
    for (unsigned L = First + 1; L < W.NumLanes; ++L) {
      const uint8_t *G = frame(W, L);
      if (((I.Pred & BarrierHasId) && rd<uint32_t>(G, I.A) != Id) ||
          ((I.Pred & BarrierHasCount) && rd<uint32_t>(G, I.B) != Count))
        return fail(I, &WG, &W, int(L),
                    "barrier id or thread count differs between the lanes of a warp");
    }
    if (Id > 15)
      return fail(I, &WG, &W, int(First), "barrier id " + std::to_string(Id) + " (0..15)");
    if (Count && (Count % P.WaveLanes || Count > CtaThreads))
      return fail(I, &WG, &W, int(First),
                  "barrier thread count " + std::to_string(Count) +
                      " is not a multiple of 32 up to the CTA's " + std::to_string(CtaThreads));
    Group *G = nullptr;
    for (Group &Other : Groups)
      if (Other.Id == Id)
        G = &Other;
    if (!G) {
      Groups.push_back({Id, Count, 0, {}});
      G = &Groups.back();
    } else if (G->Count != Count) {
      return fail(I, &WG, &W, int(First),
                  "warps wait at barrier " + std::to_string(Id) + " with thread counts " +
                      std::to_string(G->Count) + " and " + std::to_string(Count));
    }
    G->Threads += P.WaveLanes;
    G->Waves.push_back(&W);
  }
  auto regDeadlock = [&] {
    const Inst &I = P.Code[RegWaiter->Paths.back().Pc];
    return fail(I, &WG, RegWaiter, -1,
                "setmaxnreg.inc to " + std::to_string(I.Aux) + " registers waits forever: " +
                    std::to_string(uint64_t(P.WaveLanes) * (I.Aux - RegWaiter->Regs)) +
                    " more for the warp, " + std::to_string(WG.RegPool) +
                    " released by setmaxnreg.dec and not yet taken");
  };
  if (Groups.empty())
    return RegWaiter ? regDeadlock() : true;
  bool Released = false;
  for (Group &G : Groups) {
    if (uint32_t Arrived = WG.Arrived[G.Id]) {
      if (WG.ArriveCount[G.Id] != G.Count) {
        Wave &W = *G.Waves.front();
        return fail(P.Code[W.Paths.back().Pc], &WG, &W, -1,
                    "warps wait at barrier " + std::to_string(G.Id) + " with thread count " +
                        std::to_string(G.Count) + " where others arrived with " +
                        std::to_string(WG.ArriveCount[G.Id]));
      }
      G.Threads += Arrived;
    }
    uint32_t Need = G.Count ? G.Count : CtaThreads;
    if (G.Threads > Need) {
      Wave &W = *G.Waves.back();
      uint32_t Arrived = WG.Arrived[G.Id];
      return fail(P.Code[W.Paths.back().Pc], &WG, &W, -1,
                  std::to_string(G.Threads) + " threads wait at barrier " + std::to_string(G.Id) +
                      (Arrived
                           ? " or arrived at it (" + std::to_string(Arrived) + " without waiting)"
                           : std::string()) +
                      ", which releases " + std::to_string(Need));
    }
    // The CTA's barrier needs every warp; the partial last warp counts whole.
    if (G.Count ? G.Threads < Need : G.Waves.size() < WG.Waves.size())
      continue;
    const Inst &I = P.Code[G.Waves.front()->Paths.back().Pc];
    bool Or = false;
    if (I.Pred & BarrierRedOr)
      for (Wave *W : G.Waves)
        for (unsigned L = 0; L < W->NumLanes; ++L)
          Or |= frame(*W, L)[I.C] & 1;
    WG.Arrived[G.Id] = WG.ArriveCount[G.Id] = 0;
    for (Wave *W : G.Waves) {
      if (I.Pred & BarrierRedOr)
        for (unsigned L = 0; L < W->NumLanes; ++L)
          frame(*W, L)[I.Dst] = Or;
      W->AtBarrier = false;
      ++W->Paths.back().Pc;
    }
    Released = true;
  }
  if (!Released && RegWaiter)
    return regDeadlock();
  if (!Released) {
    Wave &W = *Groups.front().Waves.front();
    std::string Why = Exited >= 0 ? "warp " + std::to_string(Exited) + " exited without reaching it"
                                  : "no barrier has all its threads";
    return fail(P.Code[W.Paths.back().Pc], &WG, &W, -1,
                "barrier deadlock: barrier " + std::to_string(Groups.front().Id) +
                    " never releases (" + Why + ")");
  }
  ++WG.Epoch;
  ++WG.Barriers;
  // A wgmma still in flight reads its shared memory in the new epoch too.
  if (O.CheckLdsRaces)
    for (Wave &W : WG.Waves)
      for (const WgmmaRead &Rd : W.WgmmaReads)
        WG.Shadow.read(Rd.Off, Rd.Bytes, uint16_t(W.Index), WG.Epoch, false);
  return true;
}

bool Runner::runOne(Workgroup &WG, uint64_t Linear, unsigned NumWaves, uint64_t WorkItems) {
  uint32_t X = uint32_t(Linear % Cfg.Grid.X);
  uint32_t Y = uint32_t((Linear / Cfg.Grid.X) % Cfg.Grid.Y);
  uint32_t Z = uint32_t(Linear / (uint64_t(Cfg.Grid.X) * Cfg.Grid.Y));
  WG.Id = {X, Y, Z};
  WG.Epoch = 1;
  // With the uninitialized-read check on, stale LDS is never observed.
  if (!O.CheckLdsUninit)
    std::fill(WG.Lds.begin(), WG.Lds.end(), 0);
  if (O.CheckLdsRaces || O.CheckLdsUninit || O.CheckBarrierFences)
    WG.Shadow.reset(LdsBytes);
  for (unsigned WI = 0; WI < NumWaves; ++WI) {
    Wave &W = WG.Waves[WI];
    W.Index = WI;
    W.NumLanes = unsigned(std::min<uint64_t>(P.WaveLanes, WorkItems - uint64_t(P.WaveLanes) * WI));
    W.Frames.resize(size_t(W.NumLanes) * P.FrameBytes);
    for (unsigned L = 0; L < W.NumLanes; ++L) {
      std::memcpy(frame(W, L), Template.data(), P.ArgsEnd);
      std::memcpy(frame(W, L) + P.ConstStart, Template.data() + P.ConstStart,
                  P.FrameBytes - P.ConstStart);
    }
    W.Private.assign(size_t(W.NumLanes) * P.PrivateBytes, 0);
    W.Paths.assign(1, {P.Entry, NoBlock, W.allLanes()});
    W.DoneLanes = 0;
    W.AtBarrier = false;
    W.Regs = P.MaxRegs;
    W.LastLdsWrite.fill(0);
    W.LastRelease.fill(0);
    W.AcquireEpoch.fill(0);
    W.ReleasedEpoch.assign(1, 1);
    W.AsyncCopies.clear();
    W.AsyncGroups.fill(0);
    W.WgmmaReads.clear();
    W.WgmmaGroups = 0;
    W.ProxyFences.clear();
  }
  WG.Arrived.fill(0);
  WG.ArriveCount.fill(0);
  WG.RegPool = 0;
  if (P.UsesAsyncProxy) {
    WG.GenericWriteSeq.assign(LdsBytes, 0);
    WG.GenericWriter.assign(LdsBytes, 0);
    WG.ProxySeq = 0;
  }
  ++WG.Count;
  WG.WavesRun += NumWaves;
  return runWorkgroup(WG);
}

bool Runner::runWorkgroup(Workgroup &WG) {
  for (;;) {
    for (Wave &W : WG.Waves)
      if (!runWave(WG, W))
        return false;
    bool AllDone = true;
    for (Wave &W : WG.Waves)
      AllDone &= W.Paths.empty();
    if (AllDone) {
      for (Wave &W : WG.Waves)
        if (!W.WgmmaReads.empty())
          return fail(*W.WgmmaReads.back().I, &WG, &W, -1,
                      "warp exited with a wgmma not waited for (wgmma.wait_group)");
      return true;
    }
    if (!(P.Nvptx ? releaseNvvmBarriers(WG) : releaseBarrier(WG)))
      return false;
  }
}

Error Runner::run(ArrayRef<uint8_t> Kernarg) {
  if (Kernarg.size() < P.KernargBytes)
    return createStringError(inconvertibleErrorCode(),
                             "kernel '%s': %zu kernarg bytes given, %u expected", P.Name.c_str(),
                             Kernarg.size(), P.KernargBytes);
  uint64_t WorkItems = Cfg.Block.count();
  if (WorkItems == 0 || WorkItems > 1024 || Cfg.Grid.count() == 0)
    return createStringError(inconvertibleErrorCode(),
                             "kernel '%s': invalid launch: %llu threads per workgroup",
                             P.Name.c_str(), (unsigned long long)WorkItems);
  if (WorkItems < P.MinFlatWorkGroup || WorkItems > P.MaxFlatWorkGroup)
    return createStringError(inconvertibleErrorCode(),
                             "kernel '%s': launched with %llu threads per workgroup, compiled for "
                             "%u..%u (amdgpu-flat-work-group-size)",
                             P.Name.c_str(), (unsigned long long)WorkItems, P.MinFlatWorkGroup,
                             P.MaxFlatWorkGroup);
  if (P.ReqdWorkGroup[0] &&
      (P.ReqdWorkGroup[0] != Cfg.Block.X || P.ReqdWorkGroup[1] != Cfg.Block.Y ||
       P.ReqdWorkGroup[2] != Cfg.Block.Z))
    return createStringError(inconvertibleErrorCode(),
                             "kernel '%s': launched with block (%u, %u, %u), compiled for "
                             "reqd_work_group_size (%u, %u, %u)",
                             P.Name.c_str(), Cfg.Block.X, Cfg.Block.Y, Cfg.Block.Z,
                             P.ReqdWorkGroup[0], P.ReqdWorkGroup[1], P.ReqdWorkGroup[2]);
  LdsBytes = P.DynLdsOffset + Cfg.DynamicLdsBytes;
  if (LdsBytes > P.MaxLdsBytes)
    return createStringError(inconvertibleErrorCode(),
                             P.Nvptx ? "kernel '%s': %u bytes of shared memory exceed the 227 KiB "
                                       "of a CTA on sm_90a"
                                     : "kernel '%s': %u bytes of LDS exceed the 160 KiB of gfx950",
                             P.Name.c_str(), LdsBytes);

  // Kernarg segment = explicit arguments, then the hidden arguments of code
  // object v5; the HSA dispatch packet lives in its own buffer.
  uint32_t HiddenOff = (P.KernargBytes + 7) & ~7u;
  std::vector<uint8_t> Segment(HiddenOff + 256, 0);
  std::memcpy(Segment.data(), Kernarg.data(), P.KernargBytes);
  uint8_t *H = Segment.data() + HiddenOff;
  const uint32_t Grid[3] = {Cfg.Grid.X, Cfg.Grid.Y, Cfg.Grid.Z};
  const uint32_t Block[3] = {Cfg.Block.X, Cfg.Block.Y, Cfg.Block.Z};
  for (int D = 0; D < 3; ++D) {
    wr<uint32_t>(H, 4 * D, Grid[D]);
    wr<uint16_t>(H, 12 + 2 * D, uint16_t(Block[D]));
    wr<uint16_t>(H, 18 + 2 * D, 0);
  }
  wr<uint16_t>(H, 64,
               uint16_t(Cfg.Grid.Z > 1 || Cfg.Block.Z > 1   ? 3
                        : Cfg.Grid.Y > 1 || Cfg.Block.Y > 1 ? 2
                                                            : 1));
  std::vector<uint8_t> Packet(64, 0);
  for (int D = 0; D < 3; ++D) {
    wr<uint16_t>(Packet.data(), 4 + 2 * D, uint16_t(Block[D]));
    wr<uint32_t>(Packet.data(), 12 + 4 * D, Grid[D] * Block[D]);
  }
  wr<uint32_t>(Packet.data(), 28, LdsBytes);
  uint64_t SegAddr = Mem.add(Segment.data(), Segment.size());
  Kernargs = SegAddr;
  ImplicitArgs = SegAddr + HiddenOff;
  DispatchPacket = Mem.add(Packet.data(), Packet.size());
  wr<uint64_t>(Packet.data(), 40, SegAddr);

  Template = P.ConstImage;
  for (const ArgSlot &A : P.Args)
    std::memcpy(Template.data() + A.FrameOffset, Kernarg.data() + A.KernargOffset, A.Bytes);

  unsigned NumWaves = unsigned((WorkItems + P.WaveLanes - 1) / P.WaveLanes);
  uint64_t Total = Cfg.Grid.count();
  unsigned NumThreads = unsigned(std::min<uint64_t>(std::max(1u, O.Threads), Total));
  Concurrent = NumThreads > 1;
  std::vector<Workgroup> PerThread(NumThreads);
  std::atomic<uint64_t> Next{0};
  auto Worker = [&](Workgroup &WG) {
    WG.Waves.resize(NumWaves);
    WG.Lds.assign(LdsBytes, 0);
    for (;;) {
      uint64_t Linear = Next++;
      if (Linear >= Total || Failed)
        return;
      if (!runOne(WG, Linear, NumWaves, WorkItems))
        return;
    }
  };
  if (NumThreads == 1) {
    Worker(PerThread[0]);
  } else {
    // One task per host thread; each pulls workgroups from Next.
    DefaultThreadPool Pool(hardware_concurrency(NumThreads));
    for (unsigned T = 0; T < NumThreads; ++T)
      Pool.async([&Worker, &PerThread, T] { Worker(PerThread[T]); });
    Pool.wait();
  }
  bool Ok = !Failed;
  for (const Workgroup &WG : PerThread) {
    St.LaneInstructions += WG.LaneInsts;
    St.WaveOps += WG.WaveOps;
    St.Barriers += WG.Barriers;
    St.Workgroups += WG.Count;
    St.Waves += WG.WavesRun;
  }
  Mem.remove(SegAddr);
  Mem.remove(DispatchPacket);
  if (!Ok)
    return createStringError(inconvertibleErrorCode(), Message);
  return Error::success();
}

} // namespace moegen::emu
