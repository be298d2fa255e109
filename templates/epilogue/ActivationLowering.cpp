//===- ActivationLowering.cpp - Activation expressions as f32 IR ---------===//

#include "templates/epilogue/ActivationLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"

#include <cmath>

using namespace mlir;

namespace moegen {
namespace {

/// A call of the LLVM intrinsic `name` on f32 operands. convert-gpu-to-nvvm
/// turns the LLVM dialect's math ops (fabs, copysign, sqrt, ...) into
/// libdevice calls, which moegen does not link; an intrinsic call passes
/// through to the NVPTX backend, which has instructions for these.
Value callIntrinsic(ImplicitLocOpBuilder &b, StringRef name, ValueRange operands) {
  return LLVM::CallIntrinsicOp::create(b, operands.front().getType(), b.getStringAttr(name),
                                       operands)
      .getResult(0);
}

struct Emitter {
  ImplicitLocOpBuilder &b;
  const ActivationExpr &act;
  const TargetInfo &target;
  Value gate, up;

  Value cst(double v) {
    return arith::ConstantFloatOp::create(b, b.getF32Type(), APFloat(float(v)));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, x, y); }
  // afn: a reciprocal-based division (v_rcp_f32) instead of the IEEE sequence;
  // the activation is compared with a tolerance anyway.
  Value div(Value x, Value y) { return arith::DivFOp::create(b, x, y, arith::FastMathFlags::afn); }
  // The target's own approximations, no device library: v_exp_f32 / v_log_f32 on gfx950,
  // ex2.approx.f32 / lg2.approx.f32 on sm_90a (2 ulp, subnormals kept).
  Value exp2(Value x) {
    if (target.isNvptx())
      return callIntrinsic(b, "llvm.nvvm.ex2.approx.f32", x);
    return ROCDL::ROCDLExp2::create(b, x.getType(), x);
  }
  Value log2(Value x) {
    if (target.isNvptx())
      return callIntrinsic(b, "llvm.nvvm.lg2.approx.f", x);
    return ROCDL::ROCDLLog::create(b, x.getType(), x);
  }
  // v_sqrt_f32 on gfx950, sqrt.rn.f32 on sm_90a.
  Value sqrt(Value x) {
    if (target.isNvptx())
      return callIntrinsic(b, "llvm.sqrt.f32", x);
    return ROCDL::ROCDLSqrt::create(b, x.getType(), x);
  }
  Value fabs(Value x) { return emitFAbs(b, target, x); }
  Value copysign(Value mag, Value sign) {
    if (target.isNvptx())
      return callIntrinsic(b, "llvm.copysign.f32", {mag, sign});
    return LLVM::CopySignOp::create(b, mag.getType(), mag, sign);
  }

  Value exp(Value x) { return exp2(mul(x, cst(M_LOG2E))); }
  Value sigmoid(Value x) { return div(cst(1.0), add(cst(1.0), exp2(mul(x, cst(-M_LOG2E))))); }
  Value tanh(Value x) {
    Value t = exp2(mul(fabs(x), cst(-2.0 * M_LOG2E)));
    return copysign(div(sub(cst(1.0), t), add(cst(1.0), t)), x);
  }
  Value erf(Value x) {
    Value ax = fabs(x);
    Value t = div(cst(1.0), add(cst(1.0), mul(cst(0.3275911), ax)));
    // Horner form of a1 t + a2 t^2 + ... + a5 t^5.
    Value p = cst(1.061405429);
    for (double c : {-1.453152027, 1.421413741, -0.284496736, 0.254829592})
      p = add(mul(p, t), cst(c));
    p = mul(p, t);
    Value e = exp(arith::NegFOp::create(b, mul(ax, ax)));
    return copysign(sub(cst(1.0), mul(p, e)), x);
  }

  Value emit(const ExprNode &n) {
    switch (n.kind) {
    case ExprKind::Const:
      return cst(n.value);
    case ExprKind::Gate:
      return gate;
    case ExprKind::Up:
      return up;
    case ExprKind::Param:
      return cst(act.params[n.paramIndex].value);
    case ExprKind::Neg:
      return arith::NegFOp::create(b, emit(*n.operands[0]));
    case ExprKind::Add:
      return add(emit(*n.operands[0]), emit(*n.operands[1]));
    case ExprKind::Sub:
      return sub(emit(*n.operands[0]), emit(*n.operands[1]));
    case ExprKind::Mul:
      return mul(emit(*n.operands[0]), emit(*n.operands[1]));
    case ExprKind::Div:
      return div(emit(*n.operands[0]), emit(*n.operands[1]));
    case ExprKind::Call:
      break;
    }
    Value a = emit(*n.operands[0]);
    switch (n.func) {
    case ExprFunc::Tanh:
      return tanh(a);
    case ExprFunc::Sigmoid:
      return sigmoid(a);
    case ExprFunc::Exp:
      return exp(a);
    case ExprFunc::Log:
      return mul(log2(a), cst(M_LN2));
    case ExprFunc::Erf:
      return erf(a);
    case ExprFunc::Sqrt:
      return sqrt(a);
    case ExprFunc::Abs:
      return fabs(a);
    // NaN-propagating, as the reference's min/max.
    case ExprFunc::Min:
      return arith::MinimumFOp::create(b, a, emit(*n.operands[1]));
    case ExprFunc::Max:
      return arith::MaximumFOp::create(b, a, emit(*n.operands[1]));
    }
    return a;
  }
};

} // namespace

Value emitFAbs(ImplicitLocOpBuilder &b, const TargetInfo &target, Value x) {
  if (target.isNvptx())
    return callIntrinsic(b, "llvm.fabs.f32", x);
  return LLVM::FAbsOp::create(b, x.getType(), x);
}

Value emitActivation(ImplicitLocOpBuilder &b, const ActivationExpr &act, const TargetInfo &target,
                     Value gate, Value up) {
  return Emitter{b, act, target, gate, up}.emit(*act.body);
}

} // namespace moegen
