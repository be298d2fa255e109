//===- MxSoftwareConvert.h - MX element encoding without hardware -*- C++ -*-===//
//
// sm_90a has no conversion to fp4 (cvt ... e2m1x2 needs sm_100a) and none
// with an MX scale operand, so the kernels encode in integer and f32
// arithmetic: x / 2^(byte - 127) as an exact power-of-two product, then
// round to nearest even with saturation, exactly as runtime/numerics
// (Formats.h: encodeF4E2M1, encodeF8E4M3) does.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEMPLATES_SM90_MXSOFTWARECONVERT_H
#define MOEGEN_TEMPLATES_SM90_MXSOFTWARECONVERT_H

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace moegen::sm90 {

/// The 4-bit e2m1 code (sign in bit 3) of f32 `v`, as an i32: RNE,
/// saturating at 6, NaN to +-0.
mlir::Value emitE2m1Code(mlir::ImplicitLocOpBuilder &b, mlir::Value v);

/// The e4m3fn byte of f32 `v`, as an i32: RNE, saturating at 448, NaN to
/// 0x7F (sign kept).
mlir::Value emitE4m3Code(mlir::ImplicitLocOpBuilder &b, mlir::Value v);

/// 2^(127 - scaleByte) as f32 (scaleByte an i32): the exact reciprocal of an
/// e8m0 scale for bytes 0..253, all a finite block's scale can be.
mlir::Value emitInverseScale(mlir::ImplicitLocOpBuilder &b, mlir::Value scaleByte);

/// The 32 elements of `block` (vector<32xf32>) divided by the e8m0 scale
/// `scaleByte` (i32, 0..254; 255 yields codes of no meaning, as the scale
/// decodes to NaN) and encoded: 4 i32 words of fp4x2 (element 2j in the low
/// nibble of byte j) or 8 words of e4m3 (element i in byte i), little-endian.
llvm::SmallVector<mlir::Value> emitMxBlockWords(mlir::ImplicitLocOpBuilder &b, mlir::Value block,
                                                mlir::Value scaleByte, bool fp4);

} // namespace moegen::sm90

#endif // MOEGEN_TEMPLATES_SM90_MXSOFTWARECONVERT_H
