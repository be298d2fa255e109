//===- Ops.cpp - Frame-only operations -------------------------------------===//
#include "emulator/Ops.h"

#include "emulator/Exec.h"
#include "emulator/Formats.h"

#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/Instruction.h"

#include <bit>
#include <cmath>
#include <limits>

using llvm::Instruction;

namespace moegen::emu {

uint64_t readInt(const uint8_t *P, unsigned Bytes) {
  switch (Bytes) {
  case 1:
    return *P;
  case 2:
    return rd<uint16_t>(P, 0);
  case 4:
    return rd<uint32_t>(P, 0);
  default:
    return rd<uint64_t>(P, 0);
  }
}

void writeInt(uint8_t *P, unsigned Bytes, uint64_t V) {
  switch (Bytes) {
  case 1:
    *P = uint8_t(V);
    return;
  case 2:
    wr<uint16_t>(P, 0, uint16_t(V));
    return;
  case 4:
    wr<uint32_t>(P, 0, uint32_t(V));
    return;
  default:
    wr<uint64_t>(P, 0, V);
  }
}

int64_t signExtend(uint64_t V, unsigned Bits) {
  if (Bits >= 64)
    return int64_t(V);
  uint64_t M = 1ull << (Bits - 1);
  V &= (M << 1) - 1;
  return int64_t((V ^ M) - M);
}

uint64_t maskBits(uint64_t V, unsigned Bits) { return Bits >= 64 ? V : V & ((1ull << Bits) - 1); }

double readFp(const uint8_t *P, EK Ty) {
  switch (Ty) {
  case EK::F16:
    return halfToFloat(rd<uint16_t>(P, 0));
  case EK::BF16:
    return bf16ToFloat(rd<uint16_t>(P, 0));
  case EK::F32:
    return rd<float>(P, 0);
  default:
    return rd<double>(P, 0);
  }
}

void writeFp(uint8_t *P, EK Ty, double V) {
  switch (Ty) {
  case EK::F16:
    wr<uint16_t>(P, 0, doubleToHalf(V));
    return;
  case EK::BF16:
    wr<uint16_t>(P, 0, doubleToBf16(V));
    return;
  case EK::F32:
    wr<float>(P, 0, float(V));
    return;
  default:
    wr<double>(P, 0, V);
  }
}

//===----------------------------------------------------------------------===//
// Integer binary operators
//===----------------------------------------------------------------------===//

template <class U> static U intOp(unsigned Op, U A, U B, unsigned Bits) {
  using S = std::make_signed_t<U>;
  switch (Op) {
  case Instruction::Add:
    return U(A + B);
  case Instruction::Sub:
    return U(A - B);
  case Instruction::Mul:
    return U(A * B);
  case Instruction::And:
    return A & B;
  case Instruction::Or:
    return A | B;
  case Instruction::Xor:
    return A ^ B;
  case Instruction::Shl:
    return B >= Bits ? 0 : U(A << B);
  case Instruction::LShr:
    return B >= Bits ? 0 : U(A >> B);
  case Instruction::AShr: {
    if (B >= Bits)
      B = Bits - 1;
    return U(S(A) >> B);
  }
  case Instruction::UDiv:
    return B == 0 ? 0 : U(A / B);
  case Instruction::URem:
    return B == 0 ? 0 : U(A % B);
  case Instruction::SDiv:
    if (B == 0 || (S(B) == -1 && S(A) == std::numeric_limits<S>::min()))
      return B == 0 ? 0 : A;
    return U(S(A) / S(B));
  case Instruction::SRem:
    if (B == 0 || S(B) == -1)
      return 0;
    return U(S(A) % S(B));
  }
  return 0;
}

template <class U, unsigned Op> static void intBin(const Inst &I, uint8_t *F) {
  for (unsigned E = 0, N = I.N; E < N; ++E) {
    U A = rd<U>(F, I.A + E * sizeof(U)), B = rd<U>(F, I.B + E * sizeof(U));
    wr<U>(F, I.Dst + E * sizeof(U), intOp<U>(Op, A, B, sizeof(U) * 8));
  }
}

// Odd widths and i1: compute on sign- or zero-extended 64-bit values.
static void intBinGeneric(const Inst &I, uint8_t *F) {
  unsigned Bytes = elemBytes(I.Ty, I.Bits), Bits = I.Bits;
  for (unsigned E = 0; E < I.N; ++E) {
    uint64_t A = readInt(F + I.A + E * Bytes, Bytes), B = readInt(F + I.B + E * Bytes, Bytes);
    uint64_t R;
    switch (I.Sub) {
    case Instruction::AShr:
      R = uint64_t(signExtend(A, Bits) >> (B >= Bits ? Bits - 1 : B));
      break;
    case Instruction::SDiv:
      R = B == 0 ? 0 : uint64_t(signExtend(A, Bits) / signExtend(B, Bits));
      break;
    case Instruction::SRem:
      R = B == 0 ? 0 : uint64_t(signExtend(A, Bits) % signExtend(B, Bits));
      break;
    case Instruction::Shl:
    case Instruction::LShr:
      R = B >= Bits ? 0 : intOp<uint64_t>(I.Sub, A, B, 64);
      break;
    default:
      R = intOp<uint64_t>(I.Sub, A, B, 64);
    }
    writeInt(F + I.Dst + E * Bytes, Bytes, maskBits(R, Bits));
  }
}

template <class U> static PureFn intBinFor(unsigned Op) {
  switch (Op) {
#define CASE(X)                                                                                    \
  case Instruction::X:                                                                             \
    return intBin<U, Instruction::X>;
    CASE(Add)
    CASE(Sub)
    CASE(Mul)
    CASE(And)
    CASE(Or)
    CASE(Xor)
    CASE(Shl)
    CASE(LShr)
    CASE(AShr)
    CASE(UDiv)
    CASE(URem)
    CASE(SDiv)
    CASE(SRem)
#undef CASE
  }
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Float binary operators
//===----------------------------------------------------------------------===//

template <class T, unsigned Op> static void fpBin(const Inst &I, uint8_t *F) {
  for (unsigned E = 0, N = I.N; E < N; ++E) {
    T A = rd<T>(F, I.A + E * sizeof(T)), B = rd<T>(F, I.B + E * sizeof(T)), R;
    if constexpr (Op == Instruction::FAdd)
      R = A + B;
    else if constexpr (Op == Instruction::FSub)
      R = A - B;
    else if constexpr (Op == Instruction::FMul)
      R = A * B;
    else if constexpr (Op == Instruction::FDiv)
      R = A / B;
    else
      R = std::fmod(A, B);
    wr<T>(F, I.Dst + E * sizeof(T), R);
  }
}

// f16/bf16: the exact result rounded once; computing in f32 first is
// innocuous for + - * / because f32 has more than 2p+2 bits.
static void fpBinHalf(const Inst &I, uint8_t *F) {
  for (unsigned E = 0; E < I.N; ++E) {
    float A = float(readFp(F + I.A + 2 * E, I.Ty)), B = float(readFp(F + I.B + 2 * E, I.Ty)), R;
    switch (I.Sub) {
    case Instruction::FAdd:
      R = A + B;
      break;
    case Instruction::FSub:
      R = A - B;
      break;
    case Instruction::FMul:
      R = A * B;
      break;
    case Instruction::FDiv:
      R = A / B;
      break;
    default:
      R = std::fmod(A, B);
    }
    writeFp(F + I.Dst + 2 * E, I.Ty, R);
  }
}

template <class T> static PureFn fpBinFor(unsigned Op) {
  switch (Op) {
  case Instruction::FAdd:
    return fpBin<T, Instruction::FAdd>;
  case Instruction::FSub:
    return fpBin<T, Instruction::FSub>;
  case Instruction::FMul:
    return fpBin<T, Instruction::FMul>;
  case Instruction::FDiv:
    return fpBin<T, Instruction::FDiv>;
  case Instruction::FRem:
    return fpBin<T, Instruction::FRem>;
  }
  return nullptr;
}

PureFn binaryFn(unsigned Opcode, EK Ty) {
  bool IsFp = Opcode == Instruction::FAdd || Opcode == Instruction::FSub ||
              Opcode == Instruction::FMul || Opcode == Instruction::FDiv ||
              Opcode == Instruction::FRem;
  if (IsFp) {
    switch (Ty) {
    case EK::F32:
      return fpBinFor<float>(Opcode);
    case EK::F64:
      return fpBinFor<double>(Opcode);
    case EK::F16:
    case EK::BF16:
      return fpBinHalf;
    default:
      return nullptr;
    }
  }
  switch (Ty) {
  case EK::I8:
    return intBinFor<uint8_t>(Opcode);
  case EK::I16:
    return intBinFor<uint16_t>(Opcode);
  case EK::I32:
    return intBinFor<uint32_t>(Opcode);
  case EK::I64:
    return intBinFor<uint64_t>(Opcode);
  case EK::I1:
  case EK::IN:
    return intBinFor<uint64_t>(Opcode) ? intBinGeneric : nullptr;
  default:
    return nullptr;
  }
}

//===----------------------------------------------------------------------===//
// Compares
//===----------------------------------------------------------------------===//

static bool icmpEval(unsigned Pred, uint64_t A, uint64_t B, unsigned Bits) {
  using P = llvm::CmpInst::Predicate;
  switch (Pred) {
  case P::ICMP_EQ:
    return A == B;
  case P::ICMP_NE:
    return A != B;
  case P::ICMP_UGT:
    return A > B;
  case P::ICMP_UGE:
    return A >= B;
  case P::ICMP_ULT:
    return A < B;
  case P::ICMP_ULE:
    return A <= B;
  case P::ICMP_SGT:
    return signExtend(A, Bits) > signExtend(B, Bits);
  case P::ICMP_SGE:
    return signExtend(A, Bits) >= signExtend(B, Bits);
  case P::ICMP_SLT:
    return signExtend(A, Bits) < signExtend(B, Bits);
  case P::ICMP_SLE:
    return signExtend(A, Bits) <= signExtend(B, Bits);
  }
  return false;
}

template <class U> static void icmpT(const Inst &I, uint8_t *F) {
  for (unsigned E = 0, N = I.N; E < N; ++E)
    F[I.Dst + E] = icmpEval(I.Pred, rd<U>(F, I.A + E * sizeof(U)), rd<U>(F, I.B + E * sizeof(U)),
                            sizeof(U) * 8);
}

static void icmpGeneric(const Inst &I, uint8_t *F) {
  unsigned Bytes = elemBytes(I.Ty, I.Bits);
  for (unsigned E = 0; E < I.N; ++E)
    F[I.Dst + E] = icmpEval(I.Pred, readInt(F + I.A + E * Bytes, Bytes),
                            readInt(F + I.B + E * Bytes, Bytes), I.Bits);
}

PureFn icmpFn(EK Ty) {
  switch (Ty) {
  case EK::I32:
  case EK::P32:
    return icmpT<uint32_t>;
  case EK::I64:
  case EK::P64:
    return icmpT<uint64_t>;
  case EK::I1:
  case EK::I8:
  case EK::I16:
  case EK::IN:
    return icmpGeneric;
  default:
    return nullptr;
  }
}

static bool fcmpEval(unsigned Pred, double A, double B) {
  if (std::isnan(A) || std::isnan(B))
    return (Pred >> 3) & 1;
  if (A < B)
    return (Pred >> 2) & 1;
  if (A > B)
    return (Pred >> 1) & 1;
  return Pred & 1;
}

static void fcmpGeneric(const Inst &I, uint8_t *F) {
  unsigned Bytes = elemBytes(I.Ty, 0);
  for (unsigned E = 0; E < I.N; ++E)
    F[I.Dst + E] =
        fcmpEval(I.Pred, readFp(F + I.A + E * Bytes, I.Ty), readFp(F + I.B + E * Bytes, I.Ty));
}

static void fcmpF32(const Inst &I, uint8_t *F) {
  for (unsigned E = 0, N = I.N; E < N; ++E)
    F[I.Dst + E] = fcmpEval(I.Pred, rd<float>(F, I.A + 4 * E), rd<float>(F, I.B + 4 * E));
}

PureFn fcmpFn(EK Ty) {
  switch (Ty) {
  case EK::F32:
    return fcmpF32;
  case EK::F16:
  case EK::BF16:
  case EK::F64:
    return fcmpGeneric;
  default:
    return nullptr;
  }
}

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

static bool isFpKind(EK K) { return K == EK::F16 || K == EK::BF16 || K == EK::F32 || K == EK::F64; }

static uint64_t fpToInt(double V, unsigned Bits, bool Signed) {
  if (std::isnan(V))
    return 0;
  V = std::trunc(V);
  if (Signed) {
    double Lo = -std::ldexp(1.0, int(Bits) - 1), Hi = std::ldexp(1.0, int(Bits) - 1);
    if (V < Lo)
      return maskBits(uint64_t(int64_t(Lo)), Bits);
    if (V >= Hi)
      return maskBits(uint64_t(int64_t(Hi - 1)), Bits);
    return maskBits(uint64_t(int64_t(V)), Bits);
  }
  if (V <= 0)
    return 0;
  if (V >= std::ldexp(1.0, int(Bits)))
    return maskBits(~0ull, Bits);
  return uint64_t(V);
}

template <unsigned Op> static void castOp(const Inst &I, uint8_t *F) {
  EK From = EK(I.Sub), To = I.Ty;
  unsigned FromBits = I.Aux, ToBits = I.Bits;
  unsigned FB = elemBytes(From, FromBits), TB = elemBytes(To, ToBits);
  for (unsigned E = 0; E < I.N; ++E) {
    const uint8_t *S = F + I.A + E * FB;
    uint8_t *D = F + I.Dst + E * TB;
    if constexpr (Op == Instruction::Trunc || Op == Instruction::ZExt ||
                  Op == Instruction::PtrToInt || Op == Instruction::IntToPtr)
      writeInt(D, TB, maskBits(readInt(S, FB), ToBits));
    else if constexpr (Op == Instruction::SExt)
      writeInt(D, TB, maskBits(uint64_t(signExtend(readInt(S, FB), FromBits)), ToBits));
    else if constexpr (Op == Instruction::FPTrunc || Op == Instruction::FPExt)
      writeFp(D, To, readFp(S, From));
    else if constexpr (Op == Instruction::FPToUI || Op == Instruction::FPToSI)
      writeInt(D, TB, fpToInt(readFp(S, From), ToBits, Op == Instruction::FPToSI));
    else if constexpr (Op == Instruction::UIToFP) {
      uint64_t V = readInt(S, FB);
      // One rounding: u64 -> f32 directly when the target is f32.
      if (To == EK::F32)
        wr<float>(D, 0, float(V));
      else
        writeFp(D, To, double(V)); // exact up to 2^53, then RNE
    } else if constexpr (Op == Instruction::SIToFP) {
      int64_t V = signExtend(readInt(S, FB), FromBits);
      if (To == EK::F32)
        wr<float>(D, 0, float(V));
      else
        writeFp(D, To, double(V));
    }
  }
}

// Fast paths for the common scalar/vector casts.
template <class S, class D, unsigned Op> static void castT(const Inst &I, uint8_t *F) {
  for (unsigned E = 0, N = I.N; E < N; ++E) {
    S V = rd<S>(F, I.A + E * sizeof(S));
    D R;
    if constexpr (Op == Instruction::SExt)
      R = D(std::make_signed_t<D>(std::make_signed_t<S>(V)));
    else if constexpr (Op == Instruction::SIToFP)
      R = D(std::make_signed_t<S>(V));
    else if constexpr (Op == Instruction::FPToSI)
      R = D(std::isnan(V)        ? 0
            : V >= 2147483648.0f ? 2147483647
            : V < -2147483648.0f ? int32_t(-2147483647 - 1)
                                 : int32_t(V));
    else
      R = D(V);
    wr<D>(F, I.Dst + E * sizeof(D), R);
  }
}

PureFn castFn(unsigned Opcode, EK From, EK To) {
  using I = Instruction;
  if (Opcode == I::Trunc && From == EK::I64 && To == EK::I32)
    return castT<uint64_t, uint32_t, I::Trunc>;
  if (Opcode == I::ZExt && From == EK::I32 && To == EK::I64)
    return castT<uint32_t, uint64_t, I::ZExt>;
  if (Opcode == I::SExt && From == EK::I32 && To == EK::I64)
    return castT<uint32_t, uint64_t, I::SExt>;
  if (Opcode == I::SIToFP && From == EK::I32 && To == EK::F32)
    return castT<uint32_t, float, I::SIToFP>;
  if (Opcode == I::ZExt && From == EK::I8 && To == EK::I32)
    return castT<uint8_t, uint32_t, I::ZExt>;
  if (Opcode == I::UIToFP && From == EK::I32 && To == EK::F32)
    return castT<uint32_t, float, I::UIToFP>;
  if (Opcode == I::FPToSI && From == EK::F32 && To == EK::I32)
    return castT<float, uint32_t, I::FPToSI>;
  if (Opcode == I::FPExt && From == EK::F32 && To == EK::F64)
    return castT<float, double, I::FPExt>;
  if (Opcode == I::FPTrunc && From == EK::F64 && To == EK::F32)
    return castT<double, float, I::FPTrunc>;
  return castFn(Opcode);
}

PureFn castFn(unsigned Opcode) {
  switch (Opcode) {
#define CASE(X)                                                                                    \
  case Instruction::X:                                                                             \
    return castOp<Instruction::X>;
    CASE(Trunc)
    CASE(ZExt)
    CASE(SExt)
    CASE(FPTrunc)
    CASE(FPExt)
    CASE(FPToUI)
    CASE(FPToSI)
    CASE(UIToFP)
    CASE(SIToFP)
    CASE(PtrToInt)
    CASE(IntToPtr)
#undef CASE
  }
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Math intrinsics
//===----------------------------------------------------------------------===//

static double fpMath(MathOp Op, double A, double B, double C, EK Ty) {
  switch (Op) {
  case M_FAbs:
    return std::fabs(A);
  case M_FNeg:
    return -A;
  case M_Sqrt:
    return Ty == EK::F32 ? double(std::sqrt(float(A))) : std::sqrt(A);
  case M_Floor:
    return std::floor(A);
  case M_Ceil:
    return std::ceil(A);
  case M_Trunc:
    return std::trunc(A);
  case M_Rint:
    return std::nearbyint(A);
  case M_Round:
    return std::round(A);
  case M_Exp2:
    return std::exp2(A);
  case M_Log2:
    return std::log2(A);
  case M_Exp:
    return std::exp(A);
  case M_Log:
    return std::log(A);
  case M_Sin:
    return std::sin(A);
  case M_Cos:
    return std::cos(A);
  case M_Rcp:
    return 1.0 / A;
  case M_Rsq:
    return 1.0 / std::sqrt(A);
  case M_Canon:
    return A;
  case M_MinNum:
    return std::fmin(A, B);
  case M_MaxNum:
    return std::fmax(A, B);
  case M_Minimum:
    if (std::isnan(A) || std::isnan(B))
      return NAN;
    if (A == B)
      return std::signbit(A) ? A : B;
    return A < B ? A : B;
  case M_Maximum:
    if (std::isnan(A) || std::isnan(B))
      return NAN;
    if (A == B)
      return std::signbit(A) ? B : A;
    return A > B ? A : B;
  case M_CopySign:
    return std::copysign(A, B);
  case M_Pow:
    return std::pow(A, B);
  case M_Fma:
    if (Ty == EK::F32)
      return double(std::fma(float(A), float(B), float(C)));
    return std::fma(A, B, C); // f64; f16/bf16 products are exact in f64
  case M_FMed3: {
    if (std::isnan(A) || std::isnan(B) || std::isnan(C))
      return std::fmin(std::fmax(A, B), std::fmax(std::fmin(A, B), C));
    return std::fmax(std::fmin(A, B), std::fmin(std::fmax(A, B), C));
  }
  default:
    return 0;
  }
}

static void fpMathOp(const Inst &I, uint8_t *F) {
  unsigned Bytes = elemBytes(I.Ty, 0);
  for (unsigned E = 0; E < I.N; ++E) {
    double A = readFp(F + I.A + E * Bytes, I.Ty);
    double B = I.Aux >= 2 ? readFp(F + I.B + E * Bytes, I.Ty) : 0;
    double C = I.Aux >= 3 ? readFp(F + I.C + E * Bytes, I.Ty) : 0;
    writeFp(F + I.Dst + E * Bytes, I.Ty, fpMath(MathOp(I.Sub), A, B, C, I.Ty));
  }
}

// ldexp(x, i32): exponent operand is an integer.
static void ldexpOp(const Inst &I, uint8_t *F) {
  unsigned Bytes = elemBytes(I.Ty, 0);
  for (unsigned E = 0; E < I.N; ++E) {
    double A = readFp(F + I.A + E * Bytes, I.Ty);
    int32_t X = rd<int32_t>(F, I.B + 4 * E);
    writeFp(F + I.Dst + E * Bytes, I.Ty, std::ldexp(A, std::clamp(X, -2000, 2000)));
  }
}

static void intMathOp(const Inst &I, uint8_t *F) {
  unsigned Bytes = elemBytes(I.Ty, I.Bits), Bits = I.Bits;
  for (unsigned E = 0; E < I.N; ++E) {
    uint64_t A = readInt(F + I.A + E * Bytes, Bytes);
    uint64_t B = I.Aux >= 2 ? readInt(F + I.B + E * Bytes, Bytes) : 0;
    uint64_t C = I.Aux >= 3 ? readInt(F + I.C + E * Bytes, Bytes) : 0;
    int64_t SA = signExtend(A, Bits), SB = signExtend(B, Bits);
    uint64_t Max = maskBits(~0ull, Bits);
    int64_t SMax = int64_t(Max >> 1), SMin = -SMax - 1;
    uint64_t R = 0;
    switch (MathOp(I.Sub)) {
    case M_SMin:
      R = uint64_t(std::min(SA, SB));
      break;
    case M_SMax:
      R = uint64_t(std::max(SA, SB));
      break;
    case M_UMin:
      R = std::min(A, B);
      break;
    case M_UMax:
      R = std::max(A, B);
      break;
    case M_Abs:
      R = uint64_t(SA < 0 ? -SA : SA);
      break;
    case M_Ctpop:
      R = std::popcount(A);
      break;
    case M_Ctlz:
      R = A == 0 ? Bits : std::countl_zero(A) - (64 - Bits);
      break;
    case M_Cttz:
      R = A == 0 ? Bits : std::countr_zero(A);
      break;
    case M_Bswap:
      R = __builtin_bswap64(A) >> (64 - Bits);
      break;
    case M_BitRev:
      R = __builtin_bitreverse64(A) >> (64 - Bits);
      break;
    case M_UAddSat:
      R = A + B > Max || A + B < A ? Max : A + B;
      break;
    case M_USubSat:
      R = A < B ? 0 : A - B;
      break;
    case M_SAddSat: {
      __int128 S = __int128(SA) + SB;
      R = uint64_t(int64_t(S > SMax ? SMax : S < SMin ? SMin : S));
      break;
    }
    case M_SSubSat: {
      __int128 S = __int128(SA) - SB;
      R = uint64_t(int64_t(S > SMax ? SMax : S < SMin ? SMin : S));
      break;
    }
    case M_FShl:
    case M_FShr: {
      unsigned Sh = unsigned(C % Bits);
      unsigned __int128 Cat = (static_cast<unsigned __int128>(A) << Bits) | B;
      if (I.Sub == M_FShl)
        R = uint64_t((Cat << Sh) >> Bits);
      else
        R = uint64_t(Cat >> Sh);
      break;
    }
    default:
      break;
    }
    writeInt(F + I.Dst + E * Bytes, Bytes, maskBits(R, Bits));
  }
}

template <MathOp Op> static void mathF32(const Inst &I, uint8_t *F) {
  for (unsigned E = 0, N = I.N; E < N; ++E) {
    float A = rd<float>(F, I.A + 4 * E), R;
    if constexpr (Op == M_Fma)
      R = std::fma(A, rd<float>(F, I.B + 4 * E), rd<float>(F, I.C + 4 * E));
    else if constexpr (Op == M_FAbs)
      R = std::fabs(A);
    else if constexpr (Op == M_FNeg)
      R = -A;
    else if constexpr (Op == M_MinNum)
      R = std::fmin(A, rd<float>(F, I.B + 4 * E));
    else
      R = std::fmax(A, rd<float>(F, I.B + 4 * E));
    wr<float>(F, I.Dst + 4 * E, R);
  }
}

template <class U, MathOp Op> static void mathInt(const Inst &I, uint8_t *F) {
  using S = std::make_signed_t<U>;
  for (unsigned E = 0, N = I.N; E < N; ++E) {
    U A = rd<U>(F, I.A + sizeof(U) * E), B = rd<U>(F, I.B + sizeof(U) * E), R;
    if constexpr (Op == M_SMin)
      R = U(std::min(S(A), S(B)));
    else if constexpr (Op == M_SMax)
      R = U(std::max(S(A), S(B)));
    else if constexpr (Op == M_UMin)
      R = std::min(A, B);
    else
      R = std::max(A, B);
    wr<U>(F, I.Dst + sizeof(U) * E, R);
  }
}

PureFn mathFn(MathOp Op, EK Ty) {
  if (Ty == EK::F32) {
    switch (Op) {
    case M_Fma:
      return mathF32<M_Fma>;
    case M_FAbs:
      return mathF32<M_FAbs>;
    case M_FNeg:
      return mathF32<M_FNeg>;
    case M_MinNum:
      return mathF32<M_MinNum>;
    case M_MaxNum:
      return mathF32<M_MaxNum>;
    default:
      break;
    }
  }
  if (Ty == EK::I32 || Ty == EK::I64) {
    bool W = Ty == EK::I64;
    switch (Op) {
    case M_SMin:
      return W ? mathInt<uint64_t, M_SMin> : mathInt<uint32_t, M_SMin>;
    case M_SMax:
      return W ? mathInt<uint64_t, M_SMax> : mathInt<uint32_t, M_SMax>;
    case M_UMin:
      return W ? mathInt<uint64_t, M_UMin> : mathInt<uint32_t, M_UMin>;
    case M_UMax:
      return W ? mathInt<uint64_t, M_UMax> : mathInt<uint32_t, M_UMax>;
    default:
      break;
    }
  }
  bool Fp = isFpKind(Ty);
  if (Op == M_Ldexp)
    return Fp ? ldexpOp : nullptr;
  if (Op <= M_FMed3)
    return Fp ? fpMathOp : nullptr;
  return Fp ? nullptr : intMathOp;
}

//===----------------------------------------------------------------------===//
// Hardware transcendentals: v_exp/v_log/v_rcp/v_rsq/v_sqrt_f32
//===----------------------------------------------------------------------===//

/// The transcendental unit treats an f32 denormal, input or output, as a zero
/// of its sign.
static float flushDenormal(float X) {
  return std::fpclassify(X) == FP_SUBNORMAL ? std::copysign(0.0f, X) : X;
}

/// An f32 within 1 ulp of the exact value V: V itself when representable,
/// else either neighbour, chosen by a hash of the operation and the input
/// bits. About half the results differ from the correctly rounded one, the
/// same way on every run, so a kernel that needs exact results fails here as
/// it would on hardware.
static float faithful(double V, MathOp Op, float In) {
  float R = float(V);
  if (double(R) == V || !std::isfinite(R))
    return R;
  uint32_t H = std::bit_cast<uint32_t>(In) ^ (uint32_t(Op) << 24);
  H = (H ^ (H >> 16)) * 0x45D9F3Bu;
  H ^= H >> 16;
  if (H & 1)
    return R;
  float Other = std::nextafter(R, double(R) < V ? INFINITY : -INFINITY);
  return std::isfinite(Other) ? Other : R;
}

static float hwTranscendental(MathOp Op, float X) {
  X = flushDenormal(X);
  double A = X, V;
  switch (Op) {
  case M_Exp2:
    V = std::exp2(A);
    break;
  case M_Log2:
    V = std::log2(A);
    break;
  case M_Rcp:
    V = 1.0 / A;
    break;
  case M_Rsq:
    V = 1.0 / std::sqrt(A);
    break;
  default:
    V = std::sqrt(A);
    break;
  }
  return flushDenormal(faithful(V, Op, X));
}

static void hwMathF32(const Inst &I, uint8_t *F) {
  for (unsigned E = 0, N = I.N; E < N; ++E)
    wr<float>(F, I.Dst + 4 * E, hwTranscendental(MathOp(I.Sub), rd<float>(F, I.A + 4 * E)));
}

// fdiv afn: x * v_rcp_f32(y), as AMDGPUCodeGenPrepare expands it.
static void fdivApproxF32(const Inst &I, uint8_t *F) {
  for (unsigned E = 0, N = I.N; E < N; ++E)
    wr<float>(F, I.Dst + 4 * E,
              rd<float>(F, I.A + 4 * E) * hwTranscendental(M_Rcp, rd<float>(F, I.B + 4 * E)));
}

PureFn hwMathFn(MathOp Op, EK Ty) {
  bool Unit = Op == M_Exp2 || Op == M_Log2 || Op == M_Rcp || Op == M_Rsq || Op == M_Sqrt;
  return Ty == EK::F32 && Unit ? hwMathF32 : nullptr;
}

PureFn approxDivFn(EK Ty) { return Ty == EK::F32 ? fdivApproxF32 : nullptr; }

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

void opCopy(const Inst &I, uint8_t *F) { moveBytes(F + I.Dst, F + I.A, I.Aux); }

void opSelect(const Inst &I, uint8_t *F) {
  unsigned EB = I.Aux;
  if (!I.Pred) {
    moveBytes(F + I.Dst, F + (F[I.A] & 1 ? I.B : I.C), EB * I.N);
    return;
  }
  for (unsigned E = 0; E < I.N; ++E)
    moveBytes(F + I.Dst + E * EB, F + (F[I.A + E] & 1 ? I.B : I.C) + E * EB, EB);
}

// Bitcast involving sub-byte or odd-width elements: through a bit string.
// Tab: [srcBits, srcBytes, srcN, dstBits, dstBytes, dstN].
void opRepack(const Inst &I, uint8_t *F) {
  const uint32_t *T = I.Tab;
  uint8_t Bits[256] = {};
  unsigned Pos = 0;
  for (unsigned E = 0; E < T[2]; ++E) {
    uint64_t V = readInt(F + I.A + E * T[1], T[1]);
    for (unsigned B = 0; B < T[0]; ++B, ++Pos)
      if ((V >> B) & 1)
        Bits[Pos / 8] |= uint8_t(1u << (Pos % 8));
  }
  Pos = 0;
  for (unsigned E = 0; E < T[5]; ++E) {
    uint64_t V = 0;
    for (unsigned B = 0; B < T[3]; ++B, ++Pos)
      V |= uint64_t((Bits[Pos / 8] >> (Pos % 8)) & 1) << B;
    writeInt(F + I.Dst + E * T[4], T[4], V);
  }
}

// Tab: [constLo, constHi, nTerms, (slot, bits|signedFlag<<8, scaleLo, scaleHi)*]
void opGep(const Inst &I, uint8_t *F) {
  const uint32_t *T = I.Tab;
  uint64_t Off = uint64_t(T[0]) | (uint64_t(T[1]) << 32);
  for (unsigned K = 0, N = T[2]; K < N; ++K) {
    const uint32_t *Term = T + 3 + 4 * K;
    unsigned Bits = Term[1] & 0xFF;
    uint64_t Raw = readInt(F + Term[0], Bits <= 8 ? 1 : Bits <= 16 ? 2 : Bits <= 32 ? 4 : 8);
    int64_t Idx = signExtend(Raw, Bits);
    Off += uint64_t(Idx) * (uint64_t(Term[2]) | (uint64_t(Term[3]) << 32));
  }
  switch (I.Ty) {
  case EK::P32:
    wr<uint32_t>(F, I.Dst, uint32_t(rd<uint32_t>(F, I.A) + Off));
    break;
  case EK::PBuf:
    std::memmove(F + I.Dst, F + I.A, 16);
    wr<uint32_t>(F, I.Dst + 16, uint32_t(rd<uint32_t>(F, I.A + 16) + Off));
    break;
  default:
    wr<uint64_t>(F, I.Dst, rd<uint64_t>(F, I.A) + Off);
  }
}

void opExtractElt(const Inst &I, uint8_t *F) {
  uint64_t Idx = readInt(F + I.B, I.Pred);
  if (Idx >= I.N) {
    std::memset(F + I.Dst, 0, I.Aux);
    return;
  }
  moveBytes(F + I.Dst, F + I.A + Idx * I.Aux, I.Aux);
}

void opInsertElt(const Inst &I, uint8_t *F) {
  uint64_t Idx = readInt(F + I.C, I.Pred);
  uint8_t Elt[32];
  moveBytes(Elt, F + I.B, I.Aux);
  moveBytes(F + I.Dst, F + I.A, size_t(I.Aux) * I.N);
  if (Idx < I.N)
    moveBytes(F + I.Dst + Idx * I.Aux, Elt, I.Aux);
}

/// A shuffle's result into Out; elements of Fixed bytes, or I.Aux when Fixed
/// is 0 (a constant size lets the copies inline).
template <unsigned Fixed> static void shuffleInto(const Inst &I, const uint8_t *F, uint8_t *Out) {
  const unsigned EB = Fixed ? Fixed : I.Aux;
  for (unsigned E = 0; E < I.N; ++E) {
    uint32_t M = I.Tab[E];
    if (M == ~0u)
      std::memset(Out + E * EB, 0, EB);
    else
      std::memcpy(Out + E * EB, F + (M < I.D ? I.A + M * EB : I.B + (M - I.D) * EB), EB);
  }
}

// Tab holds N mask entries; D = length of each input.
void opShuffle(const Inst &I, uint8_t *F) {
  uint8_t Tmp[2048];
  unsigned EB = I.Aux;
  switch (EB) {
  case 1:
    shuffleInto<1>(I, F, Tmp);
    break;
  case 2:
    shuffleInto<2>(I, F, Tmp);
    break;
  case 4:
    shuffleInto<4>(I, F, Tmp);
    break;
  case 8:
    shuffleInto<8>(I, F, Tmp);
    break;
  default:
    shuffleInto<0>(I, F, Tmp);
  }
  moveBytes(F + I.Dst, Tmp, size_t(EB) * I.N);
}

bool concatApart(const Inst &I) {
  const size_t Half = size_t(I.Aux) * I.D;
  auto Apart = [&](uint32_t Src) { return Src + Half <= I.Dst || I.Dst + 2 * Half <= Src; };
  return Apart(I.A) && Apart(I.B);
}

void opConcat(const Inst &I, uint8_t *F) {
  size_t Half = size_t(I.Aux) * I.D;
  // The result slot rarely overlaps an operand's: copy straight into it.
  if (concatApart(I)) {
    moveBytes(F + I.Dst, F + I.A, Half);
    moveBytes(F + I.Dst + Half, F + I.B, Half);
    return;
  }
  uint8_t Tmp[2048];
  moveBytes(Tmp, F + I.A, Half);
  moveBytes(Tmp + Half, F + I.B, Half);
  moveBytes(F + I.Dst, Tmp, 2 * Half);
}

void opExtractValue(const Inst &I, uint8_t *F) { moveBytes(F + I.Dst, F + I.A + I.Aux, I.Aux2); }

void opInsertValue(const Inst &I, uint8_t *F) {
  uint8_t Tmp[256];
  std::memcpy(Tmp, F + I.B, I.Aux2);
  std::memmove(F + I.Dst, F + I.A, I.C);
  std::memcpy(F + I.Dst + I.Aux, Tmp, I.Aux2);
}

// vector.reduce.*: Sub is an Instruction opcode (Add, Mul, And, Or, Xor,
// FAdd, FMul) or a MathOp + 1000 (min/max). For fadd/fmul, B is the start.
void opVecReduce(const Inst &I, uint8_t *F) {
  unsigned EB = elemBytes(I.Ty, I.Bits);
  if (isFpKind(I.Ty)) {
    double Acc = I.Sub == Instruction::FAdd || I.Sub == Instruction::FMul ? readFp(F + I.B, I.Ty)
                                                                          : readFp(F + I.A, I.Ty);
    unsigned Start = I.Sub == Instruction::FAdd || I.Sub == Instruction::FMul ? 0 : 1;
    for (unsigned E = Start; E < I.N; ++E) {
      double V = readFp(F + I.A + E * EB, I.Ty);
      if (I.Sub == Instruction::FAdd)
        Acc = I.Ty == EK::F32 ? double(float(Acc) + float(V)) : Acc + V;
      else if (I.Sub == Instruction::FMul)
        Acc = I.Ty == EK::F32 ? double(float(Acc) * float(V)) : Acc * V;
      else
        Acc = fpMath(MathOp(I.Sub - 1000), Acc, V, 0, I.Ty);
      if (I.Ty != EK::F32 && I.Ty != EK::F64) {
        uint8_t Tmp[8];
        writeFp(Tmp, I.Ty, Acc);
        Acc = readFp(Tmp, I.Ty);
      }
    }
    writeFp(F + I.Dst, I.Ty, Acc);
    return;
  }
  uint64_t Acc = readInt(F + I.A, EB);
  for (unsigned E = 1; E < I.N; ++E) {
    uint64_t V = readInt(F + I.A + E * EB, EB);
    int64_t SA = signExtend(Acc, I.Bits), SV = signExtend(V, I.Bits);
    switch (I.Sub) {
    case Instruction::Add:
      Acc += V;
      break;
    case Instruction::Mul:
      Acc *= V;
      break;
    case Instruction::And:
      Acc &= V;
      break;
    case Instruction::Or:
      Acc |= V;
      break;
    case Instruction::Xor:
      Acc ^= V;
      break;
    case 1000 + M_SMin:
      Acc = uint64_t(std::min(SA, SV));
      break;
    case 1000 + M_SMax:
      Acc = uint64_t(std::max(SA, SV));
      break;
    case 1000 + M_UMin:
      Acc = std::min(Acc, V);
      break;
    case 1000 + M_UMax:
      Acc = std::max(Acc, V);
      break;
    }
    Acc = maskBits(Acc, I.Bits);
  }
  writeInt(F + I.Dst, EB, Acc);
}

// {iN, i1} @llvm.{u,s}{add,sub,mul}.with.overflow: Sub 0..5 = uadd, sadd,
// usub, ssub, umul, smul. The i1 sits at Dst + Aux.
void opOverflow(const Inst &I, uint8_t *F) {
  unsigned EB = elemBytes(I.Ty, I.Bits), Bits = I.Bits;
  uint64_t A = readInt(F + I.A, EB), B = readInt(F + I.B, EB);
  __int128 SA = signExtend(A, Bits), SB = signExtend(B, Bits);
  unsigned __int128 UA = A, UB = B;
  __int128 Full = 0;
  bool Ovf = false;
  uint64_t R = 0;
  switch (I.Sub) {
  case 0:
    R = uint64_t(UA + UB);
    Ovf = ((UA + UB) >> Bits) != 0;
    break;
  case 1:
    Full = SA + SB;
    break;
  case 2:
    R = uint64_t(UA - UB);
    Ovf = UA < UB;
    break;
  case 3:
    Full = SA - SB;
    break;
  case 4:
    R = uint64_t(UA * UB);
    Ovf = ((UA * UB) >> Bits) != 0;
    break;
  default:
    Full = SA * SB;
    break;
  }
  if (I.Sub == 1 || I.Sub == 3 || I.Sub == 5) {
    R = uint64_t(Full);
    Ovf = signExtend(maskBits(R, Bits), Bits) != Full;
  }
  writeInt(F + I.Dst, EB, maskBits(R, Bits));
  F[I.Dst + I.Aux] = Ovf;
}

Kind fastKind(const Inst &I) {
  if (I.K == Kind::Pure && I.Fn.Pure == opConcat && concatApart(I))
    return Kind::Concat;
  if (I.K != Kind::Pure || I.N != 1)
    return I.K;
  using In = Instruction;
  PureFn F = I.Fn.Pure;
  struct Entry {
    PureFn Fn;
    Kind K;
  };
  static const Entry Table[] = {
      {intBin<uint32_t, In::Add>, Kind::AddI32},
      {intBin<uint32_t, In::Sub>, Kind::SubI32},
      {intBin<uint32_t, In::Mul>, Kind::MulI32},
      {intBin<uint32_t, In::And>, Kind::AndI32},
      {intBin<uint32_t, In::Or>, Kind::OrI32},
      {intBin<uint32_t, In::Xor>, Kind::XorI32},
      {intBin<uint32_t, In::Shl>, Kind::ShlI32},
      {intBin<uint32_t, In::LShr>, Kind::LShrI32},
      {intBin<uint64_t, In::Add>, Kind::AddI64},
      {intBin<uint64_t, In::Sub>, Kind::SubI64},
      {intBin<uint64_t, In::Mul>, Kind::MulI64},
      {intBin<uint64_t, In::And>, Kind::AndI64},
      {intBin<uint64_t, In::Or>, Kind::OrI64},
      {intBin<uint64_t, In::Shl>, Kind::ShlI64},
      {intBin<uint64_t, In::LShr>, Kind::LShrI64},
      {fpBin<float, In::FAdd>, Kind::AddF32},
      {fpBin<float, In::FSub>, Kind::SubF32},
      {fpBin<float, In::FMul>, Kind::MulF32},
      {mathF32<M_Fma>, Kind::FmaF32},
      {castT<uint64_t, uint32_t, In::Trunc>, Kind::TruncI64I32},
      {castT<uint32_t, uint64_t, In::ZExt>, Kind::ZExtI32I64},
      {castT<uint32_t, uint64_t, In::SExt>, Kind::SExtI32I64},
      {castT<uint32_t, float, In::SIToFP>, Kind::SIToFPI32F32},
      {castT<uint8_t, uint32_t, In::ZExt>, Kind::ZExtI8I32},
  };
  for (const Entry &E : Table)
    if (E.Fn == F)
      return E.K;
  if (F == icmpT<uint32_t> && I.Ty == EK::I32)
    return Kind::ICmpI32;
  if (F == icmpT<uint64_t> && I.Ty == EK::I64)
    return Kind::ICmpI64;
  if (F == opCopy && (I.Aux == 4 || I.Aux == 8))
    return I.Aux == 4 ? Kind::Copy4 : Kind::Copy8;
  if (F == opGep && (I.Ty == EK::P64 || I.Ty == EK::P32 || I.Ty == EK::PBuf) &&
      (I.Tab[2] == 0 || (I.Tab[2] == 1 && ((I.Tab[4] & 0xFF) == 32 || (I.Tab[4] & 0xFF) == 64))))
    return I.Ty == EK::P64 ? Kind::GepP64 : I.Ty == EK::P32 ? Kind::GepP32 : Kind::GepPBuf;
  return Kind::Pure;
}

bool evalICmp(unsigned Pred, uint64_t A, uint64_t B, unsigned Bits) {
  return icmpEval(Pred, A, B, Bits);
}

} // namespace moegen::emu
