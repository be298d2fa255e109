//===- Tiers.cpp - aiter's token tiers ------------------------------------===//

#include "runtime/dispatch/Tiers.h"

#include <iterator>

namespace moegen::dispatch {

int64_t nextPow2(int64_t n) {
  int64_t p = 1;
  while (p < n)
    p <<= 1;
  return p;
}

int64_t paddedM(int64_t m) {
  if (m <= 1)
    return 1;
  if (m < kLargeTiers[0])
    return nextPow2(m);
  if (m < kLargeTiers[1])
    return kLargeTiers[0];
  return kLargeTiers[1];
}

std::vector<int64_t> tierFallbackOrder(int64_t m) {
  const int64_t key = paddedM(m);
  std::vector<int64_t> order = {key};
  if (key > kLargeTiers[0])
    for (int i = static_cast<int>(std::size(kLargeTiers)) - 1; i >= 0; --i)
      if (kLargeTiers[i] < key)
        order.push_back(kLargeTiers[i]);
  return order;
}

} // namespace moegen::dispatch
