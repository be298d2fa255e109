//===- MxSoftwareDecode.h - MX element decoding without hardware -*- C++ -*-===//
//
// sm_90a has no fp4 type, no conversion from e2m1 and no scaled conversion:
// the GEMM decodes its MX operands with integer operations into f32 (every
// e2m1 and e4m3 value and every e8m0 power of two is an f32), exactly as
// runtime/numerics (Formats.h: decodeF4E2M1, decodeF8E4M3, decodeE8M0) does.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEMPLATES_SM90_MXSOFTWAREDECODE_H
#define MOEGEN_TEMPLATES_SM90_MXSOFTWAREDECODE_H

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace moegen::sm90 {

/// The f32 value of the e2m1 code in the low 4 bits of i32 `code` (sign in bit 3).
mlir::Value emitE2m1ToF32(mlir::ImplicitLocOpBuilder &b, mlir::Value code);

/// The f32 value of the e4m3fn byte in the low 8 bits of i32 `byte`
/// (0x7F and 0xFF are NaN; subnormals exact).
mlir::Value emitE4m3ToF32(mlir::ImplicitLocOpBuilder &b, mlir::Value byte);

/// 2^(e - 127) as f32 for the e8m0 byte `e` (i32, 0..255): e = 0 is the f32
/// subnormal 2^-127, e = 255 NaN.
mlir::Value emitE8m0ToF32(mlir::ImplicitLocOpBuilder &b, mlir::Value e);

} // namespace moegen::sm90

#endif // MOEGEN_TEMPLATES_SM90_MXSOFTWAREDECODE_H
