//===- Intrinsics.cpp - Decoding of calls ----------------------------------===//
//
// Every call is either an intrinsic the emulator implements or one of the
// device-library queries MLIR's gpu dialect lowers to (__ockl_get_*). Any
// other callee stops decoding with its name: never a silent zero.
//
//===----------------------------------------------------------------------===//
#include "emulator/Decoder.h"
#include "emulator/Handlers.h"
#include "emulator/Ops.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Operator.h"

using namespace llvm;

namespace moegen::emu {

namespace {
struct CallDecoder {
  Decoder &D;
  const CallInst &CI;
  Inst &In;
  StringRef Name;

  Expected<uint32_t> op(unsigned I) { return D.slot(CI.getArgOperand(I)); }
  Expected<uint64_t> imm(unsigned I) {
    if (auto *C = dyn_cast<ConstantInt>(CI.getArgOperand(I)))
      return C->getZExtValue();
    return D.unsupported(CI, "non-constant immediate operand of '" + Name.str() + "'");
  }
  Error unknown() {
    std::string S = "kernel '" + CI.getFunction()->getName().str() +
                    "': unknown intrinsic or function '" + Name.str() + "'";
    return createStringError(inconvertibleErrorCode(), S);
  }
  /// Operand slots into In.A, B, C, D in order.
  Error ops(std::initializer_list<unsigned> Idx) {
    uint32_t *Dst[4] = {&In.A, &In.B, &In.C, &In.D};
    unsigned K = 0;
    for (unsigned I : Idx) {
      auto S = op(I);
      if (!S)
        return S.takeError();
      *Dst[K++] = *S;
    }
    return Error::success();
  }
  Error pure(PureFn Fn) {
    In.K = Kind::Pure;
    In.Fn.Pure = Fn;
    return Error::success();
  }
  Error ctx(CtxFn Fn) {
    In.K = Kind::Ctx;
    In.Fn.Ctx = Fn;
    return Error::success();
  }
  Error wave(WaveFn Fn) {
    In.K = Kind::WaveOp;
    In.Fn.Wave = reinterpret_cast<void *>(Fn);
    return Error::success();
  }
  Error nop() {
    In.K = Kind::Pure;
    In.Fn.Pure = [](const Inst &, uint8_t *) {};
    return Error::success();
  }

  Error run();
  Error math();
  Error mfma();
  Error mfmaScale();
  Error cvt();
  Error buffer();
};
} // namespace

Error CallDecoder::math() {
  static const struct {
    const char *Name;
    MathOp Op;
    unsigned FpOps;
  } Table[] = {
      {"llvm.fabs.", M_FAbs, 1},         {"llvm.sqrt.", M_Sqrt, 1},
      {"llvm.floor.", M_Floor, 1},       {"llvm.ceil.", M_Ceil, 1},
      {"llvm.trunc.", M_Trunc, 1},       {"llvm.rint.", M_Rint, 1},
      {"llvm.nearbyint.", M_Rint, 1},    {"llvm.roundeven.", M_Rint, 1},
      {"llvm.round.", M_Round, 1},       {"llvm.exp2.", M_Exp2, 1},
      {"llvm.log2.", M_Log2, 1},         {"llvm.exp.", M_Exp, 1},
      {"llvm.log.", M_Log, 1},           {"llvm.sin.", M_Sin, 1},
      {"llvm.cos.", M_Cos, 1},           {"llvm.canonicalize.", M_Canon, 1},
      {"llvm.minnum.", M_MinNum, 2},     {"llvm.maxnum.", M_MaxNum, 2},
      {"llvm.minimumnum.", M_MinNum, 2}, {"llvm.maximumnum.", M_MaxNum, 2},
      {"llvm.minimum.", M_Minimum, 2},   {"llvm.maximum.", M_Maximum, 2},
      {"llvm.copysign.", M_CopySign, 2}, {"llvm.pow.", M_Pow, 2},
      {"llvm.fma.", M_Fma, 3},           {"llvm.fmuladd.", M_Fma, 3},
      {"llvm.ldexp.", M_Ldexp, 2},       {"llvm.amdgcn.fmed3.", M_FMed3, 3},
      {"llvm.amdgcn.rcp.", M_Rcp, 1},    {"llvm.amdgcn.rsq.", M_Rsq, 1},
      {"llvm.amdgcn.sqrt.", M_Sqrt, 1},  {"llvm.amdgcn.exp2.", M_Exp2, 1},
      {"llvm.amdgcn.log.", M_Log2, 1},   {"llvm.amdgcn.ldexp.", M_Ldexp, 2},
      {"llvm.smin.", M_SMin, 2},         {"llvm.smax.", M_SMax, 2},
      {"llvm.umin.", M_UMin, 2},         {"llvm.umax.", M_UMax, 2},
      {"llvm.abs.", M_Abs, 1},           {"llvm.ctpop.", M_Ctpop, 1},
      {"llvm.ctlz.", M_Ctlz, 1},         {"llvm.cttz.", M_Cttz, 1},
      {"llvm.bswap.", M_Bswap, 1},       {"llvm.bitreverse.", M_BitRev, 1},
      {"llvm.uadd.sat.", M_UAddSat, 2},  {"llvm.usub.sat.", M_USubSat, 2},
      {"llvm.sadd.sat.", M_SAddSat, 2},  {"llvm.ssub.sat.", M_SSubSat, 2},
      {"llvm.fshl.", M_FShl, 3},         {"llvm.fshr.", M_FShr, 3},
  };
  for (const auto &E : Table) {
    if (!Name.starts_with(E.Name))
      continue;
    auto TV = D.typeOf(CI.getType());
    if (!TV)
      return TV.takeError();
    // The target's own instructions, and llvm.sqrt with afn, which LLVM
    // selects to a bare v_sqrt_f32 (llvm.exp2/log2 keep their denormal
    // scaling even with afn).
    bool Hw = Name.starts_with("llvm.amdgcn.") ||
              (E.Op == M_Sqrt && isa<FPMathOperator>(CI) && CI.hasApproxFunc());
    PureFn Fn = Hw ? hwMathFn(E.Op, TV->K) : nullptr;
    if (!Fn)
      Fn = mathFn(E.Op, TV->K);
    if (!Fn)
      return D.unsupported(CI, "operand type of '" + Name.str() + "'");
    std::initializer_list<unsigned> One = {0}, Two = {0, 1}, Three = {0, 1, 2};
    if (Error Err = ops(E.FpOps == 1 ? One : E.FpOps == 2 ? Two : Three))
      return Err;
    In.Ty = TV->K;
    In.Bits = TV->Bits;
    In.N = TV->N;
    In.Sub = E.Op;
    In.Aux = E.FpOps;
    return pure(Fn);
  }
  return Error::success();
}

Error CallDecoder::mfma() {
  // <C> mfma.f32.MxNxK.<t>(A, B, C, cbsz, abid, blgp)
  struct Shape {
    const char *Name;
    unsigned M, K, ElemKind; // 0 = bf16, 1 = f16
  } Shapes[] = {
      {"llvm.amdgcn.mfma.f32.16x16x32.bf16", 16, 32, 0},
      {"llvm.amdgcn.mfma.f32.32x32x16.bf16", 32, 16, 0},
      {"llvm.amdgcn.mfma.f32.16x16x32.f16", 16, 32, 1},
      {"llvm.amdgcn.mfma.f32.32x32x16.f16", 32, 16, 1},
      {"llvm.amdgcn.mfma.f32.16x16x16bf16.1k", 16, 16, 0},
      {"llvm.amdgcn.mfma.f32.32x32x8bf16.1k", 32, 8, 0},
      {"llvm.amdgcn.mfma.f32.16x16x16f16", 16, 16, 1},
      {"llvm.amdgcn.mfma.f32.32x32x8f16", 32, 8, 1},
  };
  for (const Shape &S : Shapes) {
    if (Name != S.Name)
      continue;
    for (unsigned I = 3; I < 6; ++I) {
      auto V = imm(I);
      if (!V)
        return V.takeError();
      // Broadcast controls are not modelled: refuse rather than guess.
      if (*V != 0)
        return D.unsupported(CI, "non-zero cbsz/abid/blgp");
    }
    if (Error E = ops({0, 1, 2}))
      return E;
    In.Aux = S.M;
    In.Aux2 = S.K;
    In.Pred = uint8_t(S.ElemKind);
    return wave(waveMfma);
  }
  return unknown();
}

Error CallDecoder::mfmaScale() {
  unsigned M = Name.starts_with("llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4") ? 16 : 32;
  auto Cbsz = imm(3), Blgp = imm(4), OpA = imm(5), OpB = imm(7);
  if (!Cbsz)
    return Cbsz.takeError();
  if (!Blgp)
    return Blgp.takeError();
  if (!OpA)
    return OpA.takeError();
  if (!OpB)
    return OpB.takeError();
  if (*Cbsz > 4 || *Blgp > 4 || *OpA > 3 || *OpB > 3)
    return D.unsupported(CI, "scaled MFMA format or opsel");
  auto Need = [](uint64_t Fmt) { return Fmt <= 1 ? 8u : Fmt <= 3 ? 6u : 4u; };
  auto DwA = D.typeOf(CI.getArgOperand(0)->getType());
  auto DwB = D.typeOf(CI.getArgOperand(1)->getType());
  if (!DwA)
    return DwA.takeError();
  if (!DwB)
    return DwB.takeError();
  if (DwA->Bytes / 4 < Need(*Cbsz) || DwB->Bytes / 4 < Need(*Blgp))
    return D.unsupported(CI, "scaled MFMA operand narrower than its format");
  if (Error E = ops({0, 1, 2, 6}))
    return E;
  auto SB = op(8);
  if (!SB)
    return SB.takeError();
  In.Aux = *SB;
  In.Aux2 = M;
  // Literal (0, 0) scales: LLVM selects the unscaled instruction (x1),
  // docs/gfx950-facts.md §1.5.
  auto IsZero = [](const Value *V) {
    auto *C = dyn_cast<ConstantInt>(V);
    return C && C->isZero();
  };
  bool Unscaled = IsZero(CI.getArgOperand(6)) && IsZero(CI.getArgOperand(8));
  In.Sub = uint16_t(*Cbsz | (*Blgp << 4) | (*OpA << 8) | (*OpB << 10) | (Unscaled << 12));
  return wave(waveMfmaScale);
}

Error CallDecoder::cvt() {
  static const struct {
    const char *Name;
    CvtOp Op;
    int Ops;
  } Table[] = {
      {"llvm.amdgcn.cvt.scalef32.pk.fp4.f32", CV_PkFp4F32, 4},
      {"llvm.amdgcn.cvt.scalef32.pk.f32.fp4", CV_PkF32Fp4, 2},
      {"llvm.amdgcn.cvt.scalef32.pk.f16.fp4", CV_PkF16Fp4, 2},
      {"llvm.amdgcn.cvt.scalef32.pk.bf16.fp4", CV_PkBf16Fp4, 2},
      {"llvm.amdgcn.cvt.scalef32.pk.fp8.f32", CV_PkFp8F32, 4},
      {"llvm.amdgcn.cvt.scalef32.pk.bf8.f32", CV_PkBf8F32, 4},
      {"llvm.amdgcn.cvt.scalef32.pk.f32.fp8", CV_PkF32Fp8, 2},
      {"llvm.amdgcn.cvt.scalef32.pk.f32.bf8", CV_PkF32Bf8, 2},
      {"llvm.amdgcn.cvt.scalef32.f32.fp8", CV_F32Fp8, 2},
      {"llvm.amdgcn.cvt.scalef32.f32.bf8", CV_F32Bf8, 2},
      {"llvm.amdgcn.cvt.scalef32.pk.fp4.bf16", CV_PkFp4Bf16, 3},
      {"llvm.amdgcn.cvt.scalef32.pk.fp4.f16", CV_PkFp4F16, 3},
      {"llvm.amdgcn.cvt.scalef32.pk.fp8.bf16", CV_PkFp8Bf16, 3},
      {"llvm.amdgcn.cvt.scalef32.pk.fp8.f16", CV_PkFp8F16, 3},
      {"llvm.amdgcn.cvt.scalef32.pk.bf8.bf16", CV_PkBf8Bf16, 3},
      {"llvm.amdgcn.cvt.scalef32.pk.bf8.f16", CV_PkBf8F16, 3},
  };
  for (const auto &E : Table) {
    if (Name != E.Name)
      continue;
    std::initializer_list<unsigned> L1 = {0}, L2 = {0, 1}, L3 = {0, 1, 2}, L4 = {0, 1, 2, 3};
    if (Error Err = ops(E.Ops == 1 ? L1 : E.Ops == 2 ? L2 : E.Ops == 3 ? L3 : L4))
      return Err;
    auto Sel = imm(unsigned(CI.arg_size() - 1));
    if (!Sel)
      return Sel.takeError();
    In.Aux = uint32_t(*Sel);
    In.Sub = E.Op;
    return pure(opCvt);
  }
  return unknown();
}

Error CallDecoder::buffer() {
  // raw.ptr.buffer.* and raw.buffer.* (v4i32 resource) share operands.
  StringRef Rest = Name.starts_with("llvm.amdgcn.raw.ptr.buffer.")
                       ? Name.drop_front(strlen("llvm.amdgcn.raw.ptr.buffer."))
                       : Name.drop_front(strlen("llvm.amdgcn.raw.buffer."));
  auto Bytes = [&](Type *T) -> Expected<VT> {
    auto TV = D.typeOf(T);
    if (TV && !TV->Plain)
      return D.unsupported(CI, "buffer access type");
    return TV;
  };
  if (Rest.starts_with("load.lds")) {
    if (Error E = ops({0, 1, 3, 4}))
      return E;
    auto Size = imm(2), Off = imm(5);
    if (!Size)
      return Size.takeError();
    if (!Off)
      return Off.takeError();
    In.Aux = uint32_t(*Size);
    In.Aux2 = uint32_t(*Off);
    return wave(waveBufferLoadLds);
  }
  if (Rest.starts_with("load.format") || Rest.starts_with("store.format"))
    return unknown();
  if (Rest.starts_with("load")) {
    auto TV = Bytes(CI.getType());
    if (!TV)
      return TV.takeError();
    if (Error E = ops({0, 1, 2}))
      return E;
    In.Aux = TV->Bytes;
    return ctx(ctxBufferLoad);
  }
  if (Rest.starts_with("store")) {
    auto TV = Bytes(CI.getArgOperand(0)->getType());
    if (!TV)
      return TV.takeError();
    if (Error E = ops({0, 1, 2, 3}))
      return E;
    In.Aux = TV->Bytes;
    if (In.Aux > 64)
      return D.unsupported(CI, "buffer store wider than 64 bytes");
    return ctx(ctxBufferStore);
  }
  if (Rest.starts_with("atomic.")) {
    StringRef Op = Rest.drop_front(7).split('.').first;
    int Sub = StringSwitch<int>(Op)
                  .Case("swap", AtomicRMWInst::Xchg)
                  .Case("add", AtomicRMWInst::Add)
                  .Case("sub", AtomicRMWInst::Sub)
                  .Case("smin", AtomicRMWInst::Min)
                  .Case("umin", AtomicRMWInst::UMin)
                  .Case("smax", AtomicRMWInst::Max)
                  .Case("umax", AtomicRMWInst::UMax)
                  .Case("and", AtomicRMWInst::And)
                  .Case("or", AtomicRMWInst::Or)
                  .Case("xor", AtomicRMWInst::Xor)
                  .Case("fadd", AtomicRMWInst::FAdd)
                  .Case("fmin", AtomicRMWInst::FMin)
                  .Case("fmax", AtomicRMWInst::FMax)
                  .Case("cmpswap", 100)
                  .Default(-1);
    if (Sub < 0)
      return unknown();
    auto TV = D.typeOf(CI.getArgOperand(0)->getType());
    if (!TV)
      return TV.takeError();
    if (Sub == 100) {
      if (Error E = ops({0, 2, 3, 4}))
        return E;
      auto Cmp = op(1);
      if (!Cmp)
        return Cmp.takeError();
      In.Aux2 = *Cmp;
    } else if (Error E = ops({0, 1, 2, 3})) {
      return E;
    }
    In.Sub = uint16_t(Sub);
    In.Ty = TV->K;
    In.Bits = TV->Bits;
    In.N = TV->N;
    In.Aux = TV->Bytes;
    return ctx(ctxBufferAtomic);
  }
  return unknown();
}

Error CallDecoder::run() {
  In.Dst = CI.getType()->isVoidTy() ? 0 : D.resultSlot(&CI);
  const Function *Callee = CI.getCalledFunction();
  if (!Callee)
    return D.unsupported(CI, "indirect call");
  Name = Callee->getName();

  if (Name.starts_with("__ockl_get_")) {
    int Q = StringSwitch<int>(Name)
                .Case("__ockl_get_local_size", OK_LocalSize)
                .Case("__ockl_get_num_groups", OK_NumGroups)
                .Case("__ockl_get_group_id", OK_GroupId)
                .Case("__ockl_get_local_id", OK_LocalId)
                .Case("__ockl_get_global_size", OK_GlobalSize)
                .Case("__ockl_get_global_id", OK_GlobalId)
                .Default(-1);
    if (Q < 0)
      return unknown();
    if (Error E = ops({0}))
      return E;
    In.Sub = uint16_t(Q);
    return ctx(ctxOckl);
  }
  if (!Name.starts_with("llvm."))
    return unknown();

  // No-ops for the emulator: hints, scheduling, waits (memory is immediate).
  static const char *const Nops[] = {"llvm.assume",
                                     "llvm.lifetime.",
                                     "llvm.experimental.noalias.scope.decl",
                                     "llvm.dbg.",
                                     "llvm.sideeffect",
                                     "llvm.amdgcn.s.waitcnt",
                                     "llvm.amdgcn.sched.",
                                     "llvm.amdgcn.s.setprio",
                                     "llvm.amdgcn.s.sleep",
                                     "llvm.amdgcn.iglp.opt",
                                     "llvm.amdgcn.wave.barrier",
                                     "llvm.invariant.",
                                     "llvm.prefetch",
                                     "llvm.amdgcn.s.nop",
                                     "llvm.pseudoprobe"};
  for (const char *N : Nops)
    if (Name.starts_with(N))
      return nop();
  if (Name.starts_with("llvm.expect.")) {
    if (Error E = ops({0}))
      return E;
    In.Aux = D.typeOf(CI.getType())->Bytes;
    return pure(opCopy);
  }

  if (Name == "llvm.amdgcn.s.barrier") {
    In.K = Kind::Barrier;
    return Error::success();
  }
  if (Name.starts_with("llvm.amdgcn.workitem.id.") ||
      Name.starts_with("llvm.amdgcn.workgroup.id.")) {
    In.Pred = uint8_t(Name.back() - 'x');
    return ctx(Name.contains("workitem") ? ctxWorkitemId : ctxWorkgroupId);
  }
  if (Name == "llvm.amdgcn.mbcnt.lo" || Name == "llvm.amdgcn.mbcnt.hi") {
    if (Error E = ops({0, 1}))
      return E;
    In.Sub = Name.ends_with("hi");
    return ctx(ctxMbcnt);
  }
  if (Name == "llvm.amdgcn.implicitarg.ptr" || Name == "llvm.amdgcn.dispatch.ptr" ||
      Name == "llvm.amdgcn.kernarg.segment.ptr") {
    In.Sub = Name.contains("implicitarg") ? 0 : Name.contains("dispatch") ? 1 : 2;
    return ctx(ctxSegmentPtr);
  }
  if (Name.starts_with("llvm.amdgcn.make.buffer.rsrc.")) {
    if (Error E = ops({0, 1, 2, 3}))
      return E;
    In.Pred = Name.starts_with("llvm.amdgcn.make.buffer.rsrc.p7") ? 7 : 8;
    In.Bits = uint8_t(CI.getArgOperand(2)->getType()->getIntegerBitWidth());
    return pure(opMakeRsrc);
  }
  if (Name.starts_with("llvm.amdgcn.raw.ptr.buffer.") ||
      Name.starts_with("llvm.amdgcn.raw.buffer."))
    return buffer();
  if (Name.starts_with("llvm.amdgcn.load.to.lds.") || Name == "llvm.amdgcn.global.load.lds") {
    if (Error E = ops({0, 1}))
      return E;
    auto Size = imm(2), Off = imm(3);
    if (!Size)
      return Size.takeError();
    if (!Off)
      return Off.takeError();
    In.Pred = uint8_t(CI.getArgOperand(0)->getType()->getPointerAddressSpace());
    if (In.Pred != 1 && In.Pred != 7)
      return D.unsupported(CI, "load.to.lds source address space");
    In.Aux = uint32_t(*Size);
    In.Aux2 = uint32_t(*Off);
    if (In.Aux != 1 && In.Aux != 2 && In.Aux != 4 && In.Aux != 12 && In.Aux != 16)
      return D.unsupported(CI, "load.to.lds size");
    return wave(waveLoadToLds);
  }
  if (Name.starts_with("llvm.amdgcn.ds.read.tr")) {
    if (Name.starts_with("llvm.amdgcn.ds.read.tr6"))
      // docs/gfx950-facts.md §6.2: the b96 tr_b6 layout is not established [U].
      return D.unsupported(CI, "ds_read_b96_tr_b6 (lane layout unknown)");
    if (Error E = ops({0}))
      return E;
    In.Sub = Name.starts_with("llvm.amdgcn.ds.read.tr4")   ? 4
             : Name.starts_with("llvm.amdgcn.ds.read.tr8") ? 8
                                                           : 16;
    return wave(waveDsReadTr);
  }
  if (Name.starts_with("llvm.amdgcn.readfirstlane") || Name.starts_with("llvm.amdgcn.readlane")) {
    bool First = Name.starts_with("llvm.amdgcn.readfirstlane");
    if (Error E = First ? ops({0}) : ops({0, 1}))
      return E;
    In.Aux = D.typeOf(CI.getType())->Bytes;
    if (In.Aux > 64)
      return D.unsupported(CI, "readlane of a value wider than 64 bytes");
    return wave(First ? waveReadFirstLane : waveReadLane);
  }
  if (Name.starts_with("llvm.amdgcn.ballot.")) {
    if (Error E = ops({0}))
      return E;
    In.Aux = CI.getType()->getIntegerBitWidth() / 8;
    return wave(waveBallot);
  }
  if (Name.starts_with("llvm.amdgcn.wave.reduce.")) {
    StringRef Op = Name.drop_front(strlen("llvm.amdgcn.wave.reduce.")).split('.').first;
    int Sub = StringSwitch<int>(Op)
                  .Case("add", Instruction::Add)
                  .Case("sub", Instruction::Sub)
                  .Case("and", Instruction::And)
                  .Case("or", Instruction::Or)
                  .Case("xor", Instruction::Xor)
                  .Case("fadd", Instruction::FAdd)
                  .Case("fsub", Instruction::FSub)
                  .Case("umin", 1000 + M_UMin)
                  .Case("umax", 1000 + M_UMax)
                  .Case("min", 1000 + M_SMin)
                  .Case("max", 1000 + M_SMax)
                  .Case("fmin", 1000 + M_MinNum)
                  .Case("fmax", 1000 + M_MaxNum)
                  .Default(-1);
    auto TV = D.typeOf(CI.getType());
    if (!TV)
      return TV.takeError();
    if (Sub < 0 || TV->N != 1 ||
        !(TV->K == EK::I32 || TV->K == EK::I64 || TV->K == EK::F32 || TV->K == EK::F64))
      return unknown();
    if (Error E = ops({0}))
      return E;
    In.Ty = TV->K;
    In.Bits = TV->Bits;
    In.Sub = uint16_t(Sub);
    return wave(waveReduce);
  }
  if (Name == "llvm.amdgcn.permlane32.swap" || Name == "llvm.amdgcn.permlane16.swap") {
    if (Error E = ops({0, 1}))
      return E;
    In.Sub = Name.contains("32") ? 32 : 16;
    return wave(wavePermlaneSwap);
  }
  if (Name == "llvm.amdgcn.ds.swizzle") {
    if (Error E = ops({0}))
      return E;
    auto Off = imm(1);
    if (!Off)
      return Off.takeError();
    In.Aux = uint32_t(*Off);
    if (In.Aux >= 0xC000) // rotate / FFT modes are not modelled
      return D.unsupported(CI, "ds_swizzle rotate/FFT mode");
    return wave(waveDsSwizzle);
  }
  if (Name.starts_with("llvm.amdgcn.update.dpp.") || Name.starts_with("llvm.amdgcn.mov.dpp.")) {
    bool Update = Name.starts_with("llvm.amdgcn.update.dpp.");
    unsigned Base = Update ? 2 : 1;
    if (Error E = Update ? ops({0, 1}) : ops({0, 0}))
      return E;
    auto Ctrl = imm(Base), Row = imm(Base + 1), Bank = imm(Base + 2), Bound = imm(Base + 3);
    if (!Ctrl)
      return Ctrl.takeError();
    if (!Row)
      return Row.takeError();
    if (!Bank)
      return Bank.takeError();
    if (!Bound)
      return Bound.takeError();
    In.Aux = uint32_t(*Ctrl);
    In.Sub = uint16_t(*Row | (*Bank << 4));
    In.Pred = uint8_t(*Bound);
    In.Aux2 = D.typeOf(CI.getType())->Bytes;
    return wave(waveDpp);
  }
  if (Name == "llvm.amdgcn.ds.bpermute" || Name == "llvm.amdgcn.ds.permute") {
    if (Error E = ops({0, 1}))
      return E;
    In.Sub = Name == "llvm.amdgcn.ds.permute";
    return wave(waveBpermute);
  }
  if (Name.starts_with("llvm.amdgcn.mfma.scale."))
    return mfmaScale();
  if (Name.starts_with("llvm.amdgcn.mfma."))
    return mfma();
  {
    int Sub = StringSwitch<int>(Name)
                  .Case("llvm.amdgcn.cvt.pk.fp8.f32", 0)
                  .Case("llvm.amdgcn.cvt.pk.bf8.f32", 1)
                  .Case("llvm.amdgcn.cvt.f32.fp8", 2)
                  .Case("llvm.amdgcn.cvt.f32.bf8", 3)
                  .Case("llvm.amdgcn.cvt.pk.f32.fp8", 4)
                  .Case("llvm.amdgcn.cvt.pk.f32.bf8", 5)
                  .Default(-1);
    if (Sub >= 0) {
      if (Error E = Sub <= 1 ? ops({0, 1, 2}) : ops({0}))
        return E;
      auto Sel = imm(unsigned(CI.arg_size() - 1));
      if (!Sel)
        return Sel.takeError();
      In.Aux = uint32_t(*Sel);
      In.Sub = uint16_t(Sub);
      return ctx(ctxCvtUnscaled);
    }
  }
  if (Name.starts_with("llvm.amdgcn.cvt."))
    return cvt();
  if (Name.starts_with("llvm.vector.reduce.")) {
    StringRef Op = Name.drop_front(strlen("llvm.vector.reduce.")).split('.').first;
    int Sub = StringSwitch<int>(Op)
                  .Case("add", Instruction::Add)
                  .Case("mul", Instruction::Mul)
                  .Case("and", Instruction::And)
                  .Case("or", Instruction::Or)
                  .Case("xor", Instruction::Xor)
                  .Case("fadd", Instruction::FAdd)
                  .Case("fmul", Instruction::FMul)
                  .Case("smin", 1000 + M_SMin)
                  .Case("smax", 1000 + M_SMax)
                  .Case("umin", 1000 + M_UMin)
                  .Case("umax", 1000 + M_UMax)
                  .Case("fmin", 1000 + M_MinNum)
                  .Case("fmax", 1000 + M_MaxNum)
                  .Case("fminimum", 1000 + M_Minimum)
                  .Case("fmaximum", 1000 + M_Maximum)
                  .Default(-1);
    if (Sub < 0)
      return unknown();
    bool WithStart = Op == "fadd" || Op == "fmul";
    auto TV = D.typeOf(CI.getArgOperand(WithStart ? 1 : 0)->getType());
    if (!TV)
      return TV.takeError();
    if (Error E = WithStart ? ops({1, 0}) : ops({0}))
      return E;
    In.Ty = TV->K;
    In.Bits = TV->Bits;
    In.N = TV->N;
    In.Sub = uint16_t(Sub);
    return pure(opVecReduce);
  }
  if (Name.contains(".with.overflow.")) {
    int Sub = StringSwitch<int>(Name.drop_front(5).split('.').first)
                  .Case("uadd", 0)
                  .Case("sadd", 1)
                  .Case("usub", 2)
                  .Case("ssub", 3)
                  .Case("umul", 4)
                  .Case("smul", 5)
                  .Default(-1);
    auto TV = D.typeOf(CI.getArgOperand(0)->getType());
    if (!TV)
      return TV.takeError();
    if (Sub < 0 || TV->N != 1)
      return unknown();
    if (Error E = ops({0, 1}))
      return E;
    In.Ty = TV->K;
    In.Bits = TV->Bits;
    In.Sub = uint16_t(Sub);
    In.Aux = (TV->Bytes + 7) & ~7u;
    return pure(opOverflow);
  }
  if (Error E = math())
    return E;
  if (In.Fn.Pure)
    return Error::success();
  return unknown();
}

Error decodeCall(Decoder &D, const CallInst &CI, Inst &In) {
  CallDecoder CD{D, CI, In, {}};
  return CD.run();
}

} // namespace moegen::emu
