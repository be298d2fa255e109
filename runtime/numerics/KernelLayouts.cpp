//===- KernelLayouts.cpp - Stage buffers as the kernels lay them out ------===//

#include "runtime/numerics/KernelLayouts.h"

#include "runtime/numerics/Preshuffle.h"

#include <algorithm>

namespace moegen::num {

namespace {

llvm::Expected<ElemFormat> fusedFormatOf(const MoeSpec &spec) {
  switch (spec.stage1.fusedQuant) {
  case FusedQuant::FP4:
    return ElemFormat::MXFP4;
  case FusedQuant::FP8:
    return ElemFormat::MXFP8;
  case FusedQuant::None:
    break;
  }
  return llvm::createStringError("stage-1 kernel layout: spec '%s' has no fused quantization",
                                 spec.name.c_str());
}

int64_t pairOf(const MoeSorting &s, int64_t pos) {
  int32_t e = s.sortedTokenIds[pos];
  return MoeSorting::tokenOf(e) * s.topk + MoeSorting::slotOf(e);
}

} // namespace

llvm::Expected<Stage1KernelBuffers> stage1ToKernelLayout(const MoeSpec &spec,
                                                         const MoeSorting &sorting,
                                                         const Stage1Result &s1, bool sortedRows) {
  auto fmt = fusedFormatOf(spec);
  if (!fmt)
    return fmt.takeError();
  if (s1.out.format != *fmt)
    return llvm::createStringError("stage-1 kernel layout: output is %s, the spec fuses %s",
                                   toString(s1.out.format).str().c_str(),
                                   toString(*fmt).str().c_str());
  const int64_t I = spec.problem.interDim, rowBytes = packedBytes(*fmt, I);
  const int64_t sortedCount = static_cast<int64_t>(sorting.sortedTokenIds.size());
  Stage1KernelBuffers b;
  if (!sortedRows) {
    b.rows = s1.out.data;
  } else {
    b.rows.assign(sortedCount * rowBytes, 0);
    for (int64_t p = 0; p < sorting.numValidIds[0]; ++p)
      if (sorting.isValidRow(p))
        std::copy_n(&s1.out.data[pairOf(sorting, p) * rowBytes], rowBytes, &b.rows[p * rowBytes]);
  }
  b.scales = e8m0Shuffle(s1.sortedScales, sortedCount, I / kMxBlock);
  return b;
}

llvm::Expected<HostTensor> stage1FromKernelLayout(const MoeSpec &spec, const MoeSorting &sorting,
                                                  llvm::ArrayRef<uint8_t> rows,
                                                  llvm::ArrayRef<uint8_t> scales, bool sortedRows) {
  auto fmt = fusedFormatOf(spec);
  if (!fmt)
    return fmt.takeError();
  const int64_t M = sorting.tokens, topk = sorting.topk, I = spec.problem.interDim;
  const int64_t rowBytes = packedBytes(*fmt, I), sc = I / kMxBlock;
  const int64_t sortedCount = static_cast<int64_t>(sorting.sortedTokenIds.size());
  const int64_t wantRows = (sortedRows ? sortedCount : M * topk) * rowBytes;
  if (static_cast<int64_t>(rows.size()) < wantRows)
    return llvm::createStringError("stage-1 kernel rows: %zu bytes, need %lld", rows.size(),
                                   static_cast<long long>(wantRows));
  auto logicalScales = e8m0Unshuffle(scales, sortedCount, sc);
  if (!logicalScales)
    return logicalScales.takeError();
  HostTensor t;
  t.format = *fmt;
  t.shape = {M, topk, I};
  t.data.assign(M * topk * rowBytes, 0);
  t.scales.assign(M * topk * sc, 0);
  for (int64_t p = 0; p < sorting.numValidIds[0]; ++p) {
    if (!sorting.isValidRow(p))
      continue;
    const int64_t pair = pairOf(sorting, p);
    const int64_t src = (sortedRows ? p : pair) * rowBytes;
    std::copy_n(&rows[src], rowBytes, &t.data[pair * rowBytes]);
    std::copy_n(&(*logicalScales)[p * sc], sc, &t.scales[pair * sc]);
  }
  return t;
}

} // namespace moegen::num
