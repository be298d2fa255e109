//===- IntrinsicTables.h - What each supported intrinsic decodes to --------===//
//
// Lookups by llvm::Intrinsic::ID (internal to the call decoder). Overloaded
// intrinsics have one ID for all their types; the decoder reads the types.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_EMULATOR_INTRINSICTABLES_H
#define MOEGEN_EMULATOR_INTRINSICTABLES_H

#include "emulator/Handlers.h"
#include "emulator/Ops.h"

#include "llvm/IR/Intrinsics.h"

#include <optional>

namespace moegen::emu {

/// Hints, scheduling controls and waits: no-ops for the emulator (its memory
/// accesses complete at once).
bool isNopIntrinsic(llvm::Intrinsic::ID ID);

struct MathIntrinsic {
  MathOp Op;
  unsigned FpOps; // operands
  bool Target;    // an llvm.amdgcn.* instruction (the hardware unit's semantics)
};
std::optional<MathIntrinsic> mathIntrinsic(llvm::Intrinsic::ID ID);

/// bf16/f16 MFMA: D[MxM] += A[MxK] B[KxM].
struct MfmaShape {
  unsigned M, K;
  bool F16; // else bf16
};
std::optional<MfmaShape> mfmaShape(llvm::Intrinsic::ID ID);

struct ScaledCvt {
  CvtOp Op;
  unsigned Ops; // operands before the selector
};
std::optional<ScaledCvt> scaledCvt(llvm::Intrinsic::ID ID);
/// The ctxCvtUnscaled Sub of an unscaled fp8/bf8 conversion, or -1.
int unscaledCvt(llvm::Intrinsic::ID ID);

/// raw.buffer.* and raw.ptr.buffer.* (same operands).
struct BufferIntrinsic {
  enum Kind { Load, Store, LoadLds, Atomic } K;
  int Sub; // atomics: llvm::AtomicRMWInst::BinOp, or AtomicCmpSwap
};
constexpr int AtomicCmpSwap = 100;
std::optional<BufferIntrinsic> bufferIntrinsic(llvm::Intrinsic::ID ID);

/// Reductions: an llvm::Instruction opcode, or 1000 + MathOp for min/max;
/// -1 when ID is not one.
int waveReduceOp(llvm::Intrinsic::ID ID);
int vectorReduceOp(llvm::Intrinsic::ID ID);
/// *.with.overflow: opOverflow's Sub (uadd, sadd, usub, ssub, umul, smul), or -1.
int overflowOp(llvm::Intrinsic::ID ID);

} // namespace moegen::emu

#endif
