//===- KernelLayouts.h - Stage buffers as the kernels lay them out -*- C++ -*-===//
//
// Converts between the reference's logical tensors and the buffers a fused-
// quant stage-1 kernel writes, so kernel results can be decoded and compared:
//   rows    packed fp4x2 / fp8 rows of I elements, one per (token, slot) in
//           token*topk + slot order, or one per sorted position (the "v2"
//           sorted-row layout: rows = sortedTokenIds.size()).
//   scales  e8m0 scales by sorted position in the e8m0_shuffle layout
//           ([ceil256(sorted rows), ceil8(I/32)]).
// Padding rows carry no data and are skipped.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_NUMERICS_KERNELLAYOUTS_H
#define MOEGEN_RUNTIME_NUMERICS_KERNELLAYOUTS_H

#include "compiler/spec/Spec.h"
#include "runtime/numerics/Reference.h"
#include "runtime/numerics/Sorting.h"
#include "runtime/numerics/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace moegen::num {

struct Stage1KernelBuffers {
  std::vector<uint8_t> rows;
  std::vector<uint8_t> scales; // shuffled
};

/// The kernel buffers of a fused-quant reference stage-1 result.
llvm::Expected<Stage1KernelBuffers> stage1ToKernelLayout(const MoeSpec &spec,
                                                         const MoeSorting &sorting,
                                                         const Stage1Result &s1, bool sortedRows);

/// A logical [M, topk, I] MX tensor from kernel buffers; rows of pairs that no
/// valid sorted row covers are zero with scale 0.
llvm::Expected<HostTensor> stage1FromKernelLayout(const MoeSpec &spec, const MoeSorting &sorting,
                                                  llvm::ArrayRef<uint8_t> rows,
                                                  llvm::ArrayRef<uint8_t> scales, bool sortedRows);

} // namespace moegen::num

#endif // MOEGEN_RUNTIME_NUMERICS_KERNELLAYOUTS_H
