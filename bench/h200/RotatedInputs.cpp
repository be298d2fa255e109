//===- RotatedInputs.cpp - The per-call inputs of a timed graph -----------===//

#include "bench/h200/RotatedInputs.h"

#include "runtime/numerics/Formats.h"
#include "runtime/numerics/InputGen.h"
#include "runtime/numerics/MxQuant.h"

#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"

#include <algorithm>

namespace moegen::bench {

int64_t RotatedInputs::expertsHit() const {
  std::vector<int32_t> ids = topkIds;
  std::sort(ids.begin(), ids.end());
  return std::unique(ids.begin(), ids.end()) - ids.begin();
}

RotatedInputs makeRotatedInputs(const Problem &p, int64_t tokens, int64_t set) {
  const int64_t K = p.modelDim, E = p.experts, topk = p.topk;
  RotatedInputs in;
  in.tokens = tokens;
  in.hidden.resize(tokens * K);
  in.topkIds.resize(tokens * topk);
  in.topkWeights.resize(tokens * topk);
  const uint64_t seed = 1234 + uint64_t(set);
  auto token = [&](int64_t t) {
    num::Rng rng(seed * 0x9E3779B97F4A7C15ull + uint64_t(t));
    for (int64_t k = 0; k < K; ++k)
      in.hidden[t * K + k] = num::encodeBf16(rng.fastNormal() * 0.1f);
    std::vector<float> scores(E);
    for (float &s : scores)
      s = rng.fastNormal();
    num::routeTopk(scores, topk, &in.topkIds[t * topk], &in.topkWeights[t * topk]);
  };
  // Chunks of tokens over the host's cores.
  const int64_t chunk = 64;
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency());
  for (int64_t t0 = 0; t0 < tokens; t0 += chunk)
    pool.async([&, t0] {
      for (int64_t t = t0; t < std::min(tokens, t0 + chunk); ++t)
        token(t);
    });
  pool.wait();
  return in;
}

llvm::Expected<num::HostTensor> stage1Input(const MoeSpec &spec, const RotatedInputs &in,
                                            llvm::ArrayRef<int64_t> tokens) {
  const int64_t K = spec.problem.modelDim;
  std::vector<float> rows;
  rows.reserve(tokens.size() * K);
  for (int64_t t : tokens) {
    if (t < 0 || t >= in.tokens)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "stage1Input: token %lld of %lld", (long long)t,
                                     (long long)in.tokens);
    for (int64_t k = 0; k < K; ++k)
      rows.push_back(num::decodeBf16(in.hidden[t * K + k]));
  }
  return num::convertTo(rows, {static_cast<int64_t>(tokens.size()), K},
                        num::elemFormatOf(spec.formats.activation), num::ScaleRounding::RoundUp);
}

} // namespace moegen::bench
