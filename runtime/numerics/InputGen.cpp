//===- InputGen.cpp - Deterministic inputs of a MoE layer -----------------===//

#include "runtime/numerics/InputGen.h"

#include "runtime/numerics/Formats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace moegen::num {

namespace {

uint64_t splitmix64(uint64_t &x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

std::vector<float> normals(uint64_t seed, uint64_t stream, int64_t n, double scale) {
  Rng rng(seed * 0x100000001B3ull + stream);
  std::vector<float> v(n);
  for (auto &x : v)
    x = static_cast<float>(rng.normal() * scale);
  return v;
}

llvm::Expected<HostTensor> encodeAs(DType t, llvm::ArrayRef<float> values,
                                    std::vector<int64_t> shape, ScaleRounding mode) {
  return convertTo(values, std::move(shape), elemFormatOf(t), mode);
}

/// A [E, rows, cols] weight, one expert (and one random stream) at a time.
llvm::Expected<HostTensor> expertWeights(DType t, uint64_t seed, uint64_t stream, int64_t experts,
                                         int64_t rows, int64_t cols, double scale,
                                         ScaleRounding mode, const std::vector<bool> &used) {
  HostTensor w;
  w.format = elemFormatOf(t);
  w.shape = {experts, rows, cols};
  for (int64_t e = 0; e < experts; ++e) {
    if (!used.empty() && !used[e]) {
      w.data.resize(w.data.size() + packedBytes(w.format, rows * cols), 0);
      if (isMx(w.format))
        w.scales.resize(w.scales.size() + rows * (cols / kMxBlock), 0);
      continue;
    }
    std::vector<float> v = normals(seed, (stream << 32) + e, rows * cols, scale);
    auto q = encodeAs(t, v, {rows, cols}, mode);
    if (!q)
      return q.takeError();
    w.data.insert(w.data.end(), q->data.begin(), q->data.end());
    w.scales.insert(w.scales.end(), q->scales.begin(), q->scales.end());
  }
  return w;
}

} // namespace

Rng::Rng(uint64_t seed) {
  uint64_t x = seed;
  for (auto &w : s)
    w = splitmix64(x);
}

uint64_t Rng::next() {
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

double Rng::normal() {
  if (haveSpare) {
    haveSpare = false;
    return spare;
  }
  double u1 = 1.0 - uniform(); // (0, 1]
  double u2 = uniform();
  double r = std::sqrt(-2.0 * std::log(u1));
  spare = r * std::sin(2.0 * M_PI * u2);
  haveSpare = true;
  return r * std::cos(2.0 * M_PI * u2);
}

void routeTopk(llvm::ArrayRef<float> scores, int64_t topk, int32_t *ids, float *weights) {
  std::vector<int32_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return scores[a] != scores[b] ? scores[a] > scores[b] : a < b;
  });
  double mx = scores[order[0]], sum = 0;
  std::vector<double> ex(topk);
  for (int64_t k = 0; k < topk; ++k) {
    ex[k] = std::exp(static_cast<double>(scores[order[k]]) - mx);
    sum += ex[k];
  }
  for (int64_t k = 0; k < topk; ++k) {
    ids[k] = order[k];
    weights[k] = static_cast<float>(ex[k] / sum);
  }
}

llvm::Expected<LayerInputs> generateInputs(const MoeSpec &spec, int64_t tokens,
                                           const GenOptions &opts) {
  const Problem &p = spec.problem;
  if (tokens <= 0)
    return llvm::createStringError("input generation: token count %lld must be positive",
                                   static_cast<long long>(tokens));
  if (p.modelDim <= 0 || p.interDim <= 0 || p.experts <= 0 || p.topk <= 0 || p.topk > p.experts)
    return llvm::createStringError(
        "input generation: bad problem (model_dim %lld, inter_dim "
        "%lld, experts %lld, topk %lld)",
        static_cast<long long>(p.modelDim), static_cast<long long>(p.interDim),
        static_cast<long long>(p.experts), static_cast<long long>(p.topk));
  const int64_t M = tokens, K = p.modelDim, I = p.interDim, E = p.experts;
  LayerInputs in;
  in.tokens = M;
  in.hidden = normals(opts.seed, 1, M * K, opts.hiddenScale);
  for (float &v : in.hidden)
    v = roundToBf16(v);
  auto a1 = encodeAs(spec.formats.activation, in.hidden, {M, K}, opts.activationRounding);
  if (!a1)
    return a1.takeError();
  in.a1 = std::move(*a1);

  std::vector<float> scores = normals(opts.seed, 2, M * E, 1.0);
  in.topkIds.resize(M * p.topk);
  in.topkWeights.resize(M * p.topk);
  for (int64_t t = 0; t < M; ++t)
    routeTopk(llvm::ArrayRef<float>(scores).slice(t * E, E), p.topk, &in.topkIds[t * p.topk],
              &in.topkWeights[t * p.topk]);

  std::vector<bool> used;
  if (opts.onlyRoutedExperts) {
    used.assign(E, false);
    for (int32_t id : in.topkIds)
      if (id >= 0 && id < E)
        used[id] = true;
  }
  auto w1 = expertWeights(spec.formats.weight, opts.seed, 3, E, 2 * I, K, opts.w1Scale,
                          opts.weightRounding, used);
  if (!w1)
    return w1.takeError();
  in.w1 = std::move(*w1);
  auto w2 =
      expertWeights(spec.formats.weight, opts.seed, 4, E, K, I, opts.w2Scale, opts.weightRounding,
                    used);
  if (!w2)
    return w2.takeError();
  in.w2 = std::move(*w2);
  return in;
}

} // namespace moegen::num
