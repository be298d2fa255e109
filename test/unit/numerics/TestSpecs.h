//===- TestSpecs.h - Small MoeSpecs for numerics tests ----------*- C++ -*-===//
#ifndef MOEGEN_TEST_UNIT_NUMERICS_TESTSPECS_H
#define MOEGEN_TEST_UNIT_NUMERICS_TESTSPECS_H

#include "compiler/spec/Expr.h"
#include "compiler/spec/Spec.h"

#include "llvm/Support/Error.h"

#include <gtest/gtest.h>

#include <cassert>

namespace moegen::test {

inline ActivationExpr situv2(double beta = 4.0, double linearBeta = 25.0) {
  auto act = makeBuiltinActivation("situv2", {{"beta", beta}, {"linear_beta", linearBeta}});
  assert(act && "situv2 is a built-in");
  return *act;
}

inline MoeSpec smallSpec(DType a, DType w, FusedQuant fq, ActivationExpr act = situv2()) {
  MoeSpec s;
  s.name = "test";
  s.problem.modelDim = 64;
  s.problem.interDim = 64;
  s.problem.experts = 4;
  s.problem.topk = 2;
  s.formats.activation = a;
  s.formats.weight = w;
  s.formats.output = DType::BF16;
  s.activation = std::move(act);
  s.stage1.tileM = 32;
  s.stage1.fusedQuant = fq;
  s.stage2.tileM = 32;
  return s;
}

/// The value, or a test failure naming the error and T{}.
template <typename T> T unwrap(llvm::Expected<T> v) {
  if (!v) {
    ADD_FAILURE() << llvm::toString(v.takeError());
    return T{};
  }
  return std::move(*v);
}

} // namespace moegen::test

#endif // MOEGEN_TEST_UNIT_NUMERICS_TESTSPECS_H
