//===- Intrinsics.cpp - Decoding of calls ----------------------------------===//
//
// Every call is either an intrinsic the emulator implements (matched by its
// llvm::Intrinsic::ID) or one of the device-library queries MLIR's gpu
// dialect lowers to (__ockl_get_*, matched by name). Any other callee stops
// decoding with its name: never a silent zero.
//
//===----------------------------------------------------------------------===//
#include "emulator/Decoder.h"
#include "emulator/Handlers.h"
#include "emulator/IntrinsicTables.h"
#include "emulator/Ops.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicsAMDGPU.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Operator.h"

using namespace llvm;

namespace moegen::emu {

namespace {
struct CallDecoder {
  Decoder &D;
  const CallInst &CI;
  Inst &In;
  StringRef Name;
  Intrinsic::ID ID = Intrinsic::not_intrinsic;

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
  /// The slots of the first Count operands as In.Tab (Program::Ints, fixed
  /// up once the program is complete).
  Error tab(unsigned Count) {
    SmallVector<uint32_t, 64> Slots;
    for (unsigned I = 0; I < Count; ++I) {
      auto S = op(I);
      if (!S)
        return S.takeError();
      Slots.push_back(*S);
    }
    In.Tab = reinterpret_cast<const uint32_t *>(uintptr_t(D.addInts(Slots)) + 1);
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
  Error lanes(WaveFn Fn) {
    In.K = Kind::Lanes;
    In.Fn.Wave = reinterpret_cast<void *>(Fn);
    return Error::success();
  }
  /// Immediate operands: each (operand index, destination) in order.
  Error imms(std::initializer_list<std::pair<unsigned, uint64_t *>> List) {
    for (auto [Idx, Out] : List) {
      auto V = imm(Idx);
      if (!V)
        return V.takeError();
      *Out = *V;
    }
    return Error::success();
  }
  Error nop() {
    In.K = Kind::Pure;
    In.Fn.Pure = [](const Inst &, uint8_t *) {};
    return Error::success();
  }

  Error run();
  Error ockl();
  Error intrinsic();
  Error math(const MathIntrinsic &E);
  Error mfma(const MfmaShape &S);
  Error mfmaScale(unsigned M);
  Error cvt(const ScaledCvt &E);
  Error cvtUnscaled(int Sub);
  Error buffer(const BufferIntrinsic &B);
  Error loadToLds();
  Error dsReadTr();
  Error dpp(bool Update);
  Error waveReduction(int Sub);
  Error vectorReduction(int Sub);
  Error overflow(int Sub);
  Error nvvm(bool &Matched);
  Error inlineAsm();
};
} // namespace

Error CallDecoder::math(const MathIntrinsic &E) {
  auto TV = D.typeOf(CI.getType());
  if (!TV)
    return TV.takeError();
  // The target's own instructions, and llvm.sqrt with afn, which LLVM
  // selects to a bare v_sqrt_f32 (llvm.exp2/log2 keep their denormal
  // scaling even with afn).
  bool Hw = E.Target || (E.Op == M_Sqrt && isa<FPMathOperator>(CI) && CI.hasApproxFunc());
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

Error CallDecoder::mfma(const MfmaShape &S) {
  // <C> mfma.f32.MxNxK.<t>(A, B, C, cbsz, abid, blgp)
  uint64_t Cbsz, Abid, Blgp;
  if (Error E = imms({{3, &Cbsz}, {4, &Abid}, {5, &Blgp}}))
    return E;
  // Broadcast controls are not modelled: refuse rather than guess.
  if (Cbsz || Abid || Blgp)
    return D.unsupported(CI, "non-zero cbsz/abid/blgp");
  if (Error E = ops({0, 1, 2}))
    return E;
  In.Aux = S.M;
  In.Aux2 = S.K;
  In.Pred = uint8_t(S.F16);
  return wave(waveMfma);
}

Error CallDecoder::mfmaScale(unsigned M) {
  uint64_t Cbsz, Blgp, OpA, OpB;
  if (Error E = imms({{3, &Cbsz}, {4, &Blgp}, {5, &OpA}, {7, &OpB}}))
    return E;
  if (Cbsz > 4 || Blgp > 4 || OpA > 3 || OpB > 3)
    return D.unsupported(CI, "scaled MFMA format or opsel");
  auto Need = [](uint64_t Fmt) { return Fmt <= 1 ? 8u : Fmt <= 3 ? 6u : 4u; };
  auto DwA = D.typeOf(CI.getArgOperand(0)->getType());
  auto DwB = D.typeOf(CI.getArgOperand(1)->getType());
  if (!DwA)
    return DwA.takeError();
  if (!DwB)
    return DwB.takeError();
  if (DwA->Bytes / 4 < Need(Cbsz) || DwB->Bytes / 4 < Need(Blgp))
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
  In.Sub = uint16_t(Cbsz | (Blgp << 4) | (OpA << 8) | (OpB << 10) | (Unscaled << 12));
  return wave(waveMfmaScale);
}

Error CallDecoder::cvt(const ScaledCvt &E) {
  std::initializer_list<unsigned> L1 = {0}, L2 = {0, 1}, L3 = {0, 1, 2}, L4 = {0, 1, 2, 3};
  if (Error Err = ops(E.Ops == 1 ? L1 : E.Ops == 2 ? L2 : E.Ops == 3 ? L3 : L4))
    return Err;
  uint64_t Sel;
  if (Error Err = imms({{unsigned(CI.arg_size() - 1), &Sel}}))
    return Err;
  In.Aux = uint32_t(Sel);
  In.Sub = E.Op;
  const bool FromFp4 = E.Op == CV_PkF32Fp4 || E.Op == CV_PkF16Fp4 || E.Op == CV_PkBf16Fp4;
  return FromFp4 ? lanes(lanesCvtFromFp4) : pure(opCvt);
}

Error CallDecoder::cvtUnscaled(int Sub) {
  if (Error E = Sub <= 1 ? ops({0, 1, 2}) : ops({0}))
    return E;
  uint64_t Sel;
  if (Error E = imms({{unsigned(CI.arg_size() - 1), &Sel}}))
    return E;
  In.Aux = uint32_t(Sel);
  In.Sub = uint16_t(Sub);
  return ctx(ctxCvtUnscaled);
}

Error CallDecoder::buffer(const BufferIntrinsic &B) {
  // raw.ptr.buffer.* and raw.buffer.* (v4i32 resource) share operands.
  auto Bytes = [&](Type *T) -> Expected<VT> {
    auto TV = D.typeOf(T);
    if (TV && !TV->Plain)
      return D.unsupported(CI, "buffer access type");
    return TV;
  };
  switch (B.K) {
  case BufferIntrinsic::LoadLds: {
    if (Error E = ops({0, 1, 3, 4}))
      return E;
    uint64_t Size, Off;
    if (Error E = imms({{2, &Size}, {5, &Off}}))
      return E;
    In.Aux = uint32_t(Size);
    In.Aux2 = uint32_t(Off);
    return wave(waveBufferLoadLds);
  }
  case BufferIntrinsic::Load: {
    auto TV = Bytes(CI.getType());
    if (!TV)
      return TV.takeError();
    if (Error E = ops({0, 1, 2}))
      return E;
    In.Aux = TV->Bytes;
    return ctx(ctxBufferLoad);
  }
  case BufferIntrinsic::Store: {
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
  case BufferIntrinsic::Atomic:
    break;
  }
  auto TV = D.typeOf(CI.getArgOperand(0)->getType());
  if (!TV)
    return TV.takeError();
  if (B.Sub == AtomicCmpSwap) {
    if (Error E = ops({0, 2, 3, 4}))
      return E;
    auto Cmp = op(1);
    if (!Cmp)
      return Cmp.takeError();
    In.Aux2 = *Cmp;
  } else if (Error E = ops({0, 1, 2, 3})) {
    return E;
  }
  In.Sub = uint16_t(B.Sub);
  In.Ty = TV->K;
  In.Bits = TV->Bits;
  In.N = TV->N;
  In.Aux = TV->Bytes;
  return ctx(ctxBufferAtomic);
}

Error CallDecoder::loadToLds() {
  if (Error E = ops({0, 1}))
    return E;
  uint64_t Size, Off;
  if (Error E = imms({{2, &Size}, {3, &Off}}))
    return E;
  In.Pred = uint8_t(CI.getArgOperand(0)->getType()->getPointerAddressSpace());
  if (In.Pred != 1 && In.Pred != 7)
    return D.unsupported(CI, "load.to.lds source address space");
  In.Aux = uint32_t(Size);
  In.Aux2 = uint32_t(Off);
  if (In.Aux != 1 && In.Aux != 2 && In.Aux != 4 && In.Aux != 12 && In.Aux != 16)
    return D.unsupported(CI, "load.to.lds size");
  return wave(waveLoadToLds);
}

Error CallDecoder::dsReadTr() {
  if (ID == Intrinsic::amdgcn_ds_read_tr6_b96)
    // docs/gfx950-facts.md §6.2: the b96 tr_b6 layout is not established [U].
    return D.unsupported(CI, "ds_read_b96_tr_b6 (lane layout unknown)");
  if (Error E = ops({0}))
    return E;
  In.Sub = ID == Intrinsic::amdgcn_ds_read_tr4_b64   ? 4
           : ID == Intrinsic::amdgcn_ds_read_tr8_b64 ? 8
                                                     : 16;
  return wave(waveDsReadTr);
}

Error CallDecoder::dpp(bool Update) {
  unsigned Base = Update ? 2 : 1;
  if (Error E = Update ? ops({0, 1}) : ops({0, 0}))
    return E;
  uint64_t Ctrl, Row, Bank, Bound;
  if (Error E = imms({{Base, &Ctrl}, {Base + 1, &Row}, {Base + 2, &Bank}, {Base + 3, &Bound}}))
    return E;
  In.Aux = uint32_t(Ctrl);
  In.Sub = uint16_t(Row | (Bank << 4));
  In.Pred = uint8_t(Bound);
  In.Aux2 = D.typeOf(CI.getType())->Bytes;
  return wave(waveDpp);
}

Error CallDecoder::waveReduction(int Sub) {
  auto TV = D.typeOf(CI.getType());
  if (!TV)
    return TV.takeError();
  if (TV->N != 1 || !(TV->K == EK::I32 || TV->K == EK::I64 || TV->K == EK::F32 || TV->K == EK::F64))
    return unknown();
  if (Error E = ops({0}))
    return E;
  In.Ty = TV->K;
  In.Bits = TV->Bits;
  In.Sub = uint16_t(Sub);
  return wave(waveReduce);
}

Error CallDecoder::vectorReduction(int Sub) {
  bool WithStart = Sub == Instruction::FAdd || Sub == Instruction::FMul;
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

Error CallDecoder::overflow(int Sub) {
  auto TV = D.typeOf(CI.getArgOperand(0)->getType());
  if (!TV)
    return TV.takeError();
  if (TV->N != 1)
    return unknown();
  if (Error E = ops({0, 1}))
    return E;
  In.Ty = TV->K;
  In.Bits = TV->Bits;
  In.Sub = uint16_t(Sub);
  In.Aux = (TV->Bytes + 7) & ~7u;
  return pure(opOverflow);
}

Error CallDecoder::ockl() {
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

/// The NVVM intrinsics moegen's sm_90a kernels use (Matched = false for
/// any other ID).
Error CallDecoder::nvvm(bool &Matched) {
  using namespace Intrinsic;
  Matched = true;
  // The special registers of one dimension each: tid, ctaid, ntid, nctaid.
  static const struct {
    Intrinsic::ID X, Y, Z;
    CtxFn Fn;
    uint16_t Sub;
  } Dims[] = {
      {nvvm_read_ptx_sreg_tid_x, nvvm_read_ptx_sreg_tid_y, nvvm_read_ptx_sreg_tid_z, ctxWorkitemId,
       0},
      {nvvm_read_ptx_sreg_ctaid_x, nvvm_read_ptx_sreg_ctaid_y, nvvm_read_ptx_sreg_ctaid_z,
       ctxWorkgroupId, 0},
      {nvvm_read_ptx_sreg_ntid_x, nvvm_read_ptx_sreg_ntid_y, nvvm_read_ptx_sreg_ntid_z, ctxNvvmSreg,
       NS_Ntid},
      {nvvm_read_ptx_sreg_nctaid_x, nvvm_read_ptx_sreg_nctaid_y, nvvm_read_ptx_sreg_nctaid_z,
       ctxNvvmSreg, NS_Nctaid},
  };
  for (const auto &R : Dims)
    if (ID == R.X || ID == R.Y || ID == R.Z) {
      In.Pred = uint8_t(ID == R.X ? 0 : ID == R.Y ? 1 : 2);
      In.Sub = R.Sub;
      return ctx(R.Fn);
    }
  switch (ID) {
  case nvvm_read_ptx_sreg_laneid:
  case nvvm_read_ptx_sreg_warpsize:
    In.Sub = ID == nvvm_read_ptx_sreg_laneid ? NS_LaneId : NS_WarpSize;
    return ctx(ctxNvvmSreg);
  case nvvm_barrier_cta_sync_aligned_all:
  case nvvm_barrier_cta_sync_all:
    In.Pred = BarrierHasId;
    In.K = Kind::Barrier;
    return ops({0});
  case nvvm_barrier_cta_sync_aligned_count:
  case nvvm_barrier_cta_sync_count:
    In.Pred = BarrierHasId | BarrierHasCount;
    In.K = Kind::Barrier;
    return ops({0, 1});
  case nvvm_barrier_cta_arrive_aligned_count:
  case nvvm_barrier_cta_arrive_count:
    In.Pred = BarrierHasId | BarrierHasCount;
    if (Error E = ops({0, 1}))
      return E;
    return wave(waveBarrierArrive);
  case nvvm_setmaxnreg_inc_sync_aligned_u32:
  case nvvm_setmaxnreg_dec_sync_aligned_u32: {
    // (LLVM's verifier holds the count to 24-256, by 8.) The registers a
    // warp starts with are the kernel's .maxnreg, which setmaxnreg needs.
    uint64_t Regs;
    if (Error E = imms({{0, &Regs}}))
      return E;
    if (!D.program().MaxRegs)
      return D.unsupported(CI, "setmaxnreg in a kernel without \"nvvm.maxnreg\" (.maxnreg)");
    In.Aux = uint32_t(Regs);
    if (ID == nvvm_setmaxnreg_dec_sync_aligned_u32)
      return wave(waveSetMaxRegDec);
    In.Pred = BarrierRegInc;
    In.K = Kind::Barrier;
    return Error::success();
  }
  case nvvm_barrier_cta_red_or_aligned_all:
  case nvvm_barrier_cta_red_or_all:
    if (Error E = ops({0}))
      return E;
    if (auto S = op(1))
      In.C = *S;
    else
      return S.takeError();
    In.Pred = BarrierHasId | BarrierRedOr;
    In.K = Kind::Barrier;
    return Error::success();
  case nvvm_bar_warp_sync: // the warp's lanes run in lockstep
  case nvvm_griddepcontrol_launch_dependents:
  case nvvm_griddepcontrol_wait:
  case nvvm_nanosleep: // kernels run one after another: a wait's first try finds its data
    return nop();
  case nvvm_fence_proxy_async_shared_cta:
    return wave(waveFenceProxyAsync);
  case nvvm_vote_ballot_sync:
  case nvvm_vote_any_sync:
  case nvvm_vote_all_sync:
  case nvvm_vote_uni_sync:
    In.Sub = ID == nvvm_vote_ballot_sync ? NV_Ballot
             : ID == nvvm_vote_any_sync  ? NV_Any
             : ID == nvvm_vote_all_sync  ? NV_All
                                         : NV_Uni;
    if (Error E = ops({0, 1}))
      return E;
    return wave(waveVoteSync);
  case nvvm_shfl_sync_up_i32:
  case nvvm_shfl_sync_up_f32:
  case nvvm_shfl_sync_up_i32p:
  case nvvm_shfl_sync_up_f32p:
  case nvvm_shfl_sync_down_i32:
  case nvvm_shfl_sync_down_f32:
  case nvvm_shfl_sync_down_i32p:
  case nvvm_shfl_sync_down_f32p:
  case nvvm_shfl_sync_bfly_i32:
  case nvvm_shfl_sync_bfly_f32:
  case nvvm_shfl_sync_bfly_i32p:
  case nvvm_shfl_sync_bfly_f32p:
  case nvvm_shfl_sync_idx_i32:
  case nvvm_shfl_sync_idx_f32:
  case nvvm_shfl_sync_idx_i32p:
  case nvvm_shfl_sync_idx_f32p: {
    StringRef Mode = Name.drop_front(StringRef("llvm.nvvm.shfl.sync.").size());
    In.Sub = Mode.starts_with("up")     ? NF_Up
             : Mode.starts_with("down") ? NF_Down
             : Mode.starts_with("bfly") ? NF_Bfly
                                        : NF_Idx;
    In.Aux = CI.getType()->isStructTy();
    if (Error E = ops({0, 1, 2, 3}))
      return E;
    return wave(waveShflSync);
  }
  case nvvm_prmt:
    if (Error E = ops({0, 1, 2}))
      return E;
    return pure(opPrmt);
  case nvvm_ex2_approx:
    if (!CI.getType()->isFloatTy())
      return D.unsupported(CI, "ex2.approx of a type other than f32");
    if (Error E = ops({0}))
      return E;
    return pure(opEx2Approx);
  case nvvm_mma_m16n8k16_row_col_bf16:
    if (Error E = tab(10))
      return E;
    return wave(waveMmaBf16);
  case nvvm_cp_async_ca_shared_global_4:
  case nvvm_cp_async_ca_shared_global_8:
  case nvvm_cp_async_ca_shared_global_16:
  case nvvm_cp_async_cg_shared_global_16:
  case nvvm_cp_async_ca_shared_global_4_s:
  case nvvm_cp_async_ca_shared_global_8_s:
  case nvvm_cp_async_ca_shared_global_16_s:
  case nvvm_cp_async_cg_shared_global_16_s: {
    StringRef Rest = Name.drop_front(StringRef("llvm.nvvm.cp.async.cX.shared.global.").size());
    In.Aux = Rest.starts_with("16") ? 16 : Rest.starts_with("8") ? 8 : 4;
    In.Pred = Rest.ends_with(".s");
    if (Error E = In.Pred ? ops({0, 1, 2}) : ops({0, 1}))
      return E;
    return ctx(ctxCpAsync);
  }
  case nvvm_wgmma_fence_sync_aligned: // wgmmas run when issued here
    return nop();
  case nvvm_wgmma_commit_group_sync_aligned:
    return wave(waveWgmmaCommit);
  case nvvm_wgmma_wait_group_sync_aligned: {
    uint64_t N;
    if (Error E = imms({{0, &N}}))
      return E;
    In.Aux = uint32_t(N);
    return wave(waveWgmmaWait);
  }
  case nvvm_cp_async_commit_group:
    return ctx(ctxCpAsyncCommit);
  case nvvm_cp_async_wait_group: {
    uint64_t N;
    if (Error E = imms({{0, &N}}))
      return E;
    In.Aux = uint32_t(N);
    return ctx(ctxCpAsyncWait);
  }
  case nvvm_cp_async_wait_all: // commit_group, then wait_group 0
    In.Aux = 0;
    In.Sub = 1;
    return ctx(ctxCpAsyncWait);
  default:
    Matched = false;
    return Error::success();
  }
}

/// The text of moegen's wgmma (Sm90GemmKernel::wgmma): NAcc f32 accumulators
/// tied to their inputs, then A (a0..a3 in registers, or its shared-memory
/// descriptor), B's descriptor and scale-d; neither operand transposed.
static std::string wgmmaAsm(unsigned NAcc, bool SharedA) {
  auto Arg = [](unsigned I) { return "$" + std::to_string(I); };
  const unsigned A = 2 * NAcc, DescB = SharedA ? A + 1 : A + 4;
  std::string T = "{\n.reg .pred p;\nsetp.ne.b32 p, " + Arg(DescB + 1) +
                  ", 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(2 * NAcc) +
                  "k16.f32.bf16.bf16 {";
  for (unsigned I = 0; I < NAcc; ++I)
    T += (I ? ", " : "") + Arg(I);
  T += SharedA ? "}, " + Arg(A)
               : "}, {" + Arg(A) + ", " + Arg(A + 1) + ", " + Arg(A + 2) + ", " + Arg(A + 3) + "}";
  T += ", " + Arg(DescB) + (SharedA ? ", p, 1, 1, 0, 0;\n}" : ", p, 1, 1, 0;\n}");
  return T;
}

/// The register pass after a wgmma wait (Sm90GemmKernel::waitWgmmas): N
/// words XORed with one more operand; the operands after it are only kept
/// alive.
static std::string xorWordsAsm(unsigned N) {
  std::string T;
  for (unsigned I = 0; I < N; ++I)
    T += "xor.b32 $" + std::to_string(I) + ", $" + std::to_string(N + I) + ", $" +
         std::to_string(2 * N) + ";\n";
  return T;
}

/// Inline PTX: the statements moegen's sm_90a kernels emit, matched whole.
Error CallDecoder::inlineAsm() {
  StringRef Text = cast<InlineAsm>(CI.getCalledOperand())->getAsmString();
  if (Text == "griddepcontrol.wait;")
    return nop(); // kernels run one after another here
  if (Text == "red.relaxed.gpu.global.add.noftz.bf16x2 [$0], $1;") {
    if (Error E = ops({0, 1}))
      return E;
    return ctx(ctxRedAddBf16x2);
  }
  if (Text == "movmatrix.sync.aligned.m8n8.trans.b16 $0, $1;") {
    if (Error E = ops({0}))
      return E;
    return wave(waveMovMatrixTrans);
  }
  if (Text == "red.relaxed.gpu.global.add.noftz.v4.bf16x2 [$0], {$1, $2, $3, $4};") {
    if (Error E = tab(5))
      return E;
    return ctx(ctxRedAddV4Bf16x2);
  }
  auto *ST = dyn_cast<StructType>(CI.getType());
  unsigned Results = ST ? ST->getNumElements() : 0;
  In.Aux = Results;
  for (bool SharedA : {false, true}) {
    unsigned Operands = Results + (SharedA ? 3 : 6);
    if (!Results || Results > 128 || Results % 4 || CI.arg_size() != Operands ||
        Text != wgmmaAsm(Results, SharedA))
      continue;
    if (Error E = tab(Operands))
      return E;
    In.Sub = SharedA;
    D.program().UsesAsyncProxy = true;
    return wave(waveWgmmaBf16);
  }
  if (CI.arg_size() >= 2 * Results + 1 && Text == xorWordsAsm(Results) &&
      (Results || CI.getType()->isVoidTy())) {
    if (!Results)
      return nop(); // an empty statement that only keeps its operands alive
    if (Error E = tab(Results + 1))
      return E;
    return pure(opXorWords);
  }
  return D.unsupported(CI, "inline asm \"" + Text.str() + "\"");
}

/// The intrinsics with their own operand conventions; the rest go through
/// the tables (IntrinsicTables.h).
Error CallDecoder::intrinsic() {
  using namespace Intrinsic;
  bool IsNvvm = false;
  if (Error E = nvvm(IsNvvm); E || IsNvvm)
    return E;
  switch (ID) {
  case expect:
  case expect_with_probability:
    if (Error E = ops({0}))
      return E;
    In.Aux = D.typeOf(CI.getType())->Bytes;
    return pure(opCopy);
  case amdgcn_s_barrier:
    In.K = Kind::Barrier;
    return Error::success();
  case amdgcn_workitem_id_x:
  case amdgcn_workitem_id_y:
  case amdgcn_workitem_id_z:
    In.Pred = ID == amdgcn_workitem_id_x ? 0 : ID == amdgcn_workitem_id_y ? 1 : 2;
    return ctx(ctxWorkitemId);
  case amdgcn_workgroup_id_x:
  case amdgcn_workgroup_id_y:
  case amdgcn_workgroup_id_z:
    In.Pred = ID == amdgcn_workgroup_id_x ? 0 : ID == amdgcn_workgroup_id_y ? 1 : 2;
    return ctx(ctxWorkgroupId);
  case amdgcn_mbcnt_lo:
  case amdgcn_mbcnt_hi:
    if (Error E = ops({0, 1}))
      return E;
    In.Sub = ID == amdgcn_mbcnt_hi;
    return ctx(ctxMbcnt);
  case amdgcn_implicitarg_ptr:
  case amdgcn_dispatch_ptr:
  case amdgcn_kernarg_segment_ptr:
    In.Sub = ID == amdgcn_implicitarg_ptr ? 0 : ID == amdgcn_dispatch_ptr ? 1 : 2;
    return ctx(ctxSegmentPtr);
  case amdgcn_make_buffer_rsrc:
    if (Error E = ops({0, 1, 2, 3}))
      return E;
    In.Pred = CI.getType()->getPointerAddressSpace() == 7 ? 7 : 8;
    In.Bits = uint8_t(CI.getArgOperand(2)->getType()->getIntegerBitWidth());
    return pure(opMakeRsrc);
  case amdgcn_load_to_lds:
  case amdgcn_global_load_lds:
    return loadToLds();
  case amdgcn_ds_read_tr4_b64:
  case amdgcn_ds_read_tr8_b64:
  case amdgcn_ds_read_tr16_b64:
  case amdgcn_ds_read_tr6_b96:
    return dsReadTr();
  case amdgcn_readfirstlane:
  case amdgcn_readlane: {
    bool First = ID == amdgcn_readfirstlane;
    if (Error E = First ? ops({0}) : ops({0, 1}))
      return E;
    In.Aux = D.typeOf(CI.getType())->Bytes;
    if (In.Aux > 64)
      return D.unsupported(CI, "readlane of a value wider than 64 bytes");
    return wave(First ? waveReadFirstLane : waveReadLane);
  }
  case amdgcn_ballot:
    if (Error E = ops({0}))
      return E;
    In.Aux = CI.getType()->getIntegerBitWidth() / 8;
    return wave(waveBallot);
  case amdgcn_permlane32_swap:
  case amdgcn_permlane16_swap:
    if (Error E = ops({0, 1}))
      return E;
    In.Sub = ID == amdgcn_permlane32_swap ? 32 : 16;
    return wave(wavePermlaneSwap);
  case amdgcn_ds_swizzle: {
    if (Error E = ops({0}))
      return E;
    uint64_t Off;
    if (Error E = imms({{1, &Off}}))
      return E;
    In.Aux = uint32_t(Off);
    if (In.Aux >= 0xC000) // rotate / FFT modes are not modelled
      return D.unsupported(CI, "ds_swizzle rotate/FFT mode");
    return wave(waveDsSwizzle);
  }
  case amdgcn_update_dpp:
  case amdgcn_mov_dpp:
    return dpp(ID == amdgcn_update_dpp);
  case amdgcn_ds_bpermute:
  case amdgcn_ds_permute:
    if (Error E = ops({0, 1}))
      return E;
    In.Sub = ID == amdgcn_ds_permute;
    return wave(waveBpermute);
  case amdgcn_mfma_scale_f32_16x16x128_f8f6f4:
    return mfmaScale(16);
  case amdgcn_mfma_scale_f32_32x32x64_f8f6f4:
    return mfmaScale(32);
  default:
    break;
  }
  if (auto S = mfmaShape(ID))
    return mfma(*S);
  if (auto C = scaledCvt(ID))
    return cvt(*C);
  if (int Sub = unscaledCvt(ID); Sub >= 0)
    return cvtUnscaled(Sub);
  if (auto B = bufferIntrinsic(ID))
    return buffer(*B);
  if (int Sub = waveReduceOp(ID); Sub >= 0)
    return waveReduction(Sub);
  if (int Sub = vectorReduceOp(ID); Sub >= 0)
    return vectorReduction(Sub);
  if (int Sub = overflowOp(ID); Sub >= 0)
    return overflow(Sub);
  if (auto M = mathIntrinsic(ID))
    return math(*M);
  return unknown();
}

Error CallDecoder::run() {
  In.Dst = CI.getType()->isVoidTy() ? 0 : D.resultSlot(&CI);
  if (CI.isInlineAsm())
    return inlineAsm();
  const Function *Callee = CI.getCalledFunction();
  if (!Callee)
    return D.unsupported(CI, "indirect call");
  Name = Callee->getName();
  ID = Callee->getIntrinsicID();
  if (ID == Intrinsic::not_intrinsic)
    return Name.starts_with("__ockl_get_") ? ockl() : unknown();
  if (isNopIntrinsic(ID))
    return nop();
  return intrinsic();
}

Error decodeCall(Decoder &D, const CallInst &CI, Inst &In) {
  CallDecoder CD{D, CI, In, {}};
  return CD.run();
}

} // namespace moegen::emu
