//===- Handlers.h - Lane and wave handlers (internal) ----------------------===//
#ifndef MOEGEN_EMULATOR_HANDLERS_H
#define MOEGEN_EMULATOR_HANDLERS_H

#include "emulator/Exec.h"

namespace moegen::emu {

/// The lanes a wave operation runs for.
struct WaveCtx {
  Runner *R;
  Workgroup *WG;
  Wave *W;
  uint64_t Active; // bit per lane
  inline uint8_t *frame(unsigned Lane) const; // defined in Runner.h
};
using WaveFn = bool (*)(const Inst &, WaveCtx &);

// Memory (MemOps.cpp). Conventions are documented in Decoder.cpp.
/// Loads and stores of the active lanes, in lane order, in one call
/// (Kind::Lanes).
bool lanesLoad(const Inst &I, WaveCtx &W);
bool lanesStore(const Inst &I, WaveCtx &W);
bool ctxAtomicRMW(const Inst &I, LaneCtx &C);
bool ctxCmpXchg(const Inst &I, LaneCtx &C);
bool ctxFence(const Inst &I, LaneCtx &C);
/// Applies an atomicrmw operation (llvm::AtomicRMWInst::BinOp) of N elements
/// at Mem; false if the operation is not supported.
bool applyRmw(unsigned Op, EK Ty, unsigned Bits, unsigned N, uint8_t *Mem, const uint8_t *Val);

// Lane intrinsics (LaneIntrinsics.cpp).
bool ctxWorkitemId(const Inst &I, LaneCtx &C);  // Pred = dimension
bool ctxWorkgroupId(const Inst &I, LaneCtx &C); // Pred = dimension
bool ctxMbcnt(const Inst &I, LaneCtx &C);       // Sub 0 = lo, 1 = hi
bool ctxSegmentPtr(const Inst &I, LaneCtx &C);  // Sub 0 implicitarg, 1 dispatch, 2 kernarg
bool ctxOckl(const Inst &I, LaneCtx &C);        // Sub = OcklQuery, A = dimension
bool ctxBufferLoad(const Inst &I, LaneCtx &C);
bool ctxBufferStore(const Inst &I, LaneCtx &C);
bool ctxBufferAtomic(const Inst &I, LaneCtx &C);
void opMakeRsrc(const Inst &I, uint8_t *F);
void opCvt(const Inst &I, uint8_t *F); // Sub = CvtOp
/// opCvt's fp4 -> f32/f16/bf16 conversions alone, for the active lanes at
/// once (Kind::Lanes: a16w4's dequantization, one per weight byte).
bool lanesCvtFromFp4(const Inst &I, WaveCtx &W);
/// Unscaled fp8/bf8 conversions: Sub 0 pk.fp8.f32, 1 pk.bf8.f32, 2 f32.fp8,
/// 3 f32.bf8, 4 pk.f32.fp8, 5 pk.f32.bf8.
bool ctxCvtUnscaled(const Inst &I, LaneCtx &C);

enum OcklQuery : uint16_t {
  OK_LocalSize,
  OK_NumGroups,
  OK_GroupId,
  OK_LocalId,
  OK_GlobalSize,
  OK_GlobalId
};

enum CvtOp : uint16_t {
  CV_PkFp4F32, // i32 (old, f32 a, f32 b, scale, sel)
  CV_PkF32Fp4, // <2 x f32> (i32 src, scale, sel)
  CV_PkF16Fp4,
  CV_PkBf16Fp4,
  CV_PkFp8F32, // <2 x i16> (old, a, b, scale, i1 hi)
  CV_PkBf8F32,
  CV_PkF32Fp8, // <2 x f32> (i32 src, scale, i1 hi)
  CV_PkF32Bf8,
  CV_F32Fp8, // f32 (i32 src, scale, sel)
  CV_F32Bf8,
  CV_PkFp4Bf16, // i32 (old, <2 x bf16>, scale, sel)
  CV_PkFp4F16,
  CV_PkFp8Bf16, // <2 x i16> (old, <2 x bf16>, scale, i1 hi)
  CV_PkFp8F16,
  CV_PkBf8Bf16,
  CV_PkBf8F16,
};

// Wave operations (WaveOps.cpp, Mfma.cpp).
bool waveReadFirstLane(const Inst &I, WaveCtx &W);
bool waveReadLane(const Inst &I, WaveCtx &W);
bool waveBallot(const Inst &I, WaveCtx &W);
bool waveReduce(const Inst &I, WaveCtx &W);       // Sub = op (Instruction opcode or 1000 + MathOp)
bool wavePermlaneSwap(const Inst &I, WaveCtx &W); // Sub = 16 or 32
bool waveDsSwizzle(const Inst &I, WaveCtx &W);
bool waveDpp(const Inst &I, WaveCtx &W);
bool waveBpermute(const Inst &I, WaveCtx &W);  // Sub 0 bpermute, 1 permute
bool waveDsReadTr(const Inst &I, WaveCtx &W);  // Sub = element bits
bool waveLoadToLds(const Inst &I, WaveCtx &W); // Pred = source address space
bool waveBufferLoadLds(const Inst &I, WaveCtx &W);
bool waveMfma(const Inst &I, WaveCtx &W);
bool waveMfmaScale(const Inst &I, WaveCtx &W);

// NVPTX operations (NvvmOps.cpp).
enum NvvmSreg : uint16_t { NS_Ntid, NS_Nctaid, NS_LaneId, NS_WarpSize };
enum NvvmShfl : uint16_t { NF_Up, NF_Down, NF_Bfly, NF_Idx };
enum NvvmVote : uint16_t { NV_Ballot, NV_Any, NV_All, NV_Uni };
bool ctxNvvmSreg(const Inst &I, LaneCtx &C); // Sub = NvvmSreg, Pred = dimension
/// shfl.sync: A membermask, B value, C lane/delta, D clamp and segment
/// mask; Sub = NvvmShfl; Aux = 1 for the {value, i1} form.
bool waveShflSync(const Inst &I, WaveCtx &W);
bool waveVoteSync(const Inst &I, WaveCtx &W); // A membermask, B predicate; Sub = NvvmVote
void opPrmt(const Inst &I, uint8_t *F);       // A, B, selector C (default mode)
void opEx2Approx(const Inst &I, uint8_t *F);
bool waveMmaBf16(const Inst &I, WaveCtx &W); // Tab = the 10 operand slots
bool waveMovMatrixTrans(const Inst &I, WaveCtx &W); // A the source word
/// cp.async: A shared destination, B global source, C source size where
/// Pred & 1; Aux = bytes.
bool ctxCpAsync(const Inst &I, LaneCtx &C);
bool ctxCpAsyncCommit(const Inst &I, LaneCtx &C);
bool ctxCpAsyncWait(const Inst &I, LaneCtx &C);  // Aux = groups left pending
bool ctxRedAddBf16x2(const Inst &I, LaneCtx &C); // A address, B <2 x bf16>
bool ctxRedAddV4Bf16x2(const Inst &I, LaneCtx &C); // Tab: the address, then 4 <2 x bf16> words
/// wgmma.mma_async m64nNk16 f32 += bf16 x bf16, B by a shared-memory
/// descriptor, A from registers (Sub 0) or by a descriptor too (Sub 1):
/// Aux = N / 2 accumulators; Tab = their slots, then a0..a3 (Sub 0) or A's
/// descriptor (Sub 1), B's descriptor and scale-d.
bool waveWgmmaBf16(const Inst &I, WaveCtx &W);
bool waveWgmmaCommit(const Inst &I, WaveCtx &W);
bool waveWgmmaWait(const Inst &I, WaveCtx &W); // Aux = groups left pending
/// fence.proxy.async.shared::cta: the active lanes' earlier shared-memory
/// writes become visible to the async proxy (Runner::asyncProxyRead).
bool waveFenceProxyAsync(const Inst &I, WaveCtx &W);
/// barrier.cta.arrive: the warp's threads count towards named barrier A's
/// current phase (B threads in all) and the warp goes on (Pred as
/// Kind::Barrier's flags).
bool waveBarrierArrive(const Inst &I, WaveCtx &W);
/// setmaxnreg.dec to Aux registers: the warp's registers above it go to the
/// workgroup's pool (setmaxnreg.inc, a Kind::Barrier with BarrierRegInc,
/// takes them from there).
bool waveSetMaxRegDec(const Inst &I, WaveCtx &W);
/// Placed before an instruction that reads a wgmma accumulator as data: the
/// warp must have no wgmma in flight (every group waited for).
bool waveCheckAccumulatorRead(const Inst &I, WaveCtx &W);
/// Aux results, each the XOR of Tab[i] and Tab[Aux].
void opXorWords(const Inst &I, uint8_t *F);

} // namespace moegen::emu

#endif
