//===- LayerSampler.h - Random layers near the schedule rules' edges -*- C++ -*-===//
//
// Draws MoE layers as DSL text over every parameter of the problem, the
// formats, the activation and both stages' schedules (small shapes), for the
// property behind moe-verify-schedule: every layer the rules accept compiles
// and computes the reference's answer. Each parameter usually takes a value
// that fits what was drawn before it (a divisor, an aligned size) and
// sometimes any value of its range, so most draws are accepted and the rules'
// edges are crossed from both sides; the rules alone judge (checkLayer).
//
// A seed gives the same draws wherever the same C++ standard library draws
// them (its distributions are its own). Each target's schedules also draw
// the parameters only it has (sm_90a: weight_decode; gfx950: xcd_swizzle),
// and the launch's CU counts are the chip's or a few, so that persistent
// grids loop. Used by the emulator's property test (test/unit/kernels) and
// by `moegen draw`, which writes draws for a GPU to check. MLIR-free.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_CHECK_LAYERSAMPLER_H
#define MOEGEN_RUNTIME_CHECK_LAYERSAMPLER_H

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace moegen {

struct SampledLayer {
  std::string text;   // a whole `moe property { ... }` spec
  int64_t tokens = 0; // the token count to check it at
  /// The launch's CU (SM) count: 1 or 2 make the persistent GEMM grids loop
  /// over several M tiles.
  int64_t cuNum = 256;
};

class LayerSampler {
public:
  /// `nvptx`: draws for sm_90a (weight_decode, the H200's 132 SMs), else for
  /// gfx950 (xcd_swizzle, 256 CUs).
  LayerSampler(uint64_t seed, bool nvptx) : rng(seed), nvptx(nvptx) {}

  SampledLayer next();

private:
  template <typename T> const T &pick(const std::vector<T> &v) {
    return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
  }
  int64_t range(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }
  bool coin(double p = 0.5) { return std::bernoulli_distribution(p)(rng); }
  /// A value of `fits` usually, of `any` sometimes.
  int64_t likely(const std::vector<int64_t> &fits, const std::vector<int64_t> &any);
  /// One stage's schedule for N output columns and reduction length K.
  std::string stage(int64_t tileM, int64_t n, int64_t k, int64_t kAlign);

  std::mt19937_64 rng;
  bool nvptx;
};

} // namespace moegen

#endif // MOEGEN_RUNTIME_CHECK_LAYERSAMPLER_H
