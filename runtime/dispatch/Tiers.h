//===- Tiers.h - aiter's token tiers ----------------------------*- C++ -*-===//
//
// Tuned tables are keyed by a padded token count, aiter's get_padded_M:
//   M <= 1               -> 1
//   2 <= M < 32768       -> next power of two >= M (3 -> 4, 16385 -> 32768)
//   32768 <= M < 131072  -> 32768
//   M >= 131072          -> 131072
// Only for a key above 32768 does a missing row fall back to the smaller
// large tiers (largest first): 131072 -> 32768. Smaller keys never fall back
// to another tier.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_DISPATCH_TIERS_H
#define MOEGEN_RUNTIME_DISPATCH_TIERS_H

#include <cstdint>
#include <vector>

namespace moegen::dispatch {

constexpr int64_t kLargeTiers[] = {32768, 131072};

int64_t nextPow2(int64_t n); // 1 for n <= 1
int64_t paddedM(int64_t m);

/// The token keys a lookup tries, in order: paddedM(m) first, then (only
/// when it exceeds 32768) the smaller large tiers, descending.
std::vector<int64_t> tierFallbackOrder(int64_t m);

} // namespace moegen::dispatch

#endif // MOEGEN_RUNTIME_DISPATCH_TIERS_H
