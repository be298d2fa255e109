//===- Sorting.cpp - MoE token sorting in aiter's format ------------------===//

#include "runtime/numerics/Sorting.h"

namespace moegen::num {

int64_t maxNumTokensPadded(int64_t tokens, int64_t topk, int64_t experts, int64_t blockSize) {
  return tokens * topk + experts * blockSize - topk;
}

int64_t maxNumMBlocks(int64_t tokens, int64_t topk, int64_t experts, int64_t blockSize) {
  return (maxNumTokensPadded(tokens, topk, experts, blockSize) + blockSize - 1) / blockSize;
}

bool MoeSorting::isValidRow(int64_t pos) const {
  if (pos < 0 || pos >= numValidIds[0])
    return false;
  int32_t e = sortedTokenIds[pos];
  return tokenOf(e) < tokens && slotOf(e) < topk;
}

llvm::Expected<MoeSorting> sortMoe(llvm::ArrayRef<int32_t> topkIds,
                                   llvm::ArrayRef<float> topkWeights, int64_t tokens, int64_t topk,
                                   int64_t experts, int64_t blockSize, OutsideIds outside) {
  if (tokens < 0 || tokens >= (1 << 24))
    return llvm::createStringError("moe sorting: token count %lld outside [0, 2^24)",
                                   static_cast<long long>(tokens));
  if (topk <= 0 || topk > 255)
    return llvm::createStringError("moe sorting: topk %lld outside [1, 255]",
                                   static_cast<long long>(topk));
  if (experts <= 0 || blockSize <= 0)
    return llvm::createStringError("moe sorting: experts (%lld) and block size (%lld) must be "
                                   "positive",
                                   static_cast<long long>(experts),
                                   static_cast<long long>(blockSize));
  const int64_t pairs = tokens * topk;
  if (static_cast<int64_t>(topkIds.size()) != pairs ||
      static_cast<int64_t>(topkWeights.size()) != pairs)
    return llvm::createStringError("moe sorting: topk ids (%zu) and weights (%zu) must both "
                                   "hold tokens*topk = %lld entries",
                                   topkIds.size(), topkWeights.size(),
                                   static_cast<long long>(pairs));

  std::vector<int64_t> count(experts, 0);
  for (int64_t i = 0; i < pairs; ++i) {
    int32_t e = topkIds[i];
    if ((e < 0 || e >= experts) && outside == OutsideIds::Drop)
      continue;
    if (e < 0 || e >= experts)
      return llvm::createStringError("moe sorting: topk id %d of token %lld slot %lld is outside "
                                     "[0, %lld)",
                                     e, static_cast<long long>(i / topk),
                                     static_cast<long long>(i % topk),
                                     static_cast<long long>(experts));
    ++count[e];
  }

  MoeSorting s;
  s.tokens = tokens;
  s.topk = topk;
  s.experts = experts;
  s.blockSize = blockSize;
  const int64_t len = maxNumTokensPadded(tokens, topk, experts, blockSize);
  s.sortedTokenIds.assign(len, s.paddingEntry());
  s.sortedWeights.assign(len, 0.0f);
  s.sortedExpertIds.assign(maxNumMBlocks(tokens, topk, experts, blockSize), -1);
  s.mIndices.assign(len, static_cast<int32_t>(tokens));
  s.reverseSorted.assign(pairs, -1);

  // Segment start of each non-empty expert.
  std::vector<int64_t> start(experts, 0);
  int64_t pos = 0, block = 0;
  for (int64_t e = 0; e < experts; ++e) {
    if (count[e] == 0)
      continue;
    start[e] = pos;
    int64_t blocks = (count[e] + blockSize - 1) / blockSize;
    for (int64_t b = 0; b < blocks; ++b)
      s.sortedExpertIds[block++] = static_cast<int32_t>(e);
    pos += blocks * blockSize;
  }
  s.numValidIds[0] = static_cast<int32_t>(pos);
  s.numValidIds[1] = static_cast<int32_t>(tokens);

  // Row-major (token, slot) order gives ascending token, then slot.
  std::vector<int64_t> fill = start;
  for (int64_t i = 0; i < pairs; ++i) {
    int64_t e = topkIds[i], token = i / topk, slot = i % topk;
    if (e < 0 || e >= experts)
      continue; // dropped (OutsideIds::Drop; Refuse returned above)
    int64_t p = fill[e]++;
    s.sortedTokenIds[p] = static_cast<int32_t>((slot << 24) | token);
    s.sortedWeights[p] = topkWeights[i];
    s.mIndices[p] = static_cast<int32_t>(token);
    s.reverseSorted[i] = static_cast<int32_t>(p);
  }
  return s;
}

} // namespace moegen::num
