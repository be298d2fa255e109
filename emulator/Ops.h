//===- Ops.h - Frame-only ("pure") operations of the interpreter -----------===//
#ifndef MOEGEN_EMULATOR_OPS_H
#define MOEGEN_EMULATOR_OPS_H

#include "emulator/Program.h"

namespace moegen::emu {

/// Math operations selected by Inst::Sub for unary/binary/ternary intrinsics.
enum MathOp : uint16_t {
  M_FAbs,
  M_FNeg,
  M_Sqrt,
  M_Floor,
  M_Ceil,
  M_Trunc,
  M_Rint,
  M_Round,
  M_Exp2,
  M_Log2,
  M_Exp,
  M_Log,
  M_Sin,
  M_Cos,
  M_Rcp,
  M_Rsq,
  M_Canon,
  M_MinNum,
  M_MaxNum,
  M_Minimum,
  M_Maximum,
  M_CopySign,
  M_Pow,
  M_Ldexp,
  M_Fma,
  M_FMed3,
  M_SMin,
  M_SMax,
  M_UMin,
  M_UMax,
  M_Abs,
  M_Ctpop,
  M_Ctlz,
  M_Cttz,
  M_Bswap,
  M_BitRev,
  M_UAddSat,
  M_USubSat,
  M_SAddSat,
  M_SSubSat,
  M_FShl,
  M_FShr,
};

/// Integer/float binary operator (llvm::Instruction opcode); null if the
/// type is not handled.
PureFn binaryFn(unsigned Opcode, EK Ty);
PureFn icmpFn(EK Ty);
PureFn fcmpFn(EK Ty);
/// Casts: Inst::Sub holds the source EK, Inst::Aux the source integer bits.
PureFn castFn(unsigned Opcode);
/// A specialized cast when one exists for the kinds, else castFn(Opcode).
PureFn castFn(unsigned Opcode, EK From, EK To);
PureFn mathFn(MathOp Op, EK Ty);
/// The f32 transcendental unit (exp2, log2, rcp, rsq, sqrt): within 1 ulp,
/// denormal inputs and outputs flushed to zero; null for other operations.
PureFn hwMathFn(MathOp Op, EK Ty);
/// `fdiv afn`: x * rcp(y) through hwMathFn's rcp; null unless f32.
PureFn approxDivFn(EK Ty);

void opCopy(const Inst &I, uint8_t *F); // Aux bytes from A
void opSelect(const Inst &I, uint8_t *F);
void opRepack(const Inst &I, uint8_t *F); // bitcast with sub-byte elements
void opGep(const Inst &I, uint8_t *F);
void opExtractElt(const Inst &I, uint8_t *F);
void opInsertElt(const Inst &I, uint8_t *F);
void opShuffle(const Inst &I, uint8_t *F);
void opConcat(const Inst &I, uint8_t *F); // a shuffle that concatenates A and B
/// Whether a concatenation's result slot overlaps neither operand.
bool concatApart(const Inst &I);
void opExtractValue(const Inst &I, uint8_t *F);
void opInsertValue(const Inst &I, uint8_t *F);
void opVecReduce(const Inst &I, uint8_t *F); // Sub = llvm opcode-like selector
void opOverflow(const Inst &I, uint8_t *F);  // {iN, i1} with.overflow; Sub selects

/// The inline fast path of a decoded Pure instruction, or Kind::Pure.
Kind fastKind(const Inst &I);
bool evalICmp(unsigned Pred, uint64_t A, uint64_t B, unsigned Bits);

/// Element helpers shared with the intrinsic handlers.
uint64_t readInt(const uint8_t *P, unsigned Bytes);
void writeInt(uint8_t *P, unsigned Bytes, uint64_t V);
int64_t signExtend(uint64_t V, unsigned Bits);
uint64_t maskBits(uint64_t V, unsigned Bits);
double readFp(const uint8_t *P, EK Ty);
void writeFp(uint8_t *P, EK Ty, double V); // rounds once to the format (RNE)

} // namespace moegen::emu

#endif
