//===- ExpertSubset.cpp - Weights of the routed experts only --------------===//

#include "runtime/numerics/ExpertSubset.h"

#include "runtime/numerics/Preshuffle.h"

#include "llvm/Support/ThreadPool.h"

#include <algorithm>
#include <cstring>
#include <mutex>

namespace moegen::num {

std::vector<int32_t> routedExperts(llvm::ArrayRef<int32_t> topkIds, int64_t experts) {
  std::vector<bool> used(std::max<int64_t>(experts, 0), false);
  for (int32_t id : topkIds)
    if (id >= 0 && id < experts)
      used[id] = true;
  std::vector<int32_t> ids;
  for (int64_t e = 0; e < experts; ++e)
    if (used[e])
      ids.push_back(static_cast<int32_t>(e));
  return ids;
}

llvm::Expected<HostTensor> selectExperts(const HostTensor &w, llvm::ArrayRef<int32_t> ids) {
  if (w.shape.size() != 3)
    return llvm::createStringError("selectExperts: expected an [experts, rows, cols] tensor");
  if (llvm::Error e = verifyTensor(w, "selectExperts"))
    return std::move(e);
  const int64_t experts = w.shape[0], rows = w.shape[1], cols = w.shape[2];
  const int64_t dataPer = packedBytes(w.format, rows * cols);
  const int64_t scalePer = isMx(w.format) ? rows * (cols / kMxBlock) : 0;
  HostTensor out;
  out.format = w.format;
  out.shape = {static_cast<int64_t>(ids.size()), rows, cols};
  out.data.resize(ids.size() * dataPer);
  out.scales.resize(ids.size() * scalePer);
  for (size_t j = 0; j < ids.size(); ++j) {
    if (ids[j] < 0 || ids[j] >= experts || (j && ids[j] <= ids[j - 1]))
      return llvm::createStringError("selectExperts: expert ids must ascend within [0, %lld)",
                                     static_cast<long long>(experts));
    std::memcpy(&out.data[j * dataPer], &w.data[ids[j] * dataPer], dataPer);
    if (scalePer)
      std::memcpy(&out.scales[j * scalePer], &w.scales[ids[j] * scalePer], scalePer);
  }
  return out;
}

llvm::Expected<MoeSorting> renumberExperts(const MoeSorting &s, llvm::ArrayRef<int32_t> ids) {
  MoeSorting r = s;
  r.experts = static_cast<int64_t>(ids.size());
  for (int64_t b = 0; b < s.usedBlocks() && b < static_cast<int64_t>(s.sortedExpertIds.size());
       ++b) {
    const int32_t e = s.sortedExpertIds[b];
    auto it = std::lower_bound(ids.begin(), ids.end(), e);
    if (it == ids.end() || *it != e)
      return llvm::createStringError("sorted block %lld routes to expert %d, which is not among "
                                     "the kept experts",
                                     static_cast<long long>(b), e);
    r.sortedExpertIds[b] = static_cast<int32_t>(it - ids.begin());
  }
  return r;
}

namespace {

struct Geometry {
  int64_t rows, cols;
  bool interleave;
};

/// Bytes one expert occupies in the packed data and (MX) shuffled scales.
void perExpert(const MoeSpec &spec, const Geometry &g, int64_t &data, int64_t &scales) {
  const ElemFormat f = elemFormatOf(spec.formats.weight);
  data = g.rows * packedBytes(f, g.cols);
  scales = isMx(f) ? g.rows * e8m0ShuffledCols(g.cols / kMxBlock) : 0;
}

} // namespace

PackedSizes packedSizes(const MoeSpec &spec) {
  const int64_t E = spec.problem.experts, K = spec.problem.modelDim, I = spec.problem.interDim;
  const bool mx = isMx(elemFormatOf(spec.formats.weight));
  PackedSizes s;
  int64_t data, scales;
  perExpert(spec, {2 * I, K, false}, data, scales);
  s.w1 = E * data;
  s.w1Scale = mx ? e8m0ShuffledRows(E * 2 * I) * e8m0ShuffledCols(K / kMxBlock) : 4;
  perExpert(spec, {K, I, false}, data, scales);
  s.w2 = E * data;
  s.w2Scale = mx ? e8m0ShuffledRows(E * K) * e8m0ShuffledCols(I / kMxBlock) : 4;
  return s;
}

llvm::Error packExperts(const MoeSpec &spec, const HostTensor &w1, const HostTensor &w2,
                        llvm::ArrayRef<int32_t> ids, PackedSink sink, int64_t chunk) {
  const int64_t n = static_cast<int64_t>(ids.size());
  const int64_t K = spec.problem.modelDim, I = spec.problem.interDim;
  for (int64_t j = 0; j < n; ++j)
    if (ids[j] < 0 || ids[j] >= spec.problem.experts || (j && ids[j] <= ids[j - 1]))
      return llvm::createStringError("packExperts: expert ids must ascend within [0, %lld)",
                                     static_cast<long long>(spec.problem.experts));
  const bool mx = isMx(elemFormatOf(spec.formats.weight));
  // e8m0_shuffle groups 32 rows: each expert's scales are its own only when
  // its row count is a multiple of 32.
  if (mx && ((2 * I) % 32 != 0 || K % 32 != 0))
    return llvm::createStringError("packExperts: MX scales of %lld- and %lld-row experts are not "
                                   "expert-local in the e8m0_shuffle layout",
                                   static_cast<long long>(2 * I), static_cast<long long>(K));
  if (!mx)
    if (llvm::Error e = sink(PackedBuffer::W1Scale, 0, {0, 0, 0, 0}))
      return e;
  if (!mx)
    if (llvm::Error e = sink(PackedBuffer::W2Scale, 0, {0, 0, 0, 0}))
      return e;
  int64_t d1, s1, d2, s2;
  perExpert(spec, {2 * I, K, false}, d1, s1);
  perExpert(spec, {K, I, false}, d2, s2);
  chunk = std::max<int64_t>(chunk, 1);
  // Chunks pack on the host's cores; the sink takes one chunk at a time.
  std::mutex sinkLock, errorLock;
  llvm::Error firstError = llvm::Error::success();
  auto fail = [&](llvm::Error e) {
    std::lock_guard<std::mutex> guard(errorLock);
    if (firstError)
      llvm::consumeError(std::move(e));
    else
      firstError = std::move(e);
  };
  auto packChunk = [&](int64_t j0) -> llvm::Error {
    const int64_t m = std::min(chunk, n - j0);
    // The chunk as a layer of m experts: packing is per expert, so each
    // expert's bytes are the ones the whole layer's packing gives it.
    std::vector<int32_t> local(m);
    for (int64_t j = 0; j < m; ++j)
      local[j] = static_cast<int32_t>(j0 + j);
    auto c1 = selectExperts(w1, local);
    if (!c1)
      return c1.takeError();
    auto c2 = selectExperts(w2, local);
    if (!c2)
      return c2.takeError();
    MoeSpec part = spec;
    part.problem.experts = m;
    auto packed = packWeights(part, *c1, *c2);
    if (!packed)
      return packed.takeError();
    std::lock_guard<std::mutex> guard(sinkLock);
    for (int64_t j = 0; j < m; ++j) {
      const int64_t e = ids[j0 + j];
      llvm::ArrayRef<uint8_t> p1(packed->w1), p2(packed->w2);
      if (llvm::Error err = sink(PackedBuffer::W1, e * d1, p1.slice(j * d1, d1)))
        return err;
      if (llvm::Error err = sink(PackedBuffer::W2, e * d2, p2.slice(j * d2, d2)))
        return err;
      if (!mx)
        continue;
      llvm::ArrayRef<uint8_t> q1(packed->w1Scale), q2(packed->w2Scale);
      if (llvm::Error err = sink(PackedBuffer::W1Scale, e * s1, q1.slice(j * s1, s1)))
        return err;
      if (llvm::Error err = sink(PackedBuffer::W2Scale, e * s2, q2.slice(j * s2, s2)))
        return err;
    }
    return llvm::Error::success();
  };
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency());
  for (int64_t j0 = 0; j0 < n; j0 += chunk)
    pool.async([&, j0] {
      if (llvm::Error e = packChunk(j0))
        fail(std::move(e));
    });
  pool.wait();
  return firstError;
}

} // namespace moegen::num
