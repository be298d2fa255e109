//===- Reference.cpp - Reference MoE stages -------------------------------===//

#include "runtime/numerics/Reference.h"

#include "compiler/spec/Expr.h"
#include "runtime/numerics/Formats.h"

#include "llvm/Support/ThreadPool.h"

#include <algorithm>
#include <string>

namespace moegen::num {

namespace {

std::string shapeStr(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

llvm::Error expectTensor(const HostTensor &t, llvm::StringRef what, ElemFormat format,
                         llvm::ArrayRef<int64_t> shape) {
  if (t.format != format)
    return llvm::createStringError("%s: expected format %s, got %s", what.str().c_str(),
                                   toString(format).str().c_str(),
                                   toString(t.format).str().c_str());
  if (llvm::ArrayRef<int64_t>(t.shape) != shape)
    return llvm::createStringError("%s: expected shape %s, got %s", what.str().c_str(),
                                   shapeStr(shape).c_str(), shapeStr(t.shape).c_str());
  return verifyTensor(t, what);
}

/// The decoded [rows, cols] matrix of one expert, decoded on first use.
class ExpertRows {
public:
  ExpertRows(const HostTensor &w, int64_t rowsPerExpert) : w(w), rowsPerExpert(rowsPerExpert) {}
  const float *get(int64_t expert) {
    if (expert != current) {
      buf = decodeRows(w, expert * rowsPerExpert, rowsPerExpert);
      current = expert;
    }
    return buf.data();
  }

private:
  const HostTensor &w;
  int64_t rowsPerExpert;
  int64_t current = -1;
  std::vector<float> buf;
};

/// Calls body(first, last) for ranges of whole blocks (one expert each) of
/// the sorted rows [0, num_valid_ids), on the host's cores. Each range
/// decodes its own weight rows, and rows are independent, so the results are
/// the same as in one pass.
template <typename Body> void forBlockRanges(const MoeSorting &s, Body body) {
  const int64_t rows = s.numValidIds[0], blocks = (rows + s.blockSize - 1) / s.blockSize;
  const unsigned threads = llvm::hardware_concurrency().compute_thread_count();
  const int64_t perTask = std::max<int64_t>(1, blocks / (4 * static_cast<int64_t>(threads)));
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency());
  for (int64_t b = 0; b < blocks; b += perTask)
    pool.async([&, b] { body(b * s.blockSize, std::min(rows, (b + perTask) * s.blockSize)); });
  pool.wait();
}

/// kRowGroup consecutive rows of one expert's weight matrix, decoded and
/// interleaved (element k of row j at k * kRowGroup + j) so that the dot
/// products of an activation row with all of them advance together (see
/// dotGroup); rows past `count` are zeros.
constexpr int64_t kRowGroup = 8;

class RowGroup {
public:
  RowGroup(const HostTensor &w, int64_t rowsPerExpert)
      : w(w), rowsPerExpert(rowsPerExpert), cols(w.cols()), rows(kRowGroup * cols),
        interleaved(kRowGroup * cols) {}
  const float *load(int64_t expert, int64_t first, int64_t count) {
    decodeRowsInto(w, expert * rowsPerExpert + first, count, rows.data());
    for (int64_t k = 0; k < cols; ++k)
      for (int64_t j = 0; j < kRowGroup; ++j)
        interleaved[k * kRowGroup + j] = j < count ? rows[j * cols + k] : 0.0f;
    return interleaved.data();
  }

private:
  const HostTensor &w;
  int64_t rowsPerExpert, cols;
  std::vector<float> rows, interleaved;
};

/// out[j] = the dot product of x with row j of a RowGroup over n elements,
/// summed in Acc in index order; the kRowGroup independent sums run side by
/// side instead of one long dependency chain. Products of decoded elements
/// are exact in f32 (at most 8 x 8 significant bits), so only the summation
/// differs between the two accumulators.
template <typename Acc> void dotGroup(const float *x, const float *group, int64_t n, Acc *out) {
  Acc s[kRowGroup] = {};
  for (int64_t i = 0; i < n; ++i) {
    const Acc xi = static_cast<Acc>(x[i]);
    for (int64_t j = 0; j < kRowGroup; ++j)
      s[j] += xi * static_cast<Acc>(group[i * kRowGroup + j]);
  }
  std::copy_n(s, kRowGroup, out);
}

/// Calls body(expert, rows) for each block of sorted rows in [first, last)
/// with its valid rows (skipping blocks without any).
template <typename Valid, typename Body>
void forBlocks(const MoeSorting &s, int64_t first, int64_t last, Valid valid, Body body) {
  std::vector<int64_t> rows;
  for (int64_t b0 = first; b0 < last;) {
    const int64_t b1 = std::min(last, (b0 / s.blockSize + 1) * s.blockSize);
    rows.clear();
    for (int64_t pos = b0; pos < b1; ++pos)
      if (valid(pos))
        rows.push_back(pos);
    if (!rows.empty())
      body(s.sortedExpertIds[b0 / s.blockSize], llvm::ArrayRef<int64_t>(rows));
    b0 = b1;
  }
}

ElemFormat fusedFormat(FusedQuant q) {
  return q == FusedQuant::FP8 ? ElemFormat::MXFP8 : ElemFormat::MXFP4;
}

llvm::Error checkSorting(const MoeSpec &spec, const MoeSorting &s, int64_t tokens) {
  if (s.tokens != tokens)
    return llvm::createStringError("sorting has %lld tokens, the activations have %lld rows",
                                   static_cast<long long>(s.tokens),
                                   static_cast<long long>(tokens));
  if (s.blockSize <= 0 || s.numValidIds[0] < 0 ||
      s.numValidIds[0] > static_cast<int64_t>(s.sortedTokenIds.size()) ||
      s.sortedWeights.size() != s.sortedTokenIds.size() ||
      s.numValidIds[0] > static_cast<int64_t>(s.sortedExpertIds.size()) * s.blockSize)
    return llvm::createStringError("sorting is inconsistent: %zu ids, %zu weights, %zu blocks "
                                   "of %lld, num_valid_ids %d",
                                   s.sortedTokenIds.size(), s.sortedWeights.size(),
                                   s.sortedExpertIds.size(), static_cast<long long>(s.blockSize),
                                   s.numValidIds[0]);
  for (int64_t b = 0; b < s.numValidIds[0] / s.blockSize; ++b)
    if (s.sortedExpertIds[b] < 0 || s.sortedExpertIds[b] >= spec.problem.experts)
      return llvm::createStringError("sorted_expert_ids[%lld] = %d is outside [0, %lld)",
                                     static_cast<long long>(b), s.sortedExpertIds[b],
                                     static_cast<long long>(spec.problem.experts));
  if (s.topk != spec.problem.topk || s.experts != spec.problem.experts)
    return llvm::createStringError(
        "sorting was built for topk %lld and %lld experts, the spec "
        "has topk %lld and %lld experts",
        static_cast<long long>(s.topk), static_cast<long long>(s.experts),
        static_cast<long long>(spec.problem.topk), static_cast<long long>(spec.problem.experts));
  return llvm::Error::success();
}

} // namespace

ScaleRounding fusedQuantRoundingFor(const MoeSpec &spec, const RefOptions &opts) {
  if (opts.fusedQuantRounding)
    return *opts.fusedQuantRounding;
  return spec.stage1.kBatch > 1 ? ScaleRounding::RoundUp : ScaleRounding::FusedEpilogue;
}

llvm::Error verifyStage1Inputs(const MoeSpec &spec, const HostTensor &a1, const HostTensor &w1) {
  const Problem &p = spec.problem;
  int64_t m = a1.shape.empty() ? 0 : a1.shape[0];
  if (auto err = expectTensor(a1, "stage-1 activations a1", elemFormatOf(spec.formats.activation),
                              {m, p.modelDim}))
    return err;
  return expectTensor(w1, "stage-1 weights w1", elemFormatOf(spec.formats.weight),
                      {p.experts, 2 * p.interDim, p.modelDim});
}

llvm::Error verifyStage2Inputs(const MoeSpec &spec, const HostTensor &a2, const HostTensor &w2) {
  const Problem &p = spec.problem;
  if (a2.shape.size() != 3 || a2.shape[1] != p.topk || a2.shape[2] != p.interDim)
    return llvm::createStringError("stage-2 activations a2: expected shape [M, %lld, %lld], got %s",
                                   static_cast<long long>(p.topk),
                                   static_cast<long long>(p.interDim), shapeStr(a2.shape).c_str());
  if (auto err = verifyTensor(a2, "stage-2 activations a2"))
    return err;
  return expectTensor(w2, "stage-2 weights w2", elemFormatOf(spec.formats.weight),
                      {p.experts, p.modelDim, p.interDim});
}

llvm::Expected<Stage1Result> referenceStage1(const MoeSpec &spec, const HostTensor &a1,
                                             const MoeSorting &sorting, const HostTensor &w1,
                                             const RefOptions &opts) {
  if (auto err = verifyStage1Inputs(spec, a1, w1))
    return std::move(err);
  const int64_t M = a1.shape[0], K = spec.problem.modelDim, I = spec.problem.interDim;
  const int64_t topk = spec.problem.topk;
  if (auto err = checkSorting(spec, sorting, M))
    return std::move(err);
  const bool f64 = opts.accum == Accum::F64;
  const bool doweight = spec.problem.doweightStage1;

  std::vector<float> a = decode(a1);
  std::vector<float> vals(M * topk * I, 0.0f);
  Stage1Result r;
  r.pairRouted.assign(M * topk, false);
  const int64_t sortedRows = static_cast<int64_t>(sorting.sortedTokenIds.size());
  r.sortedRowValid.assign(sortedRows, false);
  for (int64_t pos = 0; pos < sorting.numValidIds[0]; ++pos) {
    if (!sorting.isValidRow(pos))
      continue;
    r.sortedRowValid[pos] = true;
    const int32_t entry = sorting.sortedTokenIds[pos];
    r.pairRouted[MoeSorting::tokenOf(entry) * topk + MoeSorting::slotOf(entry)] = true;
  }
  // Weight rows a group at a time (the gate rows n and the up rows I + n),
  // each against every valid row of the block.
  forBlockRanges(sorting, [&](int64_t first, int64_t last) {
    RowGroup gate(w1, 2 * I), up(w1, 2 * I);
    auto valid = [&](int64_t pos) { return static_cast<bool>(r.sortedRowValid[pos]); };
    forBlocks(sorting, first, last, valid, [&](int32_t expert, llvm::ArrayRef<int64_t> rows) {
      for (int64_t n0 = 0; n0 < I; n0 += kRowGroup) {
        const int64_t count = std::min(kRowGroup, I - n0);
        const float *wg = gate.load(expert, n0, count), *wu = up.load(expert, I + n0, count);
        for (int64_t pos : rows) {
          const int32_t entry = sorting.sortedTokenIds[pos];
          const int64_t token = MoeSorting::tokenOf(entry), slot = MoeSorting::slotOf(entry);
          float *out = &vals[(token * topk + slot) * I + n0];
          const float *x = &a[token * K];
          const float tw = sorting.sortedWeights[pos];
          if (f64) {
            double g[kRowGroup], u[kRowGroup];
            dotGroup(x, wg, K, g);
            dotGroup(x, wu, K, u);
            for (int64_t j = 0; j < count; ++j) {
              double h = evalActivationF64(spec.activation, g[j], u[j]);
              out[j] = static_cast<float>(doweight ? h * static_cast<double>(tw) : h);
            }
          } else {
            float g[kRowGroup], u[kRowGroup];
            dotGroup(x, wg, K, g);
            dotGroup(x, wu, K, u);
            for (int64_t j = 0; j < count; ++j) {
              float h = evalActivationF32(spec.activation, g[j], u[j]);
              out[j] = doweight ? h * tw : h;
            }
          }
        }
      }
    });
  });

  std::vector<int64_t> shape = {M, topk, I};
  r.preRound = makeF32(shape, vals);
  const FusedQuant fq = spec.stage1.fusedQuant;
  if (fq == FusedQuant::None) {
    r.out = makeBf16(shape, vals);
    return r;
  }
  auto q = quantizeMx(vals, shape, fusedFormat(fq), fusedQuantRoundingFor(spec, opts));
  if (!q)
    return q.takeError();
  r.out = std::move(*q);
  const int64_t sc = r.out.scaleCols();
  r.sortedScales.assign(sortedRows * sc, 0);
  for (int64_t pos = 0; pos < sortedRows; ++pos) {
    if (!r.sortedRowValid[pos])
      continue;
    const int32_t entry = sorting.sortedTokenIds[pos];
    const int64_t pair = MoeSorting::tokenOf(entry) * topk + MoeSorting::slotOf(entry);
    std::copy_n(&r.out.scales[pair * sc], sc, &r.sortedScales[pos * sc]);
  }
  return r;
}

llvm::Expected<HostTensor> stage2Input(const MoeSpec &spec, const Stage1Result &s1,
                                       const RefOptions &opts) {
  if (spec.stage1.fusedQuant != FusedQuant::None)
    return s1.out;
  const ElemFormat target = elemFormatOf(spec.formats.activation);
  if (target == s1.out.format)
    return s1.out;
  // The bf16 intermediate is what the separate quantization kernel reads.
  return convertTo(decode(s1.out), s1.out.shape, target, opts.interQuantRounding);
}

llvm::Expected<Stage2Result> referenceStage2(const MoeSpec &spec, const HostTensor &a2,
                                             const MoeSorting &sorting, const HostTensor &w2,
                                             const RefOptions &opts) {
  if (auto err = verifyStage2Inputs(spec, a2, w2))
    return std::move(err);
  const int64_t M = a2.shape[0], K = spec.problem.modelDim, I = spec.problem.interDim;
  const int64_t topk = spec.problem.topk;
  if (auto err = checkSorting(spec, sorting, M))
    return std::move(err);
  const bool f64 = opts.accum == Accum::F64;
  const bool doweight = !spec.problem.doweightStage1;

  std::vector<float> a = decode(a2);
  std::vector<double> slotVals(M * topk * K, 0.0);
  forBlockRanges(sorting, [&](int64_t first, int64_t last) {
    RowGroup down(w2, K);
    auto valid = [&](int64_t pos) { return sorting.isValidRow(pos); };
    forBlocks(sorting, first, last, valid, [&](int32_t expert, llvm::ArrayRef<int64_t> rows) {
      for (int64_t n0 = 0; n0 < K; n0 += kRowGroup) {
        const int64_t count = std::min(kRowGroup, K - n0);
        const float *w = down.load(expert, n0, count);
        for (int64_t pos : rows) {
          const int32_t entry = sorting.sortedTokenIds[pos];
          const int64_t token = MoeSorting::tokenOf(entry), slot = MoeSorting::slotOf(entry);
          const int64_t pair = token * topk + slot;
          const float *x = &a[pair * I];
          double *y = &slotVals[pair * K + n0];
          const float tw = sorting.sortedWeights[pos];
          if (f64) {
            double d[kRowGroup];
            dotGroup(x, w, I, d);
            for (int64_t j = 0; j < count; ++j)
              y[j] = doweight ? d[j] * static_cast<double>(tw) : d[j];
          } else {
            float d[kRowGroup];
            dotGroup(x, w, I, d);
            for (int64_t j = 0; j < count; ++j)
              y[j] = doweight ? d[j] * tw : d[j];
          }
        }
      }
    });
  });
  // The bf16 atomic sum depends on the order: sorted order, in one pass.
  std::vector<float> atomicAcc;
  if (opts.sum == Stage2Sum::Bf16Atomic) {
    atomicAcc.assign(M * K, 0.0f);
    for (int64_t pos = 0; pos < sorting.numValidIds[0]; ++pos) {
      if (!sorting.isValidRow(pos))
        continue;
      const int32_t entry = sorting.sortedTokenIds[pos];
      const int64_t token = MoeSorting::tokenOf(entry), slot = MoeSorting::slotOf(entry);
      const double *y = &slotVals[(token * topk + slot) * K];
      for (int64_t n = 0; n < K; ++n) {
        float &acc = atomicAcc[token * K + n];
        acc = roundToBf16(acc + roundToBf16(static_cast<float>(y[n])));
      }
    }
  }

  std::vector<float> sums(M * K, 0.0f);
  if (!atomicAcc.empty()) {
    sums = atomicAcc;
  } else {
    for (int64_t t = 0; t < M; ++t)
      for (int64_t n = 0; n < K; ++n) {
        if (f64) {
          double s = 0;
          for (int64_t k = 0; k < topk; ++k)
            s += slotVals[(t * topk + k) * K + n];
          sums[t * K + n] = static_cast<float>(s);
        } else {
          float s = 0;
          for (int64_t k = 0; k < topk; ++k) {
            float v = static_cast<float>(slotVals[(t * topk + k) * K + n]);
            s += opts.sum == Stage2Sum::Bf16SlotRows ? roundToBf16(v) : v;
          }
          sums[t * K + n] = s;
        }
      }
  }

  Stage2Result r;
  std::vector<float> perSlot(slotVals.begin(), slotVals.end());
  r.perSlot = makeF32({M, topk, K}, perSlot);
  r.preRound = makeF32({M, K}, sums);
  auto out = convertTo(sums, {M, K}, elemFormatOf(spec.formats.output), ScaleRounding::RoundUp);
  if (!out)
    return out.takeError();
  r.out = std::move(*out);
  return r;
}

llvm::Expected<LayerResult> referenceLayer(const MoeSpec &spec, const HostTensor &a1,
                                           llvm::ArrayRef<int32_t> topkIds,
                                           llvm::ArrayRef<float> topkWeights, const HostTensor &w1,
                                           const HostTensor &w2, const RefOptions &opts) {
  if (a1.shape.size() != 2)
    return llvm::createStringError("a1: expected [M, K], got %s", shapeStr(a1.shape).c_str());
  auto sorting = sortMoe(topkIds, topkWeights, a1.shape[0], spec.problem.topk, spec.problem.experts,
                         spec.stage1.tileM);
  if (!sorting)
    return sorting.takeError();
  return referenceStages(spec, a1, std::move(*sorting), w1, w2, opts);
}

llvm::Expected<LayerResult> referenceStages(const MoeSpec &spec, const HostTensor &a1,
                                            MoeSorting sorting, const HostTensor &w1,
                                            const HostTensor &w2, const RefOptions &opts) {
  auto s1 = referenceStage1(spec, a1, sorting, w1, opts);
  if (!s1)
    return s1.takeError();
  auto a2 = stage2Input(spec, *s1, opts);
  if (!a2)
    return a2.takeError();
  auto s2 = referenceStage2(spec, *a2, sorting, w2, opts);
  if (!s2)
    return s2.takeError();
  return LayerResult{std::move(sorting), std::move(*s1), std::move(*a2), std::move(*s2)};
}

llvm::Expected<std::vector<double>> referenceLayerF64(const MoeSpec &spec, llvm::ArrayRef<double> x,
                                                      llvm::ArrayRef<int32_t> topkIds,
                                                      llvm::ArrayRef<float> topkWeights,
                                                      const HostTensor &w1, const HostTensor &w2) {
  const Problem &p = spec.problem;
  const int64_t K = p.modelDim, I = p.interDim, topk = p.topk;
  if (K <= 0 || x.size() % K != 0)
    return llvm::createStringError("layer f64: %zu input values are not rows of model_dim %lld",
                                   x.size(), static_cast<long long>(K));
  const int64_t M = static_cast<int64_t>(x.size()) / K;
  if (static_cast<int64_t>(topkIds.size()) != M * topk ||
      static_cast<int64_t>(topkWeights.size()) != M * topk)
    return llvm::createStringError("layer f64: expected %lld topk ids and weights, got %zu and "
                                   "%zu",
                                   static_cast<long long>(M * topk), topkIds.size(),
                                   topkWeights.size());
  if (auto err = expectTensor(w1, "w1", elemFormatOf(spec.formats.weight), {p.experts, 2 * I, K}))
    return std::move(err);
  if (auto err = expectTensor(w2, "w2", elemFormatOf(spec.formats.weight), {p.experts, K, I}))
    return std::move(err);
  // Visit pairs expert by expert so each expert is decoded once.
  std::vector<std::vector<int64_t>> byExpert(p.experts);
  for (int64_t i = 0; i < M * topk; ++i) {
    if (topkIds[i] < 0 || topkIds[i] >= p.experts)
      return llvm::createStringError("layer f64: topk id %d of token %lld slot %lld is outside "
                                     "[0, %lld)",
                                     topkIds[i], static_cast<long long>(i / topk),
                                     static_cast<long long>(i % topk),
                                     static_cast<long long>(p.experts));
    byExpert[topkIds[i]].push_back(i);
  }
  std::vector<double> out(M * K, 0.0), h(I);
  ExpertRows rows1(w1, 2 * I), rows2(w2, K);
  for (int64_t e = 0; e < p.experts; ++e) {
    if (byExpert[e].empty())
      continue;
    const float *a = rows1.get(e);
    const float *b = rows2.get(e);
    for (int64_t pair : byExpert[e]) {
      const int64_t token = pair / topk;
      const double tw = topkWeights[pair];
      const double *xr = &x[token * K];
      for (int64_t n = 0; n < I; ++n) {
        double g = 0, u = 0;
        for (int64_t k = 0; k < K; ++k) {
          g += xr[k] * a[n * K + k];
          u += xr[k] * a[(I + n) * K + k];
        }
        double v = evalActivationF64(spec.activation, g, u);
        h[n] = p.doweightStage1 ? v * tw : v;
      }
      for (int64_t m = 0; m < K; ++m) {
        double y = 0;
        for (int64_t n = 0; n < I; ++n)
          y += h[n] * b[m * I + n];
        out[token * K + m] += p.doweightStage1 ? y : y * tw;
      }
    }
  }
  return out;
}

} // namespace moegen::num
