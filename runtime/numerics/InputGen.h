//===- InputGen.h - Deterministic inputs of a MoE layer ---------*- C++ -*-===//
//
// Generates every input of a layer from a seed: the same seed, spec and
// token count give the same bytes. Distributions follow aiter's tuner:
// hidden ~ N(0,1)/10 rounded to bf16, w1 ~ N(0,1)/10, w2 ~ N(0,1) (ziggurat
// normals; every expert of both weights a task on the host's cores, drawn and
// encoded row by row into its place), router
// scores ~ N(0,1) per (token, expert), top-k by score (ties to the lower
// expert id) with softmax weights renormalized over the chosen k. Weights and
// MX activations are quantized with the RoundUp rule by default.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_NUMERICS_INPUTGEN_H
#define MOEGEN_RUNTIME_NUMERICS_INPUTGEN_H

#include "compiler/spec/Spec.h"
#include "runtime/numerics/MxQuant.h"
#include "runtime/numerics/Tensor.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace moegen::num {

/// xoshiro256** seeded through splitmix64; normals by Box-Muller, or by a
/// 128-layer ziggurat (fastNormal: one draw per value almost always, a few
/// nanoseconds; what the weights, a billion values at Kimi-K3 size, use).
class Rng {
public:
  explicit Rng(uint64_t seed);
  uint64_t next();
  double uniform(); // [0, 1), 53 bits
  double normal();
  float fastNormal();

private:
  uint64_t s[4];
  bool haveSpare = false;
  double spare = 0.0;
};

struct GenOptions {
  uint64_t seed = 0;
  double hiddenScale = 0.1, w1Scale = 0.1, w2Scale = 1.0;
  ScaleRounding weightRounding = ScaleRounding::RoundUp;
  ScaleRounding activationRounding = ScaleRounding::RoundUp;
  /// Generate only the weights of experts the routing uses; the others are
  /// zero (bytes and scales). Routed experts get the same values either way.
  bool onlyRoutedExperts = false;
  /// With onlyRoutedExperts: w1 and w2 hold the routed experts only, as
  /// [n, rows, cols] in ascending expert order (LayerInputs::experts), with
  /// the values they have in the full tensors.
  bool compactExperts = false;
  /// Host threads that generate the weights (0: all cores). The values do
  /// not depend on it.
  unsigned threads = 0;
};

struct LayerInputs {
  int64_t tokens = 0;
  std::vector<float> hidden; // [M, K] bf16-representable values
  HostTensor a1;             // hidden in formats.activation
  std::vector<int32_t> topkIds;
  std::vector<float> topkWeights;
  HostTensor w1, w2; // formats.weight, GGUU rows
  /// Set when w1/w2 are compact (GenOptions::compactExperts): the expert id
  /// of each of their experts, ascending. Empty: w1/w2 hold every expert.
  std::vector<int32_t> experts;
};

/// Each tensor (and each expert of a weight) draws from its own stream, so
/// changing one dimension does not reshuffle the others. Weights are
/// generated and quantized one expert at a time, with the same bytes for any
/// thread count.
llvm::Expected<LayerInputs> generateInputs(const MoeSpec &spec, int64_t tokens,
                                           const GenOptions &opts = {});

/// Top-k routing of one token's scores: ids by descending score, softmax
/// weights over the chosen k.
void routeTopk(llvm::ArrayRef<float> scores, int64_t topk, int32_t *ids, float *weights);

} // namespace moegen::num

#endif // MOEGEN_RUNTIME_NUMERICS_INPUTGEN_H
