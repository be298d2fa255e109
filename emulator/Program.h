//===- Program.h - Pre-decoded form of one kernel function -----------------===//
//
// Every SSA value of the kernel gets a fixed byte offset in a per-lane frame
// (shared with values whose live ranges do not overlap, FrameSlots.h).
// Instructions are decoded once into `Inst` records that address the frame by
// offset, so execution never touches llvm::Value maps.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_EMULATOR_PROGRAM_H
#define MOEGEN_EMULATOR_PROGRAM_H

#include <cstdint>
#include <string>
#include <vector>

namespace llvm {
class Function;
class Instruction;
} // namespace llvm

namespace moegen::emu {

/// Element kind of a register value. Storage sizes: see elemBytes().
enum class EK : uint8_t {
  I1, // one byte, 0 or 1
  I8,
  I16,
  I32,
  I64,
  IN, // other integer widths (i4, i6, i24, i128 is refused): zero-extended in 1/2/4/8 bytes
  F16,
  BF16,
  F32,
  F64,
  P32,  // addrspace(3) LDS and (5) private pointers: 32-bit offset
  P64,  // flat (0), global (1), constant (4) pointers: 64-bit address
  PBuf, // addrspace(7) buffer fat pointer: 16-byte resource + 32-bit offset (24 bytes)
  Rsrc, // addrspace(8) buffer resource: the 128-bit V#
  Agg,  // struct or array register (only moved, inserted, extracted)
};

unsigned elemBytes(EK K, unsigned Bits);

/// Address spaces the emulator models.
enum AddrSpace : uint8_t {
  ASFlat = 0,
  ASGlobal = 1,
  ASLds = 3,
  ASConst = 4,
  ASPriv = 5,
  ASBuf = 7,
  ASRsrc = 8
};

/// Flat apertures: a flat address with these high bits points into LDS or the
/// lane's private memory.
constexpr uint64_t LdsAperture = 0x1000000000000000ull;
constexpr uint64_t PrivAperture = 0x2000000000000000ull;
constexpr uint64_t ApertureMask = 0xF000000000000000ull;

struct Inst;
struct LaneCtx;
using PureFn = void (*)(const Inst &, uint8_t *Frame);
using CtxFn = bool (*)(const Inst &, LaneCtx &);

enum class Kind : uint8_t {
  Pure,   // PureFn on the frame
  Ctx,    // CtxFn with the lane context (memory, ids); false = error raised
  Br,     // Edge A
  CondBr, // cond at A (i1), edges B (true) and C (false); D = reconvergence pc
  Switch, // cond at A, Aux = first case, Aux2 = case count, default edge B;
          // D = reconvergence pc
  Ret,
  Unreachable,
  WaveOp,  // runs once for the active lanes of a wave (MFMA, ballot, ...)
  Lanes,   // a per-lane operation whose handler (a WaveFn) loops over the
           // active lanes itself: one call per instruction instead of per lane
  Barrier, // llvm.amdgcn.s.barrier, or an NVVM CTA barrier: Pred holds the
           // Barrier* flags, A the id slot, B the thread count slot, C the
           // reduction's predicate slot (NVPTX)
  // Scalar fast paths of common Pure operations, executed inline by the
  // interpreter loop (see fastKind()).
  AddI32,
  SubI32,
  MulI32,
  AndI32,
  OrI32,
  XorI32,
  ShlI32,
  LShrI32,
  AddI64,
  SubI64,
  MulI64,
  AndI64,
  OrI64,
  ShlI64,
  LShrI64,
  AddF32,
  SubF32,
  MulF32,
  FmaF32,
  ICmpI32,
  ICmpI64,
  Copy4,
  Copy8,
  TruncI64I32,
  ZExtI32I64,
  SExtI32I64,
  SIToFPI32F32,
  ZExtI8I32,
  // getelementptr with a constant offset (Tab[0..1]) and at most one i32 or
  // i64 index (Tab[3], scaled by Tab[5..6]), on a 64-bit or a 32-bit pointer,
  // or on a buffer fat pointer (the resource is copied, the offset moves).
  GepP64,
  GepP32,
  GepPBuf,
  // A shufflevector that concatenates A and B (I.D elements of I.Aux bytes
  // each) into a slot that overlaps neither.
  Concat,
};

struct Inst {
  Kind K = Kind::Pure;
  EK Ty = EK::I32;  // element kind of the result (or the operated-on type)
  uint8_t Bits = 0; // integer width for EK::IN and I1..I64
  uint8_t Pred = 0; // compare predicate, AS, sub-opcode...
  uint16_t N = 1;   // element count
  uint16_t Sub = 0; // operation selector
  uint32_t Dst = 0, A = 0, B = 0, C = 0, D = 0;
  uint32_t Aux = 0, Aux2 = 0;
  union {
    PureFn Pure;
    CtxFn Ctx;
    void *Wave;
  } Fn{nullptr};
  const uint32_t *Tab = nullptr; // into Program::Ints (GEP terms, masks)
  const llvm::Instruction *Src = nullptr;
};

/// Inst::Pred of an NVVM barrier (Kind::Barrier).
enum BarrierFlags : uint8_t {
  BarrierHasId = 1,    // the barrier id is at slot A (else barrier 0)
  BarrierHasCount = 2, // the participating threads are at slot B (else the CTA's)
  BarrierRedOr = 4,    // an i1 at slot C, ORed over the participants into Dst
  BarrierRegInc = 8,   // setmaxnreg.inc to Aux registers: waits for them, not for warps
};

/// The reconvergence pc of a branch whose paths only meet at the exit.
constexpr uint32_t NoBlock = ~0u;

/// A control-flow edge: the target and the phi moves to perform.
struct Edge {
  uint32_t Target = 0;
  uint32_t FirstMove = 0, NumMoves = 0;
  bool NeedsTemp = false;
};
struct Move {
  uint32_t Dst, Src, Bytes, TempOff;
};

struct SwitchCase {
  uint64_t Value;
  uint32_t Edge;
};

/// How one kernel argument sits in the kernarg segment and in the frame.
struct ArgSlot {
  uint32_t KernargOffset, Bytes, FrameOffset;
  EK Ty;
  uint8_t AS;
};

struct Program {
  std::string Name;
  const llvm::Function *F = nullptr;
  std::vector<Inst> Code;
  std::vector<Edge> Edges;
  std::vector<Move> Moves;
  std::vector<SwitchCase> Cases;
  std::vector<uint32_t> Ints;      // shuffle masks, GEP terms, ...
  std::vector<uint8_t> ConstImage; // frame prefix holding constants
  uint32_t FrameBytes = 0;
  uint32_t ArgsEnd = 0;    // frame [0, ArgsEnd) holds the arguments
  uint32_t ConstStart = 0; // frame [ConstStart, FrameBytes) holds constants
  uint32_t KernargBytes = 0;
  std::vector<ArgSlot> Args;
  uint32_t StaticLdsBytes = 0; // LDS used by addrspace(3) globals
  uint32_t DynLdsOffset = 0;   // where extern dynamic LDS starts
  uint32_t PrivateBytes = 0;   // allocas per lane
  uint32_t Entry = 0;
  uint32_t MinFlatWorkGroup = 1, MaxFlatWorkGroup = 1024; // "amdgpu-flat-work-group-size"
  uint32_t ReqdWorkGroup[3] = {0, 0, 0};                  // !reqd_work_group_size, 0 = none
  uint32_t MaxRegs = 0; // NVPTX "nvvm.maxnreg": each warp's registers a thread at launch, 0 = none
  bool UsesFences = false;
  // NVPTX: a wgmma reads shared memory through the async proxy, so the
  // generic proxy's writes there are tracked until a fence.proxy.async.
  bool UsesAsyncProxy = false;
  // The target: gfx950 (waves of 64 lanes, 160 KiB of LDS) or NVPTX sm_90a
  // (warps of 32, 227 KiB of shared memory a CTA, barriers that order shared
  // memory on their own).
  bool Nvptx = false;
  uint32_t WaveLanes = 64;
  uint32_t MaxLdsBytes = 163840;
};

} // namespace moegen::emu

#endif
