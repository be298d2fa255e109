//===- ActivationLowering.h - Activation expressions as f32 IR --*- C++ -*-===//
//
// Emits the activation expression of a spec as f32 arith/LLVM ops, the same
// tree the reference evaluates. Transcendentals are built from exp2/log2 and
// reciprocals (what the hardware has: v_exp_f32, v_log_f32, v_rcp_f32 on
// gfx950; ex2.approx, lg2.approx, rcp.approx on sm_90a), so no device library
// is needed:
//   exp(x)     = exp2(x log2 e)                   (exp2, log2: v_exp_f32, v_log_f32)
//   sigmoid(x) = 1 / (1 + exp2(-x log2 e))
//   tanh(x)    = sign(x) (1 - t) / (1 + t),  t = exp2(-2 |x| log2 e)
//   log(x)     = log2(x) ln 2
//   erf(x)     = sign(x) (1 - p(t) exp(-x^2)), t = 1/(1 + 0.3275911 |x|)
//                (Abramowitz-Stegun 7.1.26, |error| <= 1.5e-7)
// Parameters are compile-time constants taken from the spec.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEMPLATES_EPILOGUE_ACTIVATIONLOWERING_H
#define MOEGEN_TEMPLATES_EPILOGUE_ACTIVATIONLOWERING_H

#include "compiler/spec/Expr.h"
#include "compiler/spec/TargetInfo.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace moegen {

/// |x| for an f32 value, in a form `target`'s lowering keeps (no libdevice
/// call on sm_90a).
mlir::Value emitFAbs(mlir::ImplicitLocOpBuilder &b, const TargetInfo &target, mlir::Value x);

/// act(gate, up) for f32 values, with `target`'s transcendental instructions.
mlir::Value emitActivation(mlir::ImplicitLocOpBuilder &b, const ActivationExpr &act,
                           const TargetInfo &target, mlir::Value gate, mlir::Value up);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_EPILOGUE_ACTIVATIONLOWERING_H
