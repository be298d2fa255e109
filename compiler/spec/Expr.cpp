//===- Expr.cpp - Activation expressions: construction and evaluation ----===//

#include "compiler/spec/Expr.h"

#include "compiler/spec/SpecLimits.h"

#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace moegen {

std::optional<double> ActivationExpr::param(llvm::StringRef paramName) const {
  for (const ActivationParam &p : params)
    if (p.name == paramName)
      return p.value;
  return std::nullopt;
}

static ExprRef makeNode(ExprNode node) { return std::make_shared<const ExprNode>(std::move(node)); }

static ExprNode nodeOf(ExprKind kind) {
  ExprNode n;
  n.kind = kind;
  return n;
}

ExprRef makeConst(double v) {
  ExprNode n = nodeOf(ExprKind::Const);
  n.value = v;
  return makeNode(std::move(n));
}
ExprRef makeGate() { return makeNode(nodeOf(ExprKind::Gate)); }
ExprRef makeUp() { return makeNode(nodeOf(ExprKind::Up)); }
ExprRef makeParam(unsigned index) {
  ExprNode n = nodeOf(ExprKind::Param);
  n.paramIndex = index;
  return makeNode(std::move(n));
}
ExprRef makeNeg(ExprRef a) {
  ExprNode n = nodeOf(ExprKind::Neg);
  n.operands = {std::move(a)};
  return makeNode(std::move(n));
}
ExprRef makeBinary(ExprKind kind, ExprRef a, ExprRef b) {
  ExprNode n = nodeOf(kind);
  n.operands = {std::move(a), std::move(b)};
  return makeNode(std::move(n));
}
ExprRef makeCall(ExprFunc func, std::vector<ExprRef> args) {
  ExprNode n = nodeOf(ExprKind::Call);
  n.func = func;
  n.operands = std::move(args);
  return makeNode(std::move(n));
}

llvm::StringRef funcName(ExprFunc func) {
  switch (func) {
  case ExprFunc::Tanh:
    return "tanh";
  case ExprFunc::Sigmoid:
    return "sigmoid";
  case ExprFunc::Exp:
    return "exp";
  case ExprFunc::Log:
    return "log";
  case ExprFunc::Erf:
    return "erf";
  case ExprFunc::Sqrt:
    return "sqrt";
  case ExprFunc::Abs:
    return "abs";
  case ExprFunc::Min:
    return "min";
  case ExprFunc::Max:
    return "max";
  }
  return "?";
}

std::optional<ExprFunc> funcByName(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ExprFunc>>(name)
      .Case("tanh", ExprFunc::Tanh)
      .Case("sigmoid", ExprFunc::Sigmoid)
      .Case("exp", ExprFunc::Exp)
      .Case("log", ExprFunc::Log)
      .Case("erf", ExprFunc::Erf)
      .Case("sqrt", ExprFunc::Sqrt)
      .Case("abs", ExprFunc::Abs)
      .Case("min", ExprFunc::Min)
      .Case("max", ExprFunc::Max)
      .Default(std::nullopt);
}

unsigned funcArity(ExprFunc func) {
  return (func == ExprFunc::Min || func == ExprFunc::Max) ? 2 : 1;
}

unsigned exprDepth(const ExprNode &node, unsigned cap) {
  if (cap == 0)
    return 1;
  unsigned deepest = 0;
  for (const ExprRef &op : node.operands)
    deepest = std::max(deepest, exprDepth(*op, cap - 1));
  return deepest + 1;
}

namespace {
// The evaluator; T is the precision of every intermediate.
template <typename T> struct Evaluator {
  const ActivationExpr &act;
  T g, u;

  T eval(const ExprNode &n) const {
    switch (n.kind) {
    case ExprKind::Const:
      return static_cast<T>(n.value);
    case ExprKind::Gate:
      return g;
    case ExprKind::Up:
      return u;
    case ExprKind::Param:
      return static_cast<T>(act.params[n.paramIndex].value);
    case ExprKind::Neg:
      return -eval(*n.operands[0]);
    case ExprKind::Add:
      return eval(*n.operands[0]) + eval(*n.operands[1]);
    case ExprKind::Sub:
      return eval(*n.operands[0]) - eval(*n.operands[1]);
    case ExprKind::Mul:
      return eval(*n.operands[0]) * eval(*n.operands[1]);
    case ExprKind::Div:
      return eval(*n.operands[0]) / eval(*n.operands[1]);
    case ExprKind::Call:
      return call(n);
    }
    return T(0);
  }

  T call(const ExprNode &n) const {
    T a = eval(*n.operands[0]);
    switch (n.func) {
    case ExprFunc::Tanh:
      return std::tanh(a);
    case ExprFunc::Sigmoid:
      return T(1) / (T(1) + std::exp(-a));
    case ExprFunc::Exp:
      return std::exp(a);
    case ExprFunc::Log:
      return std::log(a);
    case ExprFunc::Erf:
      return std::erf(a);
    case ExprFunc::Sqrt:
      return std::sqrt(a);
    case ExprFunc::Abs:
      return std::fabs(a);
    // min/max propagate NaN (a kernel must not hide a NaN behind a clamp).
    case ExprFunc::Min: {
      T b = eval(*n.operands[1]);
      return (std::isnan(a) || std::isnan(b)) ? a + b : std::min(a, b);
    }
    case ExprFunc::Max: {
      T b = eval(*n.operands[1]);
      return (std::isnan(a) || std::isnan(b)) ? a + b : std::max(a, b);
    }
    }
    return T(0);
  }
};
} // namespace

float evalActivationF32(const ActivationExpr &act, float g, float u) {
  // Evaluated in f64 and rounded once: within 1 ulp of the exact function.
  return static_cast<float>(Evaluator<double>{act, g, u}.eval(*act.body));
}

double evalActivationF64(const ActivationExpr &act, double g, double u) {
  return Evaluator<double>{act, g, u}.eval(*act.body);
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

static int precedence(ExprKind k) {
  switch (k) {
  case ExprKind::Add:
  case ExprKind::Sub:
    return 1;
  case ExprKind::Mul:
  case ExprKind::Div:
    return 2;
  case ExprKind::Neg:
    return 3;
  default:
    return 4; // atoms and calls
  }
}

/// Shortest decimal text that parses back to exactly `v`; plain notation
/// ("10.0", "0.044715") for ordinary magnitudes, exponent notation otherwise.
/// The printed spec is a cache key, so no digit may be lost.
static std::string formatNumber(double v) {
  char buf[64];
  double mag = std::fabs(v);
  bool plain = v == 0 || (mag >= 1e-4 && mag < 1e15);
  // 17 significant digits always round-trip; below 1 a plain number needs up
  // to 4 more decimals for its leading zeros.
  int maxDigits = plain ? 21 : 17;
  for (int digits = 1; digits <= maxDigits; ++digits) {
    snprintf(buf, sizeof(buf), plain ? "%.*f" : "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v)
      return buf;
  }
  snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

static void print(const ActivationExpr &act, const ExprNode &n, std::string &out) {
  auto child = [&](const ExprNode &c, bool parens) {
    if (parens)
      out += '(';
    print(act, c, out);
    if (parens)
      out += ')';
  };
  switch (n.kind) {
  case ExprKind::Const:
    out += formatNumber(n.value);
    return;
  case ExprKind::Gate:
    out += 'g';
    return;
  case ExprKind::Up:
    out += 'u';
    return;
  case ExprKind::Param:
    out += act.params[n.paramIndex].name;
    return;
  case ExprKind::Neg:
    out += '-';
    child(*n.operands[0], precedence(n.operands[0]->kind) < precedence(ExprKind::Neg));
    return;
  case ExprKind::Call:
    out += funcName(n.func).str();
    out += '(';
    for (size_t i = 0; i < n.operands.size(); ++i) {
      if (i)
        out += ", ";
      print(act, *n.operands[i], out);
    }
    out += ')';
    return;
  default:
    break;
  }
  // Binary operators are left-associative: the right operand needs parentheses
  // at equal precedence ("a - (b - c)"), the left one only at lower precedence.
  int p = precedence(n.kind);
  const char *op = n.kind == ExprKind::Add   ? " + "
                   : n.kind == ExprKind::Sub ? " - "
                   : n.kind == ExprKind::Mul ? " * "
                                             : " / ";
  child(*n.operands[0], precedence(n.operands[0]->kind) < p);
  out += op;
  child(*n.operands[1], precedence(n.operands[1]->kind) <= p);
}

std::string printExpr(const ActivationExpr &act, const ExprRef &node) {
  std::string out;
  print(act, *node, out);
  return out;
}

} // namespace moegen
