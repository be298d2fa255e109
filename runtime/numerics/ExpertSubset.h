//===- ExpertSubset.h - Weights of the routed experts only ------*- C++ -*-===//
//
// A few tokens route to a small part of a layer's experts (16 tokens x top-16
// reach at most 256 of 896), and nothing reads the others. The layer check
// keeps the weights of the routed experts only, as [n, rows, cols] tensors
// whose expert j is expert ids[j] of the layer (ids ascending):
//   - the reference runs on them with the sorting's expert ids renumbered to
//     positions in ids (renumberExperts) and a spec whose expert count is n;
//     results are identical, since the reference reads experts only through
//     the sorting;
//   - packExperts packs them expert by expert and hands each expert's bytes,
//     with their offset in the full packed buffer, to a sink, so the device
//     buffers hold the other experts as zeros without a host copy of them.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_NUMERICS_EXPERTSUBSET_H
#define MOEGEN_RUNTIME_NUMERICS_EXPERTSUBSET_H

#include "compiler/spec/Spec.h"
#include "runtime/numerics/Sorting.h"
#include "runtime/numerics/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace moegen::num {

/// The experts in [0, experts) that topkIds name, ascending.
std::vector<int32_t> routedExperts(llvm::ArrayRef<int32_t> topkIds, int64_t experts);

/// Experts ids of a [E, rows, cols] tensor (data and scales) as
/// [ids.size(), rows, cols].
llvm::Expected<HostTensor> selectExperts(const HostTensor &w, llvm::ArrayRef<int32_t> ids);

/// The sorting with each used block's expert replaced by its position in ids
/// and experts = ids.size(); errors if a block's expert is not in ids.
llvm::Expected<MoeSorting> renumberExperts(const MoeSorting &s, llvm::ArrayRef<int32_t> ids);

/// Byte sizes of packWeights' four buffers for the whole layer.
struct PackedSizes {
  int64_t w1 = 0, w1Scale = 0, w2 = 0, w2Scale = 0;
};
PackedSizes packedSizes(const MoeSpec &spec);

enum class PackedBuffer : uint8_t { W1, W1Scale, W2, W2Scale };
using PackedSink =
    llvm::function_ref<llvm::Error(PackedBuffer, int64_t offset, llvm::ArrayRef<uint8_t> bytes)>;

/// Packs w1 [n, 2I, K] and w2 [n, K, I] holding experts ids (ascending) as
/// packWeights does, `chunk` experts at a time, and gives every expert's
/// bytes of each buffer to `sink` with their offset in the full buffer
/// (packedSizes). The rest of a full buffer is what packWeights gives an
/// all-zero expert: zeros. Non-MX weights have a 4-byte zero scale stand-in,
/// given once at offset 0.
llvm::Error packExperts(const MoeSpec &spec, const HostTensor &w1, const HostTensor &w2,
                        llvm::ArrayRef<int32_t> ids, PackedSink sink, int64_t chunk = 16);

} // namespace moegen::num

#endif // MOEGEN_RUNTIME_NUMERICS_EXPERTSUBSET_H
