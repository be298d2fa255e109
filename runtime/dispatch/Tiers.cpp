//===- Tiers.cpp - aiter's token tiers ------------------------------------===//

#include "runtime/dispatch/Tiers.h"

#include <algorithm>
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

std::optional<int64_t> tierFloor(int64_t key) {
  if (key < 1 || paddedM(key) != key)
    return std::nullopt;
  if (key == kLargeTiers[1])
    return key;
  return key / 2 + 1; // 1 -> 1, 2 -> 2; 32768 -> 16385, which pads to 32768
}

std::vector<int64_t> tierTokens(int64_t key, size_t count) {
  std::optional<int64_t> floor = tierFloor(key);
  const int64_t span = floor ? key - *floor : 0;
  // No more points than token counts in the tier.
  count = std::min(count, size_t(span) + 1);
  if (count <= 1)
    return {key};
  std::vector<int64_t> points;
  for (size_t i = 0; i < count; ++i) {
    // Rounded to the nearest count; the span is at most 16383.
    int64_t t = *floor + (span * int64_t(i) * 2 + int64_t(count) - 1) / (2 * (int64_t(count) - 1));
    if (points.empty() || points.back() != t)
      points.push_back(t);
  }
  return points;
}

} // namespace moegen::dispatch
