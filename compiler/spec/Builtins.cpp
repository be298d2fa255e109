//===- Builtins.cpp - The built-in activations as expressions ------------===//
//
// Each built-in is an ordinary expression over g, u and its parameters, so
// the reference and the kernel epilogue handle built-ins and user-written
// activations the same way.
//
//===----------------------------------------------------------------------===//

#include "compiler/spec/Expr.h"

#include <cmath>

namespace moegen {
namespace {

struct BuiltinDef {
  const char *name;
  std::vector<BuiltinParamInfo> params;
};

const std::vector<BuiltinDef> &builtinDefs() {
  static const std::vector<BuiltinDef> defs = {
      {"silu", {}},
      {"gelu_tanh", {}},
      {"gelu_erf", {}},
      {"swiglu", {{"alpha", 1.702}, {"limit", 7.0}}},
      {"situv2", {{"beta", 4.0}, {"linear_beta", std::nullopt}}},
  };
  return defs;
}

const BuiltinDef *findBuiltin(llvm::StringRef name) {
  for (const BuiltinDef &d : builtinDefs())
    if (name == d.name)
      return &d;
  return nullptr;
}

ExprRef mul(ExprRef a, ExprRef b) { return makeBinary(ExprKind::Mul, a, b); }
ExprRef div(ExprRef a, ExprRef b) { return makeBinary(ExprKind::Div, a, b); }
ExprRef add(ExprRef a, ExprRef b) { return makeBinary(ExprKind::Add, a, b); }
ExprRef call(ExprFunc f, ExprRef a) { return makeCall(f, {std::move(a)}); }
ExprRef call(ExprFunc f, ExprRef a, ExprRef b) { return makeCall(f, {std::move(a), std::move(b)}); }

} // namespace

std::vector<std::string> builtinActivationNames() {
  std::vector<std::string> names;
  for (const BuiltinDef &d : builtinDefs())
    names.push_back(d.name);
  return names;
}

std::optional<std::vector<BuiltinParamInfo>> builtinParams(llvm::StringRef name) {
  if (const BuiltinDef *d = findBuiltin(name))
    return d->params;
  return std::nullopt;
}

std::optional<ActivationExpr> makeBuiltinActivation(llvm::StringRef name,
                                                    const std::vector<ActivationParam> &given) {
  const BuiltinDef *def = findBuiltin(name);
  if (!def)
    return std::nullopt;
  ActivationExpr act;
  act.name = def->name;
  act.builtin = true;
  // Parameters in declaration order; index i of `act.params` is referenced
  // by makeParam(i). A parameter that is neither given nor defaulted is absent.
  auto paramRef = [&](const char *pname) -> ExprRef {
    for (unsigned i = 0; i < act.params.size(); ++i)
      if (act.params[i].name == pname)
        return makeParam(i);
    return nullptr;
  };
  for (const BuiltinParamInfo &info : def->params) {
    std::optional<double> value = info.defaultValue;
    for (const ActivationParam &p : given)
      if (p.name == info.name)
        value = p.value;
    if (value)
      act.params.push_back({info.name, *value});
  }

  ExprRef g = makeGate(), u = makeUp();
  llvm::StringRef n = def->name;
  if (n == "silu") {
    act.body = mul(mul(g, call(ExprFunc::Sigmoid, g)), u);
  } else if (n == "gelu_tanh") {
    // 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))) * u
    ExprRef inner = add(g, mul(makeConst(0.044715), mul(g, mul(g, g))));
    ExprRef t = call(ExprFunc::Tanh, mul(makeConst(std::sqrt(2.0 / M_PI)), inner));
    act.body = mul(mul(mul(makeConst(0.5), g), add(makeConst(1.0), t)), u);
  } else if (n == "gelu_erf") {
    ExprRef e = call(ExprFunc::Erf, mul(g, makeConst(M_SQRT1_2)));
    act.body = mul(mul(mul(makeConst(0.5), g), add(makeConst(1.0), e)), u);
  } else if (n == "swiglu") {
    ExprRef limit = paramRef("limit");
    ExprRef gc = call(ExprFunc::Min, g, limit);
    ExprRef uc = call(ExprFunc::Min, call(ExprFunc::Max, u, makeNeg(limit)), limit);
    ExprRef glu = mul(gc, call(ExprFunc::Sigmoid, mul(paramRef("alpha"), gc)));
    act.body = mul(glu, add(uc, makeConst(1.0)));
  } else if (n == "situv2") {
    ExprRef beta = paramRef("beta");
    ExprRef gate = mul(mul(beta, call(ExprFunc::Tanh, div(g, beta))), call(ExprFunc::Sigmoid, g));
    ExprRef up = u;
    if (ExprRef lb = paramRef("linear_beta"))
      up = mul(lb, call(ExprFunc::Tanh, div(u, lb)));
    act.body = mul(gate, up);
  }
  return act;
}

} // namespace moegen
