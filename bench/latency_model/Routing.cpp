//===- Routing.cpp - Expected shape of the sorted rows --------------------===//

#include "bench/latency_model/Routing.h"

#include <cmath>

namespace moegen::latency {

Routing expectedRouting(int64_t tokens, int64_t topk, int64_t experts, int64_t blockM) {
  Routing r;
  double p = std::min(1.0, double(topk) / double(experts));
  r.activeExperts = experts * (1.0 - std::pow(1.0 - p, double(tokens)));
  // E[ceil(c / blockM)] for c ~ Binomial(tokens, p), the pmf in log space.
  double blocksPerExpert = 0;
  if (p >= 1.0) {
    blocksPerExpert = std::ceil(double(tokens) / blockM);
  } else {
    double logP = std::log(p), logQ = std::log1p(-p);
    for (int64_t c = 1; c <= tokens; ++c) {
      double logPmf = std::lgamma(tokens + 1.0) - std::lgamma(c + 1.0) -
                      std::lgamma(double(tokens - c) + 1.0) + c * logP + (tokens - c) * logQ;
      double pmf = std::exp(logPmf);
      blocksPerExpert += pmf * double((c + blockM - 1) / blockM);
    }
  }
  r.activeBlocks = experts * blocksPerExpert;
  return r;
}

} // namespace moegen::latency
