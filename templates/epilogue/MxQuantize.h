//===- MxQuantize.h - MX block scales and conversions as IR -----*- C++ -*-===//
//
// The pieces of an MX quantization epilogue, shared by the stage-1 GEMM's
// fused quantization and the split-K finishing kernel:
//   scale rules   the e8m0 byte (i32) of a block from its amax's f32 bits
//   conversions   f32 values and an e8m0 byte to fp4x2 / e4m3 bytes (i8),
//                 or to the f32 values those bytes decode to
// Non-finite amax gives the NaN scale 0xFF under every rule.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEMPLATES_EPILOGUE_MXQUANTIZE_H
#define MOEGEN_TEMPLATES_EPILOGUE_MXQUANTIZE_H

#include "compiler/spec/TargetInfo.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace moegen {

/// The in-epilogue rule: amax rounded to a power of two at 1.5x, minus the
/// format's headroom (2 for e2m1's 6 = 1.5 * 2^2, 8 for e4m3's 448 < 2^9),
/// clamped at 0.
mlir::Value emitEpilogueScale(mlir::ImplicitLocOpBuilder &b, mlir::Value amaxBits, bool fp4);

/// RoundUp: the smallest power of two s with max * 2^s >= amax (max 6 or
/// 448), exactly; 0 for amax below 2^-127.
mlir::Value emitRoundUpScale(mlir::ImplicitLocOpBuilder &b, mlir::Value amaxBits, bool fp4);

/// Two f32 values (elements 2j and 2j+1) to one fp4x2 byte, divided by
/// 2^(e-127) with round-to-nearest-even and saturation at 6: the scaled
/// conversion on gfx950, the software encoding (templates/sm90) on sm_90a.
mlir::Value emitFp4Byte(mlir::ImplicitLocOpBuilder &b, const TargetInfo &target, mlir::Value lo,
                        mlir::Value hi, mlir::Value e);

/// One f32 value to an e4m3fn byte, divided by 2^(e-127), clamped to 448.
mlir::Value emitFp8Byte(mlir::ImplicitLocOpBuilder &b, const TargetInfo &target, mlir::Value v,
                        mlir::Value e);

/// f32 `v` rounded to fp4 (e2m1) or fp8 (e4m3fn) with the e8m0 scale byte
/// `e`, as the f32 value the code decodes to: what emitFp4Byte/emitFp8Byte
/// write, decoded (the carried form of MX activations, carriesDecodedMx in
/// templates/TargetSupport.h). Integer and f32 arithmetic on every target.
mlir::Value emitMxDecodedValue(mlir::ImplicitLocOpBuilder &b, mlir::Value v, mlir::Value e,
                               bool fp4);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_EPILOGUE_MXQUANTIZE_H
