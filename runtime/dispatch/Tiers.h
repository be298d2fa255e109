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

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace moegen::dispatch {

constexpr int64_t kLargeTiers[] = {32768, 131072};

int64_t nextPow2(int64_t n); // 1 for n <= 1
int64_t paddedM(int64_t m);

/// The token keys a lookup tries, in order: paddedM(m) first, then (only
/// when it exceeds 32768) the smaller large tiers, descending.
std::vector<int64_t> tierFallbackOrder(int64_t m);

/// The least token count whose padded M is `key` (2 -> 2, 32 -> 17, 32768 ->
/// 16385, 131072 -> 131072); none where no token count pads to `key` (3: a
/// table's row there is never looked up).
std::optional<int64_t> tierFloor(int64_t key);

/// `count` token counts evenly spaced over the tier a row at `key` serves,
/// from tierFloor(key) to `key` itself (both ends where count >= 2; equal
/// ones once), ascending. Only {key} where `key` is no tier or count <= 1.
std::vector<int64_t> tierTokens(int64_t key, size_t count);

} // namespace moegen::dispatch

#endif // MOEGEN_RUNTIME_DISPATCH_TIERS_H
