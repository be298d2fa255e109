//===- IntrinsicTables.cpp - What each supported intrinsic decodes to ------===//
#include "emulator/IntrinsicTables.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/IR/Instruction.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicsAMDGPU.h"

using namespace llvm;

namespace moegen::emu {

/// The value of the first row whose ID is ID, or Default.
template <class Row, class V, size_t N>
static V lookup(const Row (&Table)[N], Intrinsic::ID ID, V Default) {
  for (const Row &R : Table)
    if (R.ID == ID)
      return R.Value;
  return Default;
}

bool isNopIntrinsic(Intrinsic::ID ID) {
  static const Intrinsic::ID Nops[] = {Intrinsic::assume,
                                       Intrinsic::lifetime_start,
                                       Intrinsic::lifetime_end,
                                       Intrinsic::experimental_noalias_scope_decl,
                                       Intrinsic::dbg_declare,
                                       Intrinsic::dbg_value,
                                       Intrinsic::dbg_assign,
                                       Intrinsic::dbg_label,
                                       Intrinsic::sideeffect,
                                       Intrinsic::amdgcn_s_waitcnt,
                                       Intrinsic::amdgcn_sched_barrier,
                                       Intrinsic::amdgcn_sched_group_barrier,
                                       Intrinsic::amdgcn_s_setprio,
                                       Intrinsic::amdgcn_s_sleep,
                                       Intrinsic::amdgcn_iglp_opt,
                                       Intrinsic::amdgcn_wave_barrier,
                                       Intrinsic::invariant_start,
                                       Intrinsic::invariant_end,
                                       Intrinsic::prefetch,
                                       Intrinsic::amdgcn_s_nop,
                                       Intrinsic::pseudoprobe};
  return is_contained(Nops, ID);
}

std::optional<MathIntrinsic> mathIntrinsic(Intrinsic::ID ID) {
  static const struct {
    Intrinsic::ID ID;
    std::optional<MathIntrinsic> Value;
  } Table[] = {
      {Intrinsic::fabs, {{M_FAbs, 1, false}}},
      {Intrinsic::sqrt, {{M_Sqrt, 1, false}}},
      {Intrinsic::floor, {{M_Floor, 1, false}}},
      {Intrinsic::ceil, {{M_Ceil, 1, false}}},
      {Intrinsic::trunc, {{M_Trunc, 1, false}}},
      {Intrinsic::rint, {{M_Rint, 1, false}}},
      {Intrinsic::nearbyint, {{M_Rint, 1, false}}},
      {Intrinsic::roundeven, {{M_Rint, 1, false}}},
      {Intrinsic::round, {{M_Round, 1, false}}},
      {Intrinsic::exp2, {{M_Exp2, 1, false}}},
      {Intrinsic::log2, {{M_Log2, 1, false}}},
      {Intrinsic::exp, {{M_Exp, 1, false}}},
      {Intrinsic::log, {{M_Log, 1, false}}},
      {Intrinsic::sin, {{M_Sin, 1, false}}},
      {Intrinsic::cos, {{M_Cos, 1, false}}},
      {Intrinsic::canonicalize, {{M_Canon, 1, false}}},
      {Intrinsic::minnum, {{M_MinNum, 2, false}}},
      {Intrinsic::maxnum, {{M_MaxNum, 2, false}}},
      {Intrinsic::minimumnum, {{M_MinNum, 2, false}}},
      {Intrinsic::maximumnum, {{M_MaxNum, 2, false}}},
      {Intrinsic::minimum, {{M_Minimum, 2, false}}},
      {Intrinsic::maximum, {{M_Maximum, 2, false}}},
      {Intrinsic::copysign, {{M_CopySign, 2, false}}},
      {Intrinsic::pow, {{M_Pow, 2, false}}},
      {Intrinsic::fma, {{M_Fma, 3, false}}},
      {Intrinsic::fmuladd, {{M_Fma, 3, false}}},
      {Intrinsic::ldexp, {{M_Ldexp, 2, false}}},
      {Intrinsic::amdgcn_fmed3, {{M_FMed3, 3, true}}},
      {Intrinsic::amdgcn_rcp, {{M_Rcp, 1, true}}},
      {Intrinsic::amdgcn_rsq, {{M_Rsq, 1, true}}},
      {Intrinsic::amdgcn_sqrt, {{M_Sqrt, 1, true}}},
      {Intrinsic::amdgcn_exp2, {{M_Exp2, 1, true}}},
      {Intrinsic::amdgcn_log, {{M_Log2, 1, true}}},
      {Intrinsic::smin, {{M_SMin, 2, false}}},
      {Intrinsic::smax, {{M_SMax, 2, false}}},
      {Intrinsic::umin, {{M_UMin, 2, false}}},
      {Intrinsic::umax, {{M_UMax, 2, false}}},
      {Intrinsic::abs, {{M_Abs, 1, false}}},
      {Intrinsic::ctpop, {{M_Ctpop, 1, false}}},
      {Intrinsic::ctlz, {{M_Ctlz, 1, false}}},
      {Intrinsic::cttz, {{M_Cttz, 1, false}}},
      {Intrinsic::bswap, {{M_Bswap, 1, false}}},
      {Intrinsic::bitreverse, {{M_BitRev, 1, false}}},
      {Intrinsic::uadd_sat, {{M_UAddSat, 2, false}}},
      {Intrinsic::usub_sat, {{M_USubSat, 2, false}}},
      {Intrinsic::sadd_sat, {{M_SAddSat, 2, false}}},
      {Intrinsic::ssub_sat, {{M_SSubSat, 2, false}}},
      {Intrinsic::fshl, {{M_FShl, 3, false}}},
      {Intrinsic::fshr, {{M_FShr, 3, false}}},
  };
  return lookup(Table, ID, std::optional<MathIntrinsic>());
}

std::optional<MfmaShape> mfmaShape(Intrinsic::ID ID) {
  static const struct {
    Intrinsic::ID ID;
    std::optional<MfmaShape> Value;
  } Table[] = {
      {Intrinsic::amdgcn_mfma_f32_16x16x32_bf16, {{16, 32, false}}},
      {Intrinsic::amdgcn_mfma_f32_32x32x16_bf16, {{32, 16, false}}},
      {Intrinsic::amdgcn_mfma_f32_16x16x32_f16, {{16, 32, true}}},
      {Intrinsic::amdgcn_mfma_f32_32x32x16_f16, {{32, 16, true}}},
      {Intrinsic::amdgcn_mfma_f32_16x16x16bf16_1k, {{16, 16, false}}},
      {Intrinsic::amdgcn_mfma_f32_32x32x8bf16_1k, {{32, 8, false}}},
      {Intrinsic::amdgcn_mfma_f32_16x16x16f16, {{16, 16, true}}},
      {Intrinsic::amdgcn_mfma_f32_32x32x8f16, {{32, 8, true}}},
  };
  return lookup(Table, ID, std::optional<MfmaShape>());
}

std::optional<ScaledCvt> scaledCvt(Intrinsic::ID ID) {
  static const struct {
    Intrinsic::ID ID;
    std::optional<ScaledCvt> Value;
  } Table[] = {
      {Intrinsic::amdgcn_cvt_scalef32_pk_fp4_f32, {{CV_PkFp4F32, 4}}},
      {Intrinsic::amdgcn_cvt_scalef32_pk_f32_fp4, {{CV_PkF32Fp4, 2}}},
      {Intrinsic::amdgcn_cvt_scalef32_pk_f16_fp4, {{CV_PkF16Fp4, 2}}},
      {Intrinsic::amdgcn_cvt_scalef32_pk_bf16_fp4, {{CV_PkBf16Fp4, 2}}},
      {Intrinsic::amdgcn_cvt_scalef32_pk_fp8_f32, {{CV_PkFp8F32, 4}}},
      {Intrinsic::amdgcn_cvt_scalef32_pk_bf8_f32, {{CV_PkBf8F32, 4}}},
      {Intrinsic::amdgcn_cvt_scalef32_pk_f32_fp8, {{CV_PkF32Fp8, 2}}},
      {Intrinsic::amdgcn_cvt_scalef32_pk_f32_bf8, {{CV_PkF32Bf8, 2}}},
      {Intrinsic::amdgcn_cvt_scalef32_f32_fp8, {{CV_F32Fp8, 2}}},
      {Intrinsic::amdgcn_cvt_scalef32_f32_bf8, {{CV_F32Bf8, 2}}},
      {Intrinsic::amdgcn_cvt_scalef32_pk_fp4_bf16, {{CV_PkFp4Bf16, 3}}},
      {Intrinsic::amdgcn_cvt_scalef32_pk_fp4_f16, {{CV_PkFp4F16, 3}}},
      {Intrinsic::amdgcn_cvt_scalef32_pk_fp8_bf16, {{CV_PkFp8Bf16, 3}}},
      {Intrinsic::amdgcn_cvt_scalef32_pk_fp8_f16, {{CV_PkFp8F16, 3}}},
      {Intrinsic::amdgcn_cvt_scalef32_pk_bf8_bf16, {{CV_PkBf8Bf16, 3}}},
      {Intrinsic::amdgcn_cvt_scalef32_pk_bf8_f16, {{CV_PkBf8F16, 3}}},
  };
  return lookup(Table, ID, std::optional<ScaledCvt>());
}

int unscaledCvt(Intrinsic::ID ID) {
  static const struct {
    Intrinsic::ID ID;
    int Value;
  } Table[] = {
      {Intrinsic::amdgcn_cvt_pk_fp8_f32, 0}, {Intrinsic::amdgcn_cvt_pk_bf8_f32, 1},
      {Intrinsic::amdgcn_cvt_f32_fp8, 2},    {Intrinsic::amdgcn_cvt_f32_bf8, 3},
      {Intrinsic::amdgcn_cvt_pk_f32_fp8, 4}, {Intrinsic::amdgcn_cvt_pk_f32_bf8, 5},
  };
  return lookup(Table, ID, -1);
}

std::optional<BufferIntrinsic> bufferIntrinsic(Intrinsic::ID ID) {
  using B = BufferIntrinsic;
  // Each row: the raw.ptr.buffer form, the raw.buffer form.
  static const struct {
    Intrinsic::ID Ptr, Raw;
    B Value;
  } Table[] = {
      {Intrinsic::amdgcn_raw_ptr_buffer_load, Intrinsic::amdgcn_raw_buffer_load, {B::Load, 0}},
      {Intrinsic::amdgcn_raw_ptr_buffer_store, Intrinsic::amdgcn_raw_buffer_store, {B::Store, 0}},
      {Intrinsic::amdgcn_raw_ptr_buffer_load_lds,
       Intrinsic::amdgcn_raw_buffer_load_lds,
       {B::LoadLds, 0}},
      {Intrinsic::amdgcn_raw_ptr_buffer_atomic_swap,
       Intrinsic::amdgcn_raw_buffer_atomic_swap,
       {B::Atomic, AtomicRMWInst::Xchg}},
      {Intrinsic::amdgcn_raw_ptr_buffer_atomic_add,
       Intrinsic::amdgcn_raw_buffer_atomic_add,
       {B::Atomic, AtomicRMWInst::Add}},
      {Intrinsic::amdgcn_raw_ptr_buffer_atomic_sub,
       Intrinsic::amdgcn_raw_buffer_atomic_sub,
       {B::Atomic, AtomicRMWInst::Sub}},
      {Intrinsic::amdgcn_raw_ptr_buffer_atomic_smin,
       Intrinsic::amdgcn_raw_buffer_atomic_smin,
       {B::Atomic, AtomicRMWInst::Min}},
      {Intrinsic::amdgcn_raw_ptr_buffer_atomic_umin,
       Intrinsic::amdgcn_raw_buffer_atomic_umin,
       {B::Atomic, AtomicRMWInst::UMin}},
      {Intrinsic::amdgcn_raw_ptr_buffer_atomic_smax,
       Intrinsic::amdgcn_raw_buffer_atomic_smax,
       {B::Atomic, AtomicRMWInst::Max}},
      {Intrinsic::amdgcn_raw_ptr_buffer_atomic_umax,
       Intrinsic::amdgcn_raw_buffer_atomic_umax,
       {B::Atomic, AtomicRMWInst::UMax}},
      {Intrinsic::amdgcn_raw_ptr_buffer_atomic_and,
       Intrinsic::amdgcn_raw_buffer_atomic_and,
       {B::Atomic, AtomicRMWInst::And}},
      {Intrinsic::amdgcn_raw_ptr_buffer_atomic_or,
       Intrinsic::amdgcn_raw_buffer_atomic_or,
       {B::Atomic, AtomicRMWInst::Or}},
      {Intrinsic::amdgcn_raw_ptr_buffer_atomic_xor,
       Intrinsic::amdgcn_raw_buffer_atomic_xor,
       {B::Atomic, AtomicRMWInst::Xor}},
      {Intrinsic::amdgcn_raw_ptr_buffer_atomic_fadd,
       Intrinsic::amdgcn_raw_buffer_atomic_fadd,
       {B::Atomic, AtomicRMWInst::FAdd}},
      {Intrinsic::amdgcn_raw_ptr_buffer_atomic_fmin,
       Intrinsic::amdgcn_raw_buffer_atomic_fmin,
       {B::Atomic, AtomicRMWInst::FMin}},
      {Intrinsic::amdgcn_raw_ptr_buffer_atomic_fmax,
       Intrinsic::amdgcn_raw_buffer_atomic_fmax,
       {B::Atomic, AtomicRMWInst::FMax}},
      {Intrinsic::amdgcn_raw_ptr_buffer_atomic_cmpswap,
       Intrinsic::amdgcn_raw_buffer_atomic_cmpswap,
       {B::Atomic, AtomicCmpSwap}},
  };
  for (const auto &R : Table)
    if (R.Ptr == ID || R.Raw == ID)
      return R.Value;
  return std::nullopt;
}

int waveReduceOp(Intrinsic::ID ID) {
  static const struct {
    Intrinsic::ID ID;
    int Value;
  } Table[] = {
      {Intrinsic::amdgcn_wave_reduce_add, Instruction::Add},
      {Intrinsic::amdgcn_wave_reduce_sub, Instruction::Sub},
      {Intrinsic::amdgcn_wave_reduce_and, Instruction::And},
      {Intrinsic::amdgcn_wave_reduce_or, Instruction::Or},
      {Intrinsic::amdgcn_wave_reduce_xor, Instruction::Xor},
      {Intrinsic::amdgcn_wave_reduce_fadd, Instruction::FAdd},
      {Intrinsic::amdgcn_wave_reduce_fsub, Instruction::FSub},
      {Intrinsic::amdgcn_wave_reduce_umin, 1000 + M_UMin},
      {Intrinsic::amdgcn_wave_reduce_umax, 1000 + M_UMax},
      {Intrinsic::amdgcn_wave_reduce_min, 1000 + M_SMin},
      {Intrinsic::amdgcn_wave_reduce_max, 1000 + M_SMax},
      {Intrinsic::amdgcn_wave_reduce_fmin, 1000 + M_MinNum},
      {Intrinsic::amdgcn_wave_reduce_fmax, 1000 + M_MaxNum},
  };
  return lookup(Table, ID, -1);
}

int vectorReduceOp(Intrinsic::ID ID) {
  static const struct {
    Intrinsic::ID ID;
    int Value;
  } Table[] = {
      {Intrinsic::vector_reduce_add, Instruction::Add},
      {Intrinsic::vector_reduce_mul, Instruction::Mul},
      {Intrinsic::vector_reduce_and, Instruction::And},
      {Intrinsic::vector_reduce_or, Instruction::Or},
      {Intrinsic::vector_reduce_xor, Instruction::Xor},
      {Intrinsic::vector_reduce_fadd, Instruction::FAdd},
      {Intrinsic::vector_reduce_fmul, Instruction::FMul},
      {Intrinsic::vector_reduce_smin, 1000 + M_SMin},
      {Intrinsic::vector_reduce_smax, 1000 + M_SMax},
      {Intrinsic::vector_reduce_umin, 1000 + M_UMin},
      {Intrinsic::vector_reduce_umax, 1000 + M_UMax},
      {Intrinsic::vector_reduce_fmin, 1000 + M_MinNum},
      {Intrinsic::vector_reduce_fmax, 1000 + M_MaxNum},
      {Intrinsic::vector_reduce_fminimum, 1000 + M_Minimum},
      {Intrinsic::vector_reduce_fmaximum, 1000 + M_Maximum},
  };
  return lookup(Table, ID, -1);
}

int overflowOp(Intrinsic::ID ID) {
  static const struct {
    Intrinsic::ID ID;
    int Value;
  } Table[] = {
      {Intrinsic::uadd_with_overflow, 0}, {Intrinsic::sadd_with_overflow, 1},
      {Intrinsic::usub_with_overflow, 2}, {Intrinsic::ssub_with_overflow, 3},
      {Intrinsic::umul_with_overflow, 4}, {Intrinsic::smul_with_overflow, 5},
  };
  return lookup(Table, ID, -1);
}

} // namespace moegen::emu
