//===- LaneIntrinsics.cpp - Ids, buffer resources, scaled conversions ------===//
#include "emulator/Formats.h"
#include "emulator/Ops.h"
#include "emulator/Runner.h"

#include <bit>
#include <cmath>
#include <string>

namespace moegen::emu {

bool ctxWorkitemId(const Inst &I, LaneCtx &C) {
  wr<uint32_t>(C.F, I.Dst, C.R->workItemId(C, I.Pred));
  return true;
}

bool ctxWorkgroupId(const Inst &I, LaneCtx &C) {
  wr<uint32_t>(C.F, I.Dst, C.WG->Id[I.Pred]);
  return true;
}

bool ctxMbcnt(const Inst &I, LaneCtx &C) {
  uint32_t Mask = rd<uint32_t>(C.F, I.A), Acc = rd<uint32_t>(C.F, I.B);
  unsigned Below = I.Sub ? (C.Lane > 32 ? C.Lane - 32 : 0) : std::min(C.Lane, 32u);
  uint32_t Bits = Below >= 32 ? Mask : Mask & ((1u << Below) - 1);
  wr<uint32_t>(C.F, I.Dst, Acc + uint32_t(std::popcount(Bits)));
  return true;
}

bool ctxSegmentPtr(const Inst &I, LaneCtx &C) {
  uint64_t P = I.Sub == 0 ? C.R->ImplicitArgs : I.Sub == 1 ? C.R->DispatchPacket : C.R->Kernargs;
  wr<uint64_t>(C.F, I.Dst, P);
  return true;
}

bool ctxOckl(const Inst &I, LaneCtx &C) {
  uint32_t Dim = rd<uint32_t>(C.F, I.A);
  const Dim3 &B = C.R->Cfg.Block, &G = C.R->Cfg.Grid;
  uint64_t BlockD = Dim == 0 ? B.X : Dim == 1 ? B.Y : Dim == 2 ? B.Z : 1;
  uint64_t GridD = Dim == 0 ? G.X : Dim == 1 ? G.Y : Dim == 2 ? G.Z : 1;
  uint64_t Wg = Dim < 3 ? C.WG->Id[Dim] : 0, Tid = Dim < 3 ? C.R->workItemId(C, Dim) : 0;
  uint64_t R = 0;
  switch (I.Sub) {
  case OK_LocalSize:
    R = BlockD;
    break;
  case OK_NumGroups:
    R = GridD;
    break;
  case OK_GroupId:
    R = Wg;
    break;
  case OK_LocalId:
    R = Tid;
    break;
  case OK_GlobalSize:
    R = GridD * BlockD;
    break;
  default:
    R = Wg * BlockD + Tid;
  }
  wr<uint64_t>(C.F, I.Dst, R);
  return true;
}

// make.buffer.rsrc(base, i16 stride, num_records, i32 flags) -> the V#:
// word0-1 base[47:0] | stride << 48, word2 num_records (32 bits), word3 flags.
void opMakeRsrc(const Inst &I, uint8_t *F) {
  uint64_t Base = rd<uint64_t>(F, I.A);
  uint16_t Stride = rd<uint16_t>(F, I.B);
  uint64_t NR = I.Bits == 64 ? rd<uint64_t>(F, I.C) : rd<uint32_t>(F, I.C);
  uint32_t Flags = rd<uint32_t>(F, I.D);
  uint8_t R[24] = {};
  wr<uint32_t>(R, 0, uint32_t(Base));
  wr<uint32_t>(R, 4, uint32_t((Base >> 32) & 0xFFFF) | (uint32_t(Stride) << 16));
  wr<uint32_t>(R, 8, NR > 0xFFFFFFFFull ? 0xFFFFFFFFu : uint32_t(NR));
  wr<uint32_t>(R, 12, Flags);
  std::memcpy(F + I.Dst, R, I.Pred == 7 ? 20 : 16);
}

// soffset takes part in the range check per AMD's emulators but not per the
// LLVM intrinsic comment (docs/gfx950-facts.md §3.3, [U]): a non-zero soffset is refused.
static bool checkSoffset(const Inst &I, LaneCtx &C, uint32_t Soffset) {
  if (Soffset == 0)
    return true;
  return C.R->fail(I, C, "buffer access with non-zero soffset (range-check rule uncertain [U])");
}

bool ctxBufferLoad(const Inst &I, LaneCtx &C) {
  if (!checkSoffset(I, C, rd<uint32_t>(C.F, I.C)))
    return false;
  return C.R->bufferAccess(C, I, C.F + I.A, rd<uint32_t>(C.F, I.B), I.Aux, C.F + I.Dst, false);
}

bool ctxBufferStore(const Inst &I, LaneCtx &C) {
  if (!checkSoffset(I, C, rd<uint32_t>(C.F, I.D)))
    return false;
  uint8_t Tmp[64];
  std::memcpy(Tmp, C.F + I.A, I.Aux);
  return C.R->bufferAccess(C, I, C.F + I.B, rd<uint32_t>(C.F, I.C), I.Aux, Tmp, true);
}

bool ctxBufferAtomic(const Inst &I, LaneCtx &C) {
  if (!checkSoffset(I, C, rd<uint32_t>(C.F, I.D)))
    return false;
  AtomicGuard Guard(*C.R, true);
  uint8_t *H = C.R->bufferAtomic(C, I, C.F + I.B, rd<uint32_t>(C.F, I.C), I.Aux);
  if (!H)
    return false;
  uint8_t Old[16];
  std::memcpy(Old, H, I.Aux);
  if (I.Sub == 100) { // cmpswap(src, cmp, ...)
    if (std::memcmp(H, C.F + I.Aux2, I.Aux) == 0)
      std::memcpy(H, C.F + I.A, I.Aux);
  } else if (!applyRmw(I.Sub, I.Ty, I.Bits, I.N, H, C.F + I.A)) {
    return C.R->fail(I, C, "unsupported buffer atomic operation");
  }
  std::memcpy(C.F + I.Dst, Old, I.Aux);
  return true;
}

//===----------------------------------------------------------------------===//
// Scaled conversions (docs/gfx950-facts.md §4): narrowing divides by the scale's
// exponent, widening multiplies; one RNE rounding; src0 -> low nibble/byte.
//===----------------------------------------------------------------------===//

static uint8_t narrow(MxFormat Fmt, double X, float Scale) {
  int Exp;
  bool Ok = scaleFactor(Scale, Exp);
  double Y = Ok ? X * pow2(-Exp) : NAN;
  switch (Fmt) {
  case MxFormat::E2M1:
    return encodeFp4(Y);
  case MxFormat::E4M3:
    return encodeE4M3(Y);
  default:
    return encodeE5M2(Y);
  }
}

static double widen(MxFormat Fmt, uint32_t Code, float Scale) {
  int Exp;
  if (!scaleFactor(Scale, Exp))
    return NAN;
  return mxValues(Fmt)[Code & 0xFF] * pow2(Exp);
}

/// fp4 codes as bits of f32, f16 and bf16 (exact: every fp4 value is a
/// normal number of each), and where each type's exponent field starts.
struct Fp4Bits {
  uint32_t Bits[3][16];
  unsigned ManBits[3] = {23, 10, 7}, ExpMax[3] = {255, 31, 255};
};

static const Fp4Bits &fp4Bits() {
  static const Fp4Bits T = [] {
    Fp4Bits R;
    for (unsigned C = 0; C < 16; ++C) {
      double V = mxValues(MxFormat::E2M1)[C];
      R.Bits[0][C] = floatToBits(float(V));
      R.Bits[1][C] = doubleToHalf(V);
      R.Bits[2][C] = doubleToBf16(V);
    }
    return R;
  }();
  return T;
}

/// fp4 code times 2^Exp written as Ty (0 f32, 1 f16, 2 bf16): the exponent
/// field moves by Exp while the product stays a normal number of Ty (then
/// exact), otherwise the general rounding.
static void widenFp4(uint8_t *Dst, unsigned Ty, uint8_t Code, bool Ok, int Exp) {
  const Fp4Bits &T = fp4Bits();
  uint32_t B = T.Bits[Ty][Code];
  unsigned Man = T.ManBits[Ty];
  int Field = int((B & ~(~0u << (Ty == 0 ? 31 : 15))) >> Man) + Exp;
  if (Ok && (Code & 7) != 0 && Field > 0 && Field < int(T.ExpMax[Ty])) {
    B = uint32_t(int64_t(B) + (int64_t(Exp) << Man));
    if (Ty == 0)
      wr<uint32_t>(Dst, 0, B);
    else
      wr<uint16_t>(Dst, 0, uint16_t(B));
    return;
  }
  EK K = Ty == 0 ? EK::F32 : Ty == 1 ? EK::F16 : EK::BF16;
  writeFp(Dst, K, Ok ? mxValues(MxFormat::E2M1)[Code] * pow2(Exp) : NAN);
}

/// fp4 -> f32 (Ty 0), f16 (1) or bf16 (2) of the lanes in Mask (frames at
/// Base + lane * Stride).
template <unsigned Ty>
static void cvtFromFp4(const Inst &I, uint8_t *Base, size_t Stride, uint64_t Mask) {
  const Fp4Bits &T = fp4Bits();
  // The hot case of a16w4 dequantization: every nonzero e2m1 magnitude
  // (0.5 .. 6, two binades either side of 1) stays a normal number of Ty
  // after the scale, so the exponent fields just move by Exp.
  constexpr int Room = Ty == 1 ? 13 : 125;
  for (; Mask; Mask &= Mask - 1) {
    uint8_t *F = Base + size_t(std::countr_zero(Mask)) * Stride;
    const uint8_t Byte = uint8_t(rd<uint32_t>(F, I.A) >> (8 * I.Aux));
    int Exp;
    const bool Ok = scaleFactor(rd<float>(F, I.B), Exp);
    if (Ok && Exp >= -Room && Exp <= Room) {
      const uint32_t Step = uint32_t(Exp) << T.ManBits[Ty];
      const unsigned Lo = Byte & 0xF, Hi = Byte >> 4;
      const uint32_t BL = T.Bits[Ty][Lo] + ((Lo & 7) ? Step : 0);
      const uint32_t BH = T.Bits[Ty][Hi] + ((Hi & 7) ? Step : 0);
      if (Ty == 0) {
        wr<uint32_t>(F, I.Dst, BL);
        wr<uint32_t>(F, I.Dst + 4, BH);
      } else {
        wr<uint32_t>(F, I.Dst, (BL & 0xFFFF) | (BH << 16));
      }
      continue;
    }
    widenFp4(F + I.Dst, Ty, Byte & 0xF, Ok, Exp);
    widenFp4(F + I.Dst + (Ty == 0 ? 4 : 2), Ty, Byte >> 4, Ok, Exp);
  }
}

static void cvtFromFp4(const Inst &I, uint8_t *Base, size_t Stride, uint64_t Mask) {
  if (I.Sub == CV_PkF32Fp4)
    cvtFromFp4<0>(I, Base, Stride, Mask);
  else if (I.Sub == CV_PkF16Fp4)
    cvtFromFp4<1>(I, Base, Stride, Mask);
  else
    cvtFromFp4<2>(I, Base, Stride, Mask);
}

void opCvt(const Inst &I, uint8_t *F) {
  unsigned Sel = I.Aux;
  switch (I.Sub) {
  case CV_PkFp4F32: {
    float Sc = rd<float>(F, I.D);
    uint8_t Q0 = narrow(MxFormat::E2M1, rd<float>(F, I.B), Sc);
    uint8_t Q1 = narrow(MxFormat::E2M1, rd<float>(F, I.C), Sc);
    uint32_t Old = rd<uint32_t>(F, I.A);
    Old = (Old & ~(0xFFu << (8 * Sel))) | (uint32_t(Q0 | (Q1 << 4)) << (8 * Sel));
    wr<uint32_t>(F, I.Dst, Old);
    return;
  }
  case CV_PkFp4Bf16:
  case CV_PkFp4F16: {
    EK T = I.Sub == CV_PkFp4Bf16 ? EK::BF16 : EK::F16;
    float Sc = rd<float>(F, I.C);
    uint8_t Q0 = narrow(MxFormat::E2M1, readFp(F + I.B, T), Sc);
    uint8_t Q1 = narrow(MxFormat::E2M1, readFp(F + I.B + 2, T), Sc);
    uint32_t Old = rd<uint32_t>(F, I.A);
    Old = (Old & ~(0xFFu << (8 * Sel))) | (uint32_t(Q0 | (Q1 << 4)) << (8 * Sel));
    wr<uint32_t>(F, I.Dst, Old);
    return;
  }
  case CV_PkF32Fp4:
  case CV_PkF16Fp4:
  case CV_PkBf16Fp4:
    cvtFromFp4(I, F, 0, 1);
    return;
  case CV_PkFp8F32:
  case CV_PkBf8F32:
  case CV_PkFp8Bf16:
  case CV_PkFp8F16:
  case CV_PkBf8Bf16:
  case CV_PkBf8F16: {
    bool Fp8 = I.Sub == CV_PkFp8F32 || I.Sub == CV_PkFp8Bf16 || I.Sub == CV_PkFp8F16;
    MxFormat Fmt = Fp8 ? MxFormat::E4M3 : MxFormat::E5M2;
    double X0, X1;
    float Sc;
    if (I.Sub == CV_PkFp8F32 || I.Sub == CV_PkBf8F32) {
      X0 = rd<float>(F, I.B);
      X1 = rd<float>(F, I.C);
      Sc = rd<float>(F, I.D);
    } else {
      EK T = I.Sub == CV_PkFp8Bf16 || I.Sub == CV_PkBf8Bf16 ? EK::BF16 : EK::F16;
      X0 = readFp(F + I.B, T);
      X1 = readFp(F + I.B + 2, T);
      Sc = rd<float>(F, I.C);
    }
    uint16_t Word = uint16_t(narrow(Fmt, X0, Sc) | (narrow(Fmt, X1, Sc) << 8));
    uint32_t Old = rd<uint32_t>(F, I.A);
    Old = Sel ? (Old & 0xFFFF) | (uint32_t(Word) << 16) : (Old & 0xFFFF0000u) | Word;
    wr<uint32_t>(F, I.Dst, Old);
    return;
  }
  case CV_PkF32Fp8:
  case CV_PkF32Bf8: {
    MxFormat Fmt = I.Sub == CV_PkF32Fp8 ? MxFormat::E4M3 : MxFormat::E5M2;
    uint32_t Src = rd<uint32_t>(F, I.A) >> (Sel ? 16 : 0);
    float Sc = rd<float>(F, I.B);
    wr<float>(F, I.Dst, float(widen(Fmt, Src & 0xFF, Sc)));
    wr<float>(F, I.Dst + 4, float(widen(Fmt, (Src >> 8) & 0xFF, Sc)));
    return;
  }
  case CV_F32Fp8:
  case CV_F32Bf8: {
    MxFormat Fmt = I.Sub == CV_F32Fp8 ? MxFormat::E4M3 : MxFormat::E5M2;
    uint32_t Src = rd<uint32_t>(F, I.A) >> (8 * Sel);
    wr<float>(F, I.Dst, float(widen(Fmt, Src & 0xFF, rd<float>(F, I.B))));
    return;
  }
  }
}

bool lanesCvtFromFp4(const Inst &I, WaveCtx &W) {
  cvtFromFp4(I, W.frame(0), W.R->P.FrameBytes, W.Active);
  return true;
}

// The unscaled conversions convert to/from OCP E4M3/E5M2 on gfx950 [I]: the
// same as the scaled forms with scale 1. What they do with values beyond the
// format's range (saturate or NaN/inf) is not documented [U], so such inputs
// stop the run; compilers clamp first (docs/gfx950-facts.md §4.3).
bool ctxCvtUnscaled(const Inst &I, LaneCtx &C) {
  uint8_t *F = C.F;
  switch (I.Sub) {
  case 0:
  case 1: {
    bool Fp8 = I.Sub == 0;
    double Max = Fp8 ? 448.0 : 57344.0;
    float X0 = rd<float>(F, I.A), X1 = rd<float>(F, I.B);
    for (float X : {X0, X1})
      if (!(std::fabs(X) <= Max))
        return C.R->fail(I, C,
                         std::string("cvt.pk.") + (Fp8 ? "fp8" : "bf8") +
                             ".f32 of a value outside the format's range (" + std::to_string(X) +
                             "): gfx950 overflow behaviour not documented [U]");
    uint16_t Word = Fp8 ? uint16_t(encodeE4M3(X0) | (encodeE4M3(X1) << 8))
                        : uint16_t(encodeE5M2(X0) | (encodeE5M2(X1) << 8));
    uint32_t Old = rd<uint32_t>(F, I.C);
    Old = I.Aux ? (Old & 0xFFFF) | (uint32_t(Word) << 16) : (Old & 0xFFFF0000u) | Word;
    wr<uint32_t>(F, I.Dst, Old);
    return true;
  }
  case 2:
  case 3: {
    MxFormat Fmt = I.Sub == 2 ? MxFormat::E4M3 : MxFormat::E5M2;
    uint32_t Src = rd<uint32_t>(F, I.A) >> (8 * I.Aux);
    wr<float>(F, I.Dst, float(mxValues(Fmt)[Src & 0xFF]));
    return true;
  }
  default: {
    MxFormat Fmt = I.Sub == 4 ? MxFormat::E4M3 : MxFormat::E5M2;
    uint32_t Src = rd<uint32_t>(F, I.A) >> (I.Aux ? 16 : 0);
    wr<float>(F, I.Dst, float(mxValues(Fmt)[Src & 0xFF]));
    wr<float>(F, I.Dst + 4, float(mxValues(Fmt)[(Src >> 8) & 0xFF]));
    return true;
  }
  }
}

} // namespace moegen::emu
