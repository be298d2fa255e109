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

#include <array>
#include <cmath>

namespace moegen::emu {

static unsigned accRow(unsigned M, unsigned L, unsigned R) {
  return M == 16 ? 4 * (L / 16) + R : 8 * (R / 4) + 4 * (L / 32) + (R % 4);
}

static bool requireFullWave(const Inst &I, WaveCtx &W) {
  // MFMA with a partially active wave is not described by the facts.
  if (W.Active == ~0ull)
    return true;
  return W.R->fail(I, W.WG, W.W, -1, "MFMA executed by a partially active wave");
}

static void readAcc(WaveCtx &W, const Inst &I, unsigned M, double *Acc) {
  unsigned Regs = M * M / 64;
  for (unsigned L = 0; L < 64; ++L)
    for (unsigned R = 0; R < Regs; ++R)
      Acc[accRow(M, L, R) * M + L % M] = rd<float>(W.frame(L), I.C + 4 * R);
}

static void writeAcc(WaveCtx &W, const Inst &I, unsigned M, const double *Acc) {
  unsigned Regs = M * M / 64;
  for (unsigned L = 0; L < 64; ++L)
    for (unsigned R = 0; R < Regs; ++R)
      wr<float>(W.frame(L), I.Dst + 4 * R, float(Acc[accRow(M, L, R) * M + L % M]));
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

bool waveMfma(const Inst &I, WaveCtx &W) {
  if (!requireFullWave(I, W))
    return false;
  unsigned M = I.Aux, K = I.Aux2, E = K * M / 64;
  EK T = I.Pred == 0 ? EK::BF16 : EK::F16;
  static thread_local double A[32 * 64], Bt[32 * 64], Acc[32 * 32];
  for (unsigned L = 0; L < 64; ++L)
    for (unsigned X = 0; X < E; ++X) {
      unsigned Row = L % M, Kk = E * (L / M) + X;
      A[Row * K + Kk] = readFp(W.frame(L) + I.A + 2 * X, T);
      Bt[Row * K + Kk] = readFp(W.frame(L) + I.B + 2 * X, T); // B stored [column][k]
    }
  readAcc(W, I, M, Acc);
  for (unsigned Row = 0; Row < M; ++Row)
    for (unsigned Col = 0; Col < M; ++Col) {
      Acc[Row * M + Col] += dot(&A[Row * K], &Bt[Col * K], K);
    }
  writeAcc(W, I, M, Acc);
  return true;
}

/// All values of a format, indexed by code (decoding is the hot part of an
/// f8f6f4 MFMA).
static const double *mxTable(MxFormat Fmt) {
  static const auto Tables = [] {
    std::array<std::array<double, 256>, 5> T;
    for (unsigned F = 0; F < 5; ++F)
      for (unsigned C = 0; C < 256; ++C)
        T[F][C] = decodeMx(MxFormat(F), C);
    return T;
  }();
  return Tables[unsigned(Fmt)].data();
}

/// Element k of row (or column) `Idx` from the per-lane operand registers.
static void loadMx(WaveCtx &W, uint32_t Slot, MxFormat Fmt, unsigned M, double *Out) {
  unsigned G = 64 / M, K = 32 * G;
  const double *Table = mxTable(Fmt);
  for (unsigned L = 0; L < 64; ++L) {
    const uint8_t *Reg = W.frame(L) + Slot;
    unsigned Idx = L % M, Grp = L / M;
    if (Fmt == MxFormat::E4M3 || Fmt == MxFormat::E5M2) {
      for (unsigned B = 0; B < 32; ++B) {
        unsigned Kk = 16 * G * (B / 16) + 16 * Grp + B % 16;
        Out[Idx * K + Kk] = Table[Reg[B]];
      }
    } else if (Fmt == MxFormat::E2M1) {
      for (unsigned N = 0; N < 32; ++N)
        Out[Idx * K + 32 * Grp + N] = Table[(Reg[N / 2] >> (4 * (N % 2))) & 0xF];
    } else {
      unsigned Bits = mxBits(Fmt);
      for (unsigned N = 0; N < 32; ++N) {
        unsigned Pos = N * Bits;
        uint32_t Code = 0;
        for (unsigned B = 0; B < Bits; ++B, ++Pos)
          Code |= uint32_t((Reg[Pos / 8] >> (Pos % 8)) & 1) << B;
        Out[Idx * K + 32 * Grp + N] = Table[Code];
      }
    }
  }
}

bool waveMfmaScale(const Inst &I, WaveCtx &W) {
  if (!requireFullWave(I, W))
    return false;
  unsigned M = I.Aux2, G = 64 / M, K = 32 * G;
  MxFormat FA = MxFormat(I.Sub & 0xF), FB = MxFormat((I.Sub >> 4) & 0xF);
  unsigned OpA = (I.Sub >> 8) & 3, OpB = (I.Sub >> 10) & 3;
  bool Unscaled = (I.Sub >> 12) & 1;
  static thread_local double A[32 * 128], B[32 * 128], Acc[32 * 32];
  loadMx(W, I.A, FA, M, A);
  loadMx(W, I.B, FB, M, B); // B is stored [column][k]
  readAcc(W, I, M, Acc);
  for (unsigned Row = 0; Row < M; ++Row)
    for (unsigned Col = 0; Col < M; ++Col) {
      double Sum = 0;
      for (unsigned Blk = 0; Blk < G; ++Blk) {
        // Exact: fp8/fp4 products and their 32-term sums fit f64.
        double S = dot(&A[Row * K + 32 * Blk], &B[Col * K + 32 * Blk], 32);
        if (!Unscaled) {
          uint8_t SA = uint8_t(rd<uint32_t>(W.frame(M * Blk + Row), I.D) >> (8 * OpA));
          uint8_t SB = uint8_t(rd<uint32_t>(W.frame(M * Blk + Col), I.Aux) >> (8 * OpB));
          if (SA == 0xFF || SB == 0xFF)
            S = NAN; // E8M0 NaN
          else
            S = std::ldexp(S, int(SA) + int(SB) - 254);
        }
        Sum += S;
      }
      Acc[Row * M + Col] += Sum;
    }
  writeAcc(W, I, M, Acc);
  return true;
}

} // namespace moegen::emu
