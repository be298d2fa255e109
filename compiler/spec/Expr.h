//===- Expr.h - Activation expressions over gate and up ---------*- C++ -*-===//
//
// The activation of a MoE layer is an expression over the gate value `g` and
// the up value `u` with named float parameters. The same tree is evaluated by
// the reference (here, in f32 or f64) and lowered into the kernel epilogue, so
// the two can never evaluate different functions.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_COMPILER_SPEC_EXPR_H
#define MOEGEN_COMPILER_SPEC_EXPR_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace moegen {

/// Functions an expression may call. Their arity is fixed (see funcArity).
enum class ExprFunc : uint8_t {
  Tanh,    // tanh(x)
  Sigmoid, // 1 / (1 + exp(-x))
  Exp,     // exp(x)
  Log,     // natural log
  Erf,     // erf(x)
  Sqrt,    // sqrt(x)
  Abs,     // |x|
  Min,     // min(a, b)
  Max,     // max(a, b)
};

enum class ExprKind : uint8_t {
  Const, // a float literal
  Gate,  // g
  Up,    // u
  Param, // a named parameter; value in ActivationExpr::params
  Neg,   // -a
  Add,
  Sub,
  Mul,
  Div,
  Call, // func(args...)
};

/// One node of an activation expression. Trees are immutable once built and
/// shared through shared_ptr, so copies of a spec are cheap.
struct ExprNode {
  ExprKind kind = ExprKind::Const;
  double value = 0.0;      // Const
  unsigned paramIndex = 0; // Param
  ExprFunc func = ExprFunc::Tanh;
  std::vector<std::shared_ptr<const ExprNode>> operands;
};
using ExprRef = std::shared_ptr<const ExprNode>;

struct ActivationParam {
  std::string name;
  double value = 0.0;
};

/// A complete activation: its name (a built-in such as "situv2" or the user's
/// own name), its parameters in declaration order, and the expression. For a
/// built-in the expression is its expansion, so evaluators never special-case
/// built-ins.
struct ActivationExpr {
  std::string name;
  bool builtin = false;
  std::vector<ActivationParam> params;
  ExprRef body;

  /// Parameter value by name, if the activation declares it.
  std::optional<double> param(llvm::StringRef paramName) const;
};

// Node constructors.
ExprRef makeConst(double v);
ExprRef makeGate();
ExprRef makeUp();
ExprRef makeParam(unsigned index);
ExprRef makeNeg(ExprRef a);
ExprRef makeBinary(ExprKind kind, ExprRef a, ExprRef b);
ExprRef makeCall(ExprFunc func, std::vector<ExprRef> args);

llvm::StringRef funcName(ExprFunc func);
std::optional<ExprFunc> funcByName(llvm::StringRef name);
unsigned funcArity(ExprFunc func);

/// Evaluates the expression. The f32 form takes f32 inputs and returns the
/// exact value rounded once to f32 (within 1 ulp of the formula): the target a
/// kernel's f32 epilogue approximates. The f64 form is the reference for error
/// budgets.
float evalActivationF32(const ActivationExpr &act, float g, float u);
double evalActivationF64(const ActivationExpr &act, double g, double u);

/// Prints the body in the DSL's infix syntax with parameters by name and the
/// fewest parentheses that keep the tree's shape.
std::string printExpr(const ActivationExpr &act, const ExprRef &node);

//===----------------------------------------------------------------------===//
// Built-in activations
//===----------------------------------------------------------------------===//

struct BuiltinParamInfo {
  const char *name;
  std::optional<double> defaultValue; // nullopt: optional with no default
};

/// The names of the built-in activations, for diagnostics.
std::vector<std::string> builtinActivationNames();

/// The declared parameters of a built-in, or nullopt if `name` is not one.
std::optional<std::vector<BuiltinParamInfo>> builtinParams(llvm::StringRef name);

/// Builds a built-in activation from the parameters the user gave (by name;
/// unknown names are the caller's error). Parameters not given take their
/// defaults; an optional parameter without a default changes the expansion
/// (situv2 without linear_beta has no tanh on u).
///   silu()                          silu(g) * u
///   gelu_tanh()                     0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))) * u
///   gelu_erf()                      0.5 g (1 + erf(g / sqrt 2)) * u
///   swiglu(alpha=1.702, limit=7.0)  g' sigmoid(alpha g') (u' + 1),
///                                   g' = min(g, limit), u' = min(max(u, -limit), limit)
///   situv2(beta=4.0, linear_beta?)  beta tanh(g/beta) sigmoid(g) * lb tanh(u/lb)
///                                   (u instead of lb tanh(u/lb) when linear_beta is unset)
std::optional<ActivationExpr> makeBuiltinActivation(llvm::StringRef name,
                                                    const std::vector<ActivationParam> &given);

} // namespace moegen

#endif // MOEGEN_COMPILER_SPEC_EXPR_H
