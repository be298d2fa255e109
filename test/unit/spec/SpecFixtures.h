//===- SpecFixtures.h - A small .moe layer and a checked parse --*- C++ -*-===//
//
// The spec and target tests start from one small a4w4 layer (8 experts,
// top-2) and vary it field by field; they parse their texts through
// parseSpecOrFail, which fails the test with the parser's error.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEST_UNIT_SPEC_SPECFIXTURES_H
#define MOEGEN_TEST_UNIT_SPEC_SPECFIXTURES_H

#include "compiler/spec/DslParser.h"

#include <gtest/gtest.h>

namespace moegen::test {

inline constexpr const char *kSmallMoe = R"(moe small {
  model_dim = 256
  inter_dim = 128
  experts = 8
  topk = 2
  activation_dtype = mxfp4
  weight_dtype = mxfp4
  activation = situv2(beta = 4.0, linear_beta = 25.0)
  stage1 { tile = 32x32x256 }
  stage2 { tile = 32x128x128 }
}
)";

/// The spec `text` (read as file `file`) parses to; when it does not, a test
/// failure naming the parser's error and an empty spec.
inline MoeSpec parseSpecOrFail(llvm::StringRef text, llvm::StringRef file) {
  auto spec = parseMoeSpec(text, file);
  if (!spec) {
    ADD_FAILURE() << llvm::toString(spec.takeError());
    return MoeSpec();
  }
  return *spec;
}

/// kSmallMoe, parsed.
inline MoeSpec smallSpec() { return parseSpecOrFail(kSmallMoe, "small.moe"); }

} // namespace moegen::test

#endif // MOEGEN_TEST_UNIT_SPEC_SPECFIXTURES_H
