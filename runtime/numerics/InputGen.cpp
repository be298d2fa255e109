//===- InputGen.cpp - Deterministic inputs of a MoE layer -----------------===//

#include "runtime/numerics/InputGen.h"

#include "runtime/numerics/Formats.h"

#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
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

/// Layers of the ziggurat under the N(0,1) density exp(-x^2/2) (Marsaglia
/// and Tsang's construction with 128 equal-area layers): layer i spans
/// [0, x[i]], x[0] is the base strip's equivalent width, x[128] = 0.
struct Ziggurat {
  static constexpr int kLayers = 128;
  static constexpr double kR = 3.442619855899;         // right edge of the base layer
  static constexpr double kArea = 9.91256303526217e-3; // area of each layer
  double x[kLayers + 1], f[kLayers + 1];
  uint32_t k[kLayers]; // accept |u| < k[i] without touching the density
  double w[kLayers];   // value of u = 1 in layer i
  Ziggurat() {
    auto density = [](double v) { return std::exp(-0.5 * v * v); };
    x[0] = kArea / density(kR);
    x[1] = kR;
    for (int i = 2; i < kLayers; ++i)
      x[i] = std::sqrt(-2.0 * std::log(kArea / x[i - 1] + density(x[i - 1])));
    x[kLayers] = 0;
    for (int i = 0; i <= kLayers; ++i)
      f[i] = density(x[i]);
    for (int i = 0; i < kLayers; ++i) {
      w[i] = x[i] * 0x1p-31;
      k[i] = static_cast<uint32_t>(x[i + 1] / x[i] * 0x1p31);
    }
  }
};

/// The tail beyond kR (Marsaglia's exponential rejection).
double zigguratTail(Rng &rng) {
  for (;;) {
    double a = -std::log(1.0 - rng.uniform()) / Ziggurat::kR;
    double b = -std::log(1.0 - rng.uniform());
    if (b + b >= a * a)
      return Ziggurat::kR + a;
  }
}

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

/// A [E, rows, cols] weight, one expert (and one random stream) each, the
/// experts spread over the host's cores; with `compact`, only the used
/// experts, as [used count, rows, cols].
llvm::Expected<HostTensor> expertWeights(DType t, uint64_t seed, uint64_t stream, int64_t experts,
                                         int64_t rows, int64_t cols, double scale,
                                         ScaleRounding mode, const std::vector<bool> &used,
                                         bool compact) {
  HostTensor w;
  w.format = elemFormatOf(t);
  std::vector<std::pair<int64_t, int64_t>> work; // (expert, position in w)
  for (int64_t e = 0; e < experts; ++e)
    if (used.empty() || used[e])
      work.push_back({e, compact ? static_cast<int64_t>(work.size()) : e});
  w.shape = {compact ? static_cast<int64_t>(work.size()) : experts, rows, cols};
  const int64_t dataPer = packedBytes(w.format, rows * cols);
  const int64_t scalePer = isMx(w.format) ? rows * (cols / kMxBlock) : 0;
  w.data.assign(w.shape[0] * dataPer, 0);
  w.scales.assign(w.shape[0] * scalePer, 0);
  std::mutex errorLock;
  std::string error;
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency());
  for (auto [e, pos] : work)
    pool.async([&, e = e, pos = pos] {
      Rng rng(seed * 0x100000001B3ull + (stream << 32) + e);
      // Uninitialized: every value is written next.
      std::unique_ptr<float[]> v(new float[rows * cols]);
      for (int64_t i = 0; i < rows * cols; ++i)
        v[i] = static_cast<float>(rng.fastNormal() * scale);
      auto q = encodeAs(t, llvm::ArrayRef<float>(v.get(), rows * cols), {rows, cols}, mode);
      if (!q || static_cast<int64_t>(q->data.size()) != dataPer ||
          static_cast<int64_t>(q->scales.size()) != scalePer) {
        std::lock_guard<std::mutex> guard(errorLock);
        if (error.empty())
          error = q ? "input generation: unexpected encoded size" : llvm::toString(q.takeError());
        else if (!q)
          llvm::consumeError(q.takeError());
        return;
      }
      std::copy(q->data.begin(), q->data.end(), w.data.begin() + pos * dataPer);
      std::copy(q->scales.begin(), q->scales.end(), w.scales.begin() + pos * scalePer);
    });
  pool.wait();
  if (!error.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
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

float Rng::fastNormal() {
  static const Ziggurat z;
  for (;;) {
    const uint64_t bits = next();
    const int i = static_cast<int>(bits & (Ziggurat::kLayers - 1));
    const int32_t u = static_cast<int32_t>(bits >> 32); // signed: the value's sign
    const uint32_t mag = u < 0 ? 0u - static_cast<uint32_t>(u) : static_cast<uint32_t>(u);
    const double v = static_cast<double>(u) * z.w[i];
    if (mag < z.k[i]) // inside the rectangle under the next layer: accept
      return static_cast<float>(v);
    if (i == 0) // the base layer's tail
      return static_cast<float>(u < 0 ? -zigguratTail(*this) : zigguratTail(*this));
    // The wedge between the rectangles: accept under the density.
    const double y = z.f[i] + uniform() * (z.f[i + 1] - z.f[i]);
    if (y < std::exp(-0.5 * v * v))
      return static_cast<float>(v);
  }
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
  const bool compact = opts.onlyRoutedExperts && opts.compactExperts;
  if (compact)
    for (int64_t e = 0; e < E; ++e)
      if (used[e])
        in.experts.push_back(static_cast<int32_t>(e));
  auto w1 = expertWeights(spec.formats.weight, opts.seed, 3, E, 2 * I, K, opts.w1Scale,
                          opts.weightRounding, used, compact);
  if (!w1)
    return w1.takeError();
  in.w1 = std::move(*w1);
  auto w2 = expertWeights(spec.formats.weight, opts.seed, 4, E, K, I, opts.w2Scale,
                          opts.weightRounding, used, compact);
  if (!w2)
    return w2.takeError();
  in.w2 = std::move(*w2);
  return in;
}

} // namespace moegen::num
