//===- Mfma.cpp - MFMA family with the documented wave64 lane layouts ------===//
//
// Layouts (docs/gfx950-facts.md §1):
//   C/D 16x16: lane l, register r holds D[4*(l/16) + r][l%16].
//   C/D 32x32: lane l, register r holds D[8*(r/4) + 4*(l/32) + r%4][l%32].
//   bf16/f16 A (B): lane l, element e holds A[l%M][E*(l/M) + e] (B[..][l%M]),
//     E = K*M/64 elements per lane.
//   f8f6f4 A (B), fp8/bf8: byte b of lane l holds
//     A[l%M][16*G*(b/16) + 16*(l/M) + b%16], G = 64/M.
//   f8f6f4 A (B), fp4/fp6: field n of lane l holds A[l%M][32*(l/M) + n].
//   Scales: byte opsel of lane M*b + i scales row i (column j) of K-block b.
// Internal precision is unknown [U]: the emulator sums exactly (f64) and
// rounds once to f32; tests compare with an ulp tolerance.
//
//===----------------------------------------------------------------------===//
#include "emulator/Formats.h"
#include "emulator/Ops.h"
#include "emulator/Runner.h"

#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace moegen::emu {

// The dot products are the hot part of an MFMA: on x86-64 Linux they are also
// compiled for AVX-512 and AVX2 and the loader picks the copy the host can
// run. Same operations per element, so the same results: the products are
// exact in f64, so a fused multiply-add rounds as the separate add does.
#if defined(__x86_64__) && defined(__linux__) && defined(__clang__)
#define MOEGEN_EMU_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define MOEGEN_EMU_VECTOR_CLONES
#endif
#define MOEGEN_EMU_INLINE __attribute__((always_inline)) inline

/// The wave's lane frames with the base pointer read once: stores through
/// frame bytes could otherwise alias it and force a reload per lane.
struct LaneFrames {
  uint8_t *Base;
  size_t Stride;
  explicit LaneFrames(const WaveCtx &W) : Base(W.frame(0)), Stride(W.R->P.FrameBytes) {}
  uint8_t *operator()(unsigned L) const { return Base + L * Stride; }
};

template <unsigned M> static unsigned accRow(unsigned L, unsigned R) {
  static_assert(M == 16 || M == 32, "MFMA tiles are 16x16 or 32x32");
  return M == 16 ? 4 * (L / 16) + R : 8 * (R / 4) + 4 * (L / 32) + (R % 4);
}

static bool requireFullWave(const Inst &I, WaveCtx &W) {
  // MFMA with a partially active wave is not described by the facts.
  if (W.Active == ~0ull)
    return true;
  return W.R->fail(I, W.WG, W.W, -1, "MFMA executed by a partially active wave");
}

template <unsigned M> static void readAcc(const LaneFrames &Fr, uint32_t Slot, double *Acc) {
  constexpr unsigned Regs = M * M / 64;
  for (unsigned L = 0; L < 64; ++L) {
    const uint8_t *F = Fr(L) + Slot;
    for (unsigned R = 0; R < Regs; ++R)
      Acc[accRow<M>(L, R) * M + L % M] = rd<float>(F, 4 * R);
  }
}

template <unsigned M> static void writeAcc(const LaneFrames &Fr, uint32_t Slot, const double *Acc) {
  constexpr unsigned Regs = M * M / 64;
  for (unsigned L = 0; L < 64; ++L) {
    uint8_t *F = Fr(L) + Slot;
    for (unsigned R = 0; R < Regs; ++R)
      wr<float>(F, 4 * R, float(Acc[accRow<M>(L, R) * M + L % M]));
  }
}

/// Sum of products in f64 with four independent partial sums. The products
/// of 16-bit and narrower formats are exact in f64 and so are the sums of the
/// f8f6f4 blocks, so the order does not change those results.
static double dot(const double *X, const double *Y, unsigned N) {
  double S0 = 0, S1 = 0, S2 = 0, S3 = 0;
  for (unsigned K = 0; K < N; K += 4) {
    S0 += X[K] * Y[K];
    S1 += X[K + 1] * Y[K + 1];
    S2 += X[K + 2] * Y[K + 2];
    S3 += X[K + 3] * Y[K + 3];
  }
  return (S0 + S1) + (S2 + S3);
}

/// Acc[Row][Col] += dot(A[Row][:], B[:][Col], K) for all columns of a row at
/// once (Bk is stored [k][column]): per column the same partial sums in the
/// same order as dot(), so the same result, but vectorizable over columns.
template <unsigned M>
MOEGEN_EMU_INLINE static void rowTimesMatrix(const double *ARow, const double *Bk, unsigned K,
                                             double *AccRow) {
  double S[4][M] = {};
  for (unsigned Kk = 0; Kk < K; Kk += 4)
    for (unsigned J = 0; J < 4; ++J) {
      double X = ARow[Kk + J];
      const double *Y = &Bk[(Kk + J) * M];
      for (unsigned Col = 0; Col < M; ++Col)
        S[J][Col] += X * Y[Col];
    }
  for (unsigned Col = 0; Col < M; ++Col)
    AccRow[Col] += (S[0][Col] + S[1][Col]) + (S[2][Col] + S[3][Col]);
}

/// A 16-bit operand element's value (exact as a double).
template <bool Bf16> static double halfValue(uint16_t H) {
  return Bf16 ? bf16ToFloat(H) : halfToFloat(H);
}

MOEGEN_EMU_VECTOR_CLONES static void matrixProduct(unsigned M, unsigned K, const double *A,
                                                   const double *Bk, double *Acc) {
  for (unsigned Row = 0; Row < M; ++Row)
    if (M == 16)
      rowTimesMatrix<16>(&A[Row * K], Bk, K, &Acc[Row * M]);
    else
      rowTimesMatrix<32>(&A[Row * K], Bk, K, &Acc[Row * M]);
}

/// The M x K A operand by row and the K x M B operand as [k][column], as
/// doubles (exact), from the lanes' 16-bit elements. K constant: the
/// conversions of a lane's elements vectorize.
template <unsigned M, unsigned K, bool Bf16>
MOEGEN_EMU_INLINE static void gatherHalves(const LaneFrames &Fr, uint32_t SlotA, uint32_t SlotB,
                                           double *A, double *Bk) {
  constexpr unsigned E = K * M / 64;
  double Bt[M * K]; // B by column
  for (unsigned L = 0; L < 64; ++L) {
    const unsigned Idx = L % M, K0 = E * (L / M);
    const uint8_t *FA = Fr(L) + SlotA, *FB = Fr(L) + SlotB;
    uint16_t HA[E], HB[E]; // each one load of the register
    std::memcpy(HA, FA, sizeof(HA));
    std::memcpy(HB, FB, sizeof(HB));
    for (unsigned X = 0; X < E; ++X) {
      A[Idx * K + K0 + X] = halfValue<Bf16>(HA[X]);
      Bt[Idx * K + K0 + X] = halfValue<Bf16>(HB[X]);
    }
  }
  for (unsigned Kk = 0; Kk < K; ++Kk)
    for (unsigned Col = 0; Col < M; ++Col)
      Bk[Kk * M + Col] = Bt[Col * K + Kk];
}

/// gatherHalves for the shapes of the bf16/f16 MFMAs the emulator decodes.
MOEGEN_EMU_VECTOR_CLONES static void gatherOperands(const LaneFrames &Fr, const Inst &I, double *A,
                                                    double *Bk) {
  const bool Bf16 = I.Pred == 0;
#define SHAPE(M, K)                                                                                \
  if (I.Aux == M && I.Aux2 == K)                                                                   \
    return Bf16 ? gatherHalves<M, K, true>(Fr, I.A, I.B, A, Bk)                                    \
                : gatherHalves<M, K, false>(Fr, I.A, I.B, A, Bk);
  SHAPE(16, 32)
  SHAPE(32, 16)
  SHAPE(16, 16)
  SHAPE(32, 8)
#undef SHAPE
  llvm_unreachable("an MFMA shape the decoder's table (IntrinsicTables.cpp) does not list");
}

/// The bf16/f16 MFMA with M x M tiles: operands gathered from the lanes,
/// the products summed in f64.
template <unsigned M> static void mfmaHalves(const Inst &I, const LaneFrames &Fr) {
  static thread_local double A[32 * 64], Bk[64 * 32], Acc[32 * 32];
  gatherOperands(Fr, I, A, Bk);
  readAcc<M>(Fr, I.C, Acc);
  matrixProduct(M, I.Aux2, A, Bk, Acc);
  writeAcc<M>(Fr, I.Dst, Acc);
}

bool waveMfma(const Inst &I, WaveCtx &W) {
  if (!requireFullWave(I, W))
    return false;
  const LaneFrames Fr(W);
  if (I.Aux == 16)
    mfmaHalves<16>(I, Fr);
  else
    mfmaHalves<32>(I, Fr);
  return true;
}

/// All values of a format, indexed by code (decoding is the hot part of an
/// f8f6f4 MFMA), and their integer images: Value = Int * 2^-Shift exactly
/// for every finite code (Finite[code] false for NaN and inf).
struct MxTable {
  double Value[256];
  int32_t Int[256];
  bool Finite[256];
  int Shift = 0;
  int64_t MaxInt = 0;    // largest |Int|
  bool AllFinite = true; // no NaN or inf code (fp6, fp4)
};

static const MxTable &mxTable(MxFormat Fmt) {
  static const auto Tables = [] {
    std::array<MxTable, 5> T{};
    for (unsigned F = 0; F < 5; ++F) {
      MxTable &Tab = T[F];
      // The smallest subnormal of each format is 2^-Shift.
      double Min = INFINITY;
      for (unsigned C = 0; C < 256; ++C) {
        Tab.Value[C] = mxValues(MxFormat(F))[C];
        double A = std::fabs(Tab.Value[C]);
        if (A != 0 && std::isfinite(A))
          Min = std::min(Min, A);
      }
      int Exp;
      (void)std::frexp(Min, &Exp);
      Tab.Shift = 1 - Exp;
      for (unsigned C = 0; C < 256; ++C) {
        Tab.Finite[C] = std::isfinite(Tab.Value[C]);
        Tab.AllFinite &= Tab.Finite[C];
        double I = Tab.Finite[C] ? std::ldexp(Tab.Value[C], Tab.Shift) : 0;
        Tab.Int[C] = int32_t(I);
        Tab.MaxInt = std::max<int64_t>(Tab.MaxInt, int64_t(std::fabs(I)));
      }
    }
    return T;
  }();
  return Tables[unsigned(Fmt)];
}

/// Calls Put(Idx, k, code) for every element of an operand: row (or column)
/// `Idx`, element k of the reduction, from the lanes' registers.
template <class PutFn>
MOEGEN_EMU_INLINE static void forMxCodes(const LaneFrames &Fr, uint32_t Slot, MxFormat Fmt,
                                         unsigned M, PutFn Put) {
  const unsigned G = 64 / M;
  for (unsigned L = 0; L < 64; ++L) {
    const uint8_t *Reg = Fr(L) + Slot;
    const unsigned Idx = L % M, Grp = L / M;
    if (Fmt == MxFormat::E4M3 || Fmt == MxFormat::E5M2) {
      for (unsigned B = 0; B < 32; ++B)
        Put(Idx, 16 * G * (B / 16) + 16 * Grp + B % 16, Reg[B]);
    } else if (Fmt == MxFormat::E2M1) {
      for (unsigned N = 0; N < 32; ++N)
        Put(Idx, 32 * Grp + N, uint8_t((Reg[N / 2] >> (4 * (N % 2))) & 0xF));
    } else {
      const unsigned Bits = mxBits(Fmt);
      for (unsigned N = 0; N < 32; ++N) {
        unsigned Pos = N * Bits;
        uint32_t Code = 0;
        for (unsigned B = 0; B < Bits; ++B, ++Pos)
          Code |= uint32_t((Reg[Pos / 8] >> (Pos % 8)) & 1) << B;
        Put(Idx, 32 * Grp + N, uint8_t(Code));
      }
    }
  }
}

/// An operand's integer images (A by row: Out[Idx * K + k]; B as [k][column]:
/// Out[k * M + Idx]); false if some code is NaN or inf (no image).
template <class T, unsigned M, bool KMajor>
static bool loadMxImages(const LaneFrames &Fr, uint32_t Slot, MxFormat Fmt, const MxTable &Tab,
                         T *Out) {
  constexpr unsigned K = 32 * (64 / M);
  auto At = [](unsigned Idx, unsigned Kk) { return KMajor ? Kk * M + Idx : Idx * K + Kk; };
  if (Tab.AllFinite) { // fp4, fp6: no code to look for
    forMxCodes(Fr, Slot, Fmt, M, [&](unsigned Idx, unsigned Kk, uint8_t Code) {
      Out[At(Idx, Kk)] = T(Tab.Int[Code]);
    });
    return true;
  }
  bool Finite = true;
  forMxCodes(Fr, Slot, Fmt, M, [&](unsigned Idx, unsigned Kk, uint8_t Code) {
    Out[At(Idx, Kk)] = T(Tab.Int[Code]);
    Finite &= Tab.Finite[Code];
  });
  return Finite;
}

template <class T>
static bool loadMxImages(const LaneFrames &Fr, uint32_t Slot, MxFormat Fmt, unsigned M,
                         const MxTable &Tab, bool KMajor, T *Out) {
  if (M == 16)
    return KMajor ? loadMxImages<T, 16, true>(Fr, Slot, Fmt, Tab, Out)
                  : loadMxImages<T, 16, false>(Fr, Slot, Fmt, Tab, Out);
  return KMajor ? loadMxImages<T, 32, true>(Fr, Slot, Fmt, Tab, Out)
                : loadMxImages<T, 32, false>(Fr, Slot, Fmt, Tab, Out);
}

/// An operand's values by row (or column): Out[Idx * K + k].
static void loadMxValues(const LaneFrames &Fr, uint32_t Slot, MxFormat Fmt, unsigned M,
                         const MxTable &Tab, double *Out) {
  const unsigned K = 32 * (64 / M);
  forMxCodes(Fr, Slot, Fmt, M,
             [&](unsigned Idx, unsigned Kk, uint8_t Code) { Out[Idx * K + Kk] = Tab.Value[Code]; });
}

/// The scale factors of each (K-block, row) of A and (K-block, column) of
/// B: a block's exact sum S becomes S * (A * B) = S * 2^(ea + eb - 254 -
/// Shift), the product of two powers of two being exact. An E8M0 NaN scale
/// is a NaN factor, so the block is NaN; unscaled MFMAs use 2^-Shift and 1.
struct MxScales {
  double A[4][32], B[4][32];
  MxScales(const Inst &I, const LaneFrames &Fr, unsigned M, int Shift) {
    const unsigned G = 64 / M, OpA = (I.Sub >> 8) & 3, OpB = (I.Sub >> 10) & 3;
    const bool Unscaled = (I.Sub >> 12) & 1;
    for (unsigned Blk = 0; Blk < G; ++Blk)
      for (unsigned X = 0; X < M; ++X) {
        const uint8_t EA = uint8_t(rd<uint32_t>(Fr(M * Blk + X), I.D) >> (8 * OpA));
        const uint8_t EB = uint8_t(rd<uint32_t>(Fr(M * Blk + X), I.Aux) >> (8 * OpB));
        A[Blk][X] = Unscaled ? pow2(-Shift) : EA == 0xFF ? NAN : pow2(int(EA) - 254 - Shift);
        B[Blk][X] = Unscaled ? 1.0 : EB == 0xFF ? NAN : pow2(EB);
      }
  }
};

/// The f64 path (e5m2 pairs, NaN or inf codes): per element, the blocks'
/// sums (exact: fp8/fp4 products and their 32-term sums fit f64), scaled,
/// in block order.
static void mfmaScaleF64(const MxScales &Sc, unsigned M, const double *TA, const double *TB,
                         double *Acc) {
  const unsigned G = 64 / M, K = 32 * G;
  for (unsigned Row = 0; Row < M; ++Row)
    for (unsigned Col = 0; Col < M; ++Col) {
      double Sum = 0;
      for (unsigned Blk = 0; Blk < G; ++Blk) {
        const double *X = &TA[Row * K + 32 * Blk], *Y = &TB[Col * K + 32 * Blk];
        const double V = dot(X, Y, 32) * (Sc.A[Blk][Row] * Sc.B[Blk][Col]);
        Sum += V;
      }
      Acc[Row * M + Col] += Sum;
    }
}

/// The integer path: a block's sum is an integer dot product that fits 32
/// bits (fp4, fp6, and fp8 e4m3 against fp4/fp6), for a row and all columns
/// at once (B as [k][column]), so any order gives it; then per element the
/// blocks' scaled values are summed in block order, as in the f64 path.
template <class T, unsigned M>
MOEGEN_EMU_INLINE static void mfmaScaleIntT(const MxScales &Sc, const T *TA, const T *TBk,
                                            double *Acc) {
  constexpr unsigned G = 64 / M, K = 32 * G;
  for (unsigned Row = 0; Row < M; ++Row) {
    double Sum[M] = {};
    for (unsigned Blk = 0; Blk < G; ++Blk) {
      int32_t S[M] = {};
      const T *X = &TA[Row * K + 32 * Blk];
      // Vectorized over the columns, not the 32 k (that would gather).
#pragma clang loop vectorize(disable) unroll(disable)
      for (unsigned Kk = 0; Kk < 32; ++Kk) {
        const int32_t Xk = X[Kk];
        const T *Y = &TBk[(32 * Blk + Kk) * M];
        for (unsigned Col = 0; Col < M; ++Col)
          S[Col] += Xk * int32_t(Y[Col]);
      }
      // The scaled block, then the sum: two statements, never one fused
      // multiply-add (the same values either way, as the product is exact).
      const double FA = Sc.A[Blk][Row];
      for (unsigned Col = 0; Col < M; ++Col) {
        const double V = double(S[Col]) * (FA * Sc.B[Blk][Col]);
        Sum[Col] += V;
      }
    }
    for (unsigned Col = 0; Col < M; ++Col)
      Acc[Row * M + Col] += Sum[Col];
  }
}

MOEGEN_EMU_VECTOR_CLONES static void mfmaScaleInt(const MxScales &Sc, unsigned M, const int16_t *TA,
                                                  const int16_t *TBk, double *Acc) {
  if (M == 16)
    mfmaScaleIntT<int16_t, 16>(Sc, TA, TBk, Acc);
  else
    mfmaScaleIntT<int16_t, 32>(Sc, TA, TBk, Acc);
}

MOEGEN_EMU_VECTOR_CLONES static void mfmaScaleInt(const MxScales &Sc, unsigned M, const int32_t *TA,
                                                  const int32_t *TBk, double *Acc) {
  if (M == 16)
    mfmaScaleIntT<int32_t, 16>(Sc, TA, TBk, Acc);
  else
    mfmaScaleIntT<int32_t, 32>(Sc, TA, TBk, Acc);
}

bool waveMfmaScale(const Inst &I, WaveCtx &W) {
  if (!requireFullWave(I, W))
    return false;
  const unsigned M = I.Aux2;
  const MxFormat FA = MxFormat(I.Sub & 0xF), FB = MxFormat((I.Sub >> 4) & 0xF);
  const MxTable &TA = mxTable(FA), &TB = mxTable(FB);
  static thread_local double Acc[32 * 32];
  const LaneFrames Fr(W);
  M == 16 ? readAcc<16>(Fr, I.C, Acc) : readAcc<32>(Fr, I.C, Acc);
  // Integer images when the products' 32-term sums fit 32 bits (values
  // times 2^Shift), unless a code is NaN or inf; otherwise f64 values.
  const bool Fits32 = TA.MaxInt * TB.MaxInt * 32 < (int64_t(1) << 31);
  auto RunInt = [&](auto *A, auto *Bk) {
    if (!loadMxImages(Fr, I.A, FA, M, TA, false, A) || !loadMxImages(Fr, I.B, FB, M, TB, true, Bk))
      return false;
    mfmaScaleInt(MxScales(I, Fr, M, TA.Shift + TB.Shift), M, A, Bk, Acc);
    return true;
  };
  bool Done = false;
  if (Fits32 && TA.MaxInt < 32768 && TB.MaxInt < 32768) {
    static thread_local int16_t A[32 * 128], Bk[32 * 128];
    Done = RunInt(A, Bk);
  } else if (Fits32) {
    static thread_local int32_t A[32 * 128], Bk[32 * 128];
    Done = RunInt(A, Bk);
  }
  if (!Done) {
    static thread_local double A[32 * 128], B[32 * 128];
    loadMxValues(Fr, I.A, FA, M, TA, A);
    loadMxValues(Fr, I.B, FB, M, TB, B); // B by column
    mfmaScaleF64(MxScales(I, Fr, M, 0), M, A, B, Acc);
  }
  M == 16 ? writeAcc<16>(Fr, I.Dst, Acc) : writeAcc<32>(Fr, I.Dst, Acc);
  return true;
}

} // namespace moegen::emu
