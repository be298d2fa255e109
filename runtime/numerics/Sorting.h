//===- Sorting.h - MoE token sorting in aiter's format ----------*- C++ -*-===//
//
// The reference of moe_sorting: (token, slot) pairs grouped by expert in
// ascending expert order, within an expert by ascending token then slot, each
// expert's segment padded to a multiple of blockSize. Experts that receive no
// token get no block.
//
//   sortedTokenIds  [M*topk + E*blockSize - topk]; entry (slot << 24) | token,
//                   padding and the unused tail = (topk << 24) | M.
//   sortedWeights   same length; topk weight of the entry, 0 for padding.
//   sortedExpertIds [ceil(len / blockSize)]; expert of each block, -1 past
//                   the used blocks (aiter leaves those unspecified).
//   numValidIds     {used blocks * blockSize, M}.
//   mIndices        token of each sorted row (M for padding).
//   reverseSorted   [M*topk]: sorted position of (token, slot).
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_NUMERICS_SORTING_H
#define MOEGEN_RUNTIME_NUMERICS_SORTING_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace moegen::num {

struct MoeSorting {
  int64_t tokens = 0, topk = 0, experts = 0, blockSize = 0;
  std::vector<int32_t> sortedTokenIds;
  std::vector<float> sortedWeights;
  std::vector<int32_t> sortedExpertIds;
  int32_t numValidIds[2] = {0, 0};
  std::vector<int32_t> mIndices;
  std::vector<int32_t> reverseSorted;

  int32_t paddingEntry() const { return static_cast<int32_t>((topk << 24) | tokens); }
  int64_t usedBlocks() const { return numValidIds[0] / blockSize; }
  /// Whether sorted row `pos` holds a real (token, slot) pair.
  bool isValidRow(int64_t pos) const;
  static int64_t tokenOf(int32_t entry) { return entry & 0xFFFFFF; }
  static int64_t slotOf(int32_t entry) { return static_cast<uint32_t>(entry) >> 24; }
};

/// What sortMoe does with a top-k id outside [0, experts).
enum class OutsideIds : uint8_t {
  Refuse, // an error
  Drop,   // the entry is neither counted nor placed (a masked slot, -1, or
          // another rank's expert), as the sorting kernels do; its
          // reverseSorted stays -1
};

/// Sorts topkIds [M, topk] (expert ids in [0, experts)) with topkWeights
/// [M, topk]. Errors name the offending (token, slot) and value.
llvm::Expected<MoeSorting> sortMoe(llvm::ArrayRef<int32_t> topkIds,
                                   llvm::ArrayRef<float> topkWeights, int64_t tokens, int64_t topk,
                                   int64_t experts, int64_t blockSize,
                                   OutsideIds outside = OutsideIds::Refuse);

/// Sizes aiter allocates: M*topk + E*block - topk, and its block count.
int64_t maxNumTokensPadded(int64_t tokens, int64_t topk, int64_t experts, int64_t blockSize);
int64_t maxNumMBlocks(int64_t tokens, int64_t topk, int64_t experts, int64_t blockSize);

} // namespace moegen::num

#endif // MOEGEN_RUNTIME_NUMERICS_SORTING_H
