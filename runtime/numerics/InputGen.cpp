//===- InputGen.cpp - Deterministic inputs of a MoE layer -----------------===//

#include "runtime/numerics/InputGen.h"

#include "runtime/numerics/Formats.h"

#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"

#include <algorithm>
#include <cmath>
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

const Ziggurat &ziggurat() {
  static const Ziggurat z;
  return z;
}

/// The tail beyond kR (Marsaglia's exponential rejection).
double zigguratTail(Rng &rng) {
  for (;;) {
    double a = -std::log(1.0 - rng.uniform()) / Ziggurat::kR;
    double b = -std::log(1.0 - rng.uniform());
    if (b + b >= a * a)
      return Ziggurat::kR + a;
  }
}

/// One ziggurat draw from 64 random bits: layer, signed magnitude and value.
struct ZigguratDraw {
  int layer;
  int32_t u; // signed: the value's sign
  uint32_t mag;
  double v;
  ZigguratDraw(uint64_t bits, const Ziggurat &z)
      : layer(static_cast<int>(bits & (Ziggurat::kLayers - 1))),
        u(static_cast<int32_t>(bits >> 32)),
        mag(u < 0 ? 0u - static_cast<uint32_t>(u) : static_cast<uint32_t>(u)),
        v(static_cast<double>(u) * z.w[layer]) {}
};

/// What follows a draw outside the rectangle under the next layer (about
/// one draw in 80): the base layer's tail, or the wedge test under the
/// density and, when rejected, fresh draws.
[[gnu::noinline]] float zigguratRest(Rng &rng, const Ziggurat &z, int layer, int32_t u, double v) {
  for (;;) {
    if (layer == 0)
      return static_cast<float>(u < 0 ? -zigguratTail(rng) : zigguratTail(rng));
    const double y = z.f[layer] + rng.uniform() * (z.f[layer + 1] - z.f[layer]);
    if (y < std::exp(-0.5 * v * v))
      return static_cast<float>(v);
    const ZigguratDraw d(rng.next(), z);
    if (d.mag < z.k[d.layer])
      return static_cast<float>(d.v);
    layer = d.layer;
    u = d.u;
    v = d.v;
  }
}

/// Rng::fastNormal with the common case (accept inside the rectangle under
/// the next layer) inline.
inline float zigguratNormal(Rng &rng, const Ziggurat &z) {
  const ZigguratDraw d(rng.next(), z);
  if (d.mag < z.k[d.layer])
    return static_cast<float>(d.v);
  return zigguratRest(rng, z, d.layer, d.u, d.v);
}

/// out[i] = fastNormal() * scale rounded to f32, the weight generator's
/// inner loop. The generator's state is a local copy that only the rare slow
/// path hands out by reference, so that it stays in registers.
void drawNormals(Rng &rng, float *out, int64_t n, double scale) {
  const Ziggurat &z = ziggurat();
  Rng local = rng;
  for (int64_t i = 0; i < n; ++i) {
    const ZigguratDraw d(local.next(), z);
    float x;
    if (d.mag < z.k[d.layer]) {
      x = static_cast<float>(d.v);
    } else {
      Rng slow = local;
      x = zigguratRest(slow, z, d.layer, d.u, d.v);
      local = slow;
    }
    out[i] = static_cast<float>(x * scale);
  }
  rng = local;
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

/// One [E, rows, cols] weight to generate: each expert draws from its own
/// stream, so its values do not depend on which other experts are made.
struct WeightJob {
  HostTensor *w;
  DType type;
  uint64_t stream;
  int64_t rows, cols;
  double scale;
  int64_t dataPer = 0, scalePer = 0; // bytes of one expert
};

/// The weight's experts in `work` as (expert, position in w), with w's
/// buffers sized (w.shape[0] experts).
void planWeight(WeightJob &job, int64_t experts, const std::vector<bool> &used, bool compact,
                std::vector<std::pair<int64_t, int64_t>> &work) {
  HostTensor &w = *job.w;
  w.format = elemFormatOf(job.type);
  for (int64_t e = 0; e < experts; ++e)
    if (used.empty() || used[e])
      work.push_back({e, compact ? static_cast<int64_t>(work.size()) : e});
  w.shape = {compact ? static_cast<int64_t>(work.size()) : experts, job.rows, job.cols};
  job.dataPer = packedBytes(w.format, job.rows * job.cols);
  job.scalePer = isMx(w.format) ? job.rows * (job.cols / kMxBlock) : 0;
  // Zeros stay only where an expert is not generated (not routed, not
  // compact); the rest is overwritten row by row.
  w.data.assign(w.shape[0] * job.dataPer, 0);
  w.scales.assign(w.shape[0] * job.scalePer, 0);
}

/// Generates and encodes one expert of a weight into its place, row by row:
/// the values are drawn in row-major order, and MX blocks never span rows,
/// so the bytes are those of encoding the whole [rows, cols] matrix at once.
llvm::Error generateExpert(const WeightJob &job, uint64_t seed, ScaleRounding mode, int64_t expert,
                           int64_t pos) {
  HostTensor &w = *job.w;
  const int64_t rows = job.rows, cols = job.cols;
  const int64_t rowBytes = job.dataPer / rows, rowScales = job.scalePer / rows;
  uint8_t *data = w.data.data() + pos * job.dataPer;
  uint8_t *scales = w.scales.data() + pos * job.scalePer;
  const bool mxRows = isMx(w.format) && cols % kMxBlock == 0;
  Rng rng(seed * 0x100000001B3ull + (job.stream << 32) + expert);
  std::vector<float> row(cols);
  for (int64_t r = 0; r < rows; ++r) {
    drawNormals(rng, row.data(), cols, job.scale);
    if (mxRows) {
      quantizeMxInto(row, w.format, mode, data + r * rowBytes, scales + r * rowScales);
      continue;
    }
    auto q = encodeAs(job.type, row, {1, cols}, mode);
    if (!q)
      return q.takeError();
    if (static_cast<int64_t>(q->data.size()) != rowBytes ||
        static_cast<int64_t>(q->scales.size()) != rowScales)
      return llvm::createStringError("input generation: unexpected encoded size");
    std::copy(q->data.begin(), q->data.end(), data + r * rowBytes);
    std::copy(q->scales.begin(), q->scales.end(), scales + r * rowScales);
  }
  return llvm::Error::success();
}

/// Generates the weights of `jobs`, every (weight, expert) pair a task on
/// `threads` host threads (0: all cores). Each task writes only its own
/// expert's bytes, so the result does not depend on the thread count.
llvm::Error generateWeights(llvm::MutableArrayRef<WeightJob> jobs, int64_t experts,
                            const std::vector<bool> &used, bool compact, uint64_t seed,
                            ScaleRounding mode, unsigned threads) {
  std::vector<std::vector<std::pair<int64_t, int64_t>>> work(jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j)
    planWeight(jobs[j], experts, used, compact, work[j]);
  std::mutex errorLock;
  llvm::Error firstError = llvm::Error::success();
  llvm::DefaultThreadPool pool(threads ? llvm::hardware_concurrency(threads)
                                       : llvm::hardware_concurrency());
  for (size_t j = 0; j < jobs.size(); ++j)
    for (auto [e, pos] : work[j])
      pool.async([&, j, e = e, pos = pos] {
        llvm::Error err = generateExpert(jobs[j], seed, mode, e, pos);
        if (!err)
          return;
        std::lock_guard<std::mutex> guard(errorLock);
        if (firstError)
          llvm::consumeError(std::move(err));
        else
          firstError = std::move(err);
      });
  pool.wait();
  return firstError;
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

float Rng::fastNormal() { return zigguratNormal(*this, ziggurat()); }

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
  WeightJob jobs[] = {{&in.w1, spec.formats.weight, 3, 2 * I, K, opts.w1Scale},
                      {&in.w2, spec.formats.weight, 4, K, I, opts.w2Scale}};
  if (llvm::Error e =
          generateWeights(jobs, E, used, compact, opts.seed, opts.weightRounding, opts.threads))
    return std::move(e);
  return in;
}

} // namespace moegen::num
