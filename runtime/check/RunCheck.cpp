//===- RunCheck.cpp - What one run of a layer wrote, against the reference ===//
//
// checkLayerRun (LayerCheck.h): reads a finished run's workspace and output
// back and compares every stage with the reference on the checked tokens.
// The kernels' buffers hold every token; the reference is computed on the
// checked ones only (their own sorting), and the kernels' rows of those
// tokens are taken out of the buffers before each comparison. A token's rows
// do not depend on the other tokens, so a subset is judged as in the whole.
//
//===----------------------------------------------------------------------===//

#include "runtime/check/LayerCheck.h"

#include "runtime/numerics/ExpertSubset.h"
#include "runtime/numerics/KernelLayouts.h"
#include "runtime/numerics/Preshuffle.h"
#include "runtime/numerics/Reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace moegen {
namespace {

llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

StageCheck exactCheck(llvm::StringRef name, int64_t mismatches, int64_t compared) {
  StageCheck c;
  c.stage = name.str();
  c.result.compared = compared;
  c.result.mismatches = mismatches;
  c.result.passed = mismatches == 0;
  c.tolerance.rtol = c.tolerance.atol = 0;
  return c;
}

template <typename T>
llvm::Expected<std::vector<T>> download(runtime::Backend &b, runtime::DevicePtr p, size_t count) {
  std::vector<T> host(count);
  if (count)
    if (llvm::Error e = b.copyToHost(host.data(), p, count * sizeof(T)))
      return std::move(e);
  return host;
}

llvm::Error checkRunInputs(const MoeSpec &spec, const RunInputs &in) {
  const Problem &pr = spec.problem;
  if (in.tokens <= 0)
    return makeError("checkLayerRun: RunInputs::tokens is " + llvm::Twine(in.tokens));
  if (int64_t(in.topkIds.size()) != in.tokens * pr.topk ||
      int64_t(in.topkWeights.size()) != in.tokens * pr.topk)
    return makeError("checkLayerRun: the routing has " + llvm::Twine(in.topkIds.size()) +
                     " ids and " + llvm::Twine(in.topkWeights.size()) + " weights for " +
                     llvm::Twine(in.tokens) + " tokens of top-" + llvm::Twine(pr.topk));
  for (size_t i = 0; i < in.checked.size(); ++i)
    if (in.checked[i] < 0 || in.checked[i] >= in.tokens ||
        (i && in.checked[i] <= in.checked[i - 1]))
      return makeError("checkLayerRun: checked token " + llvm::Twine(in.checked[i]) + " (#" +
                       llvm::Twine(i) + ") is not ascending in [0, " + llvm::Twine(in.tokens) +
                       ")");
  if (!in.a1 || !in.w1 || !in.w2)
    return makeError("checkLayerRun: RunInputs needs a1, w1 and w2");
  const int64_t rows = in.checked.empty() ? in.tokens : int64_t(in.checked.size());
  if (in.a1->shape != std::vector<int64_t>{rows, pr.modelDim})
    return makeError("checkLayerRun: a1 must be [" + llvm::Twine(rows) + ", " +
                     llvm::Twine(pr.modelDim) + "], the checked tokens' rows");
  return llvm::Error::success();
}

} // namespace

num::HostTensor tokenRows(const num::HostTensor &t, llvm::ArrayRef<int64_t> tokens) {
  num::HostTensor out;
  out.format = t.format;
  out.shape = t.shape;
  out.shape[0] = static_cast<int64_t>(tokens.size());
  if (t.shape.empty() || t.shape[0] == 0)
    return out;
  const int64_t perToken = t.numElements() / t.shape[0];
  const int64_t bytes = num::packedBytes(t.format, perToken);
  const int64_t scales = num::isMx(t.format) ? perToken / num::kMxBlock : 0;
  out.data.resize(tokens.size() * bytes);
  out.scales.resize(tokens.size() * scales);
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::memcpy(out.data.data() + i * bytes, t.data.data() + tokens[i] * bytes, bytes);
    if (scales)
      std::memcpy(out.scales.data() + i * scales, t.scales.data() + tokens[i] * scales, scales);
  }
  return out;
}

std::vector<int64_t> spreadTokens(int64_t tokens, int64_t count) {
  std::vector<int64_t> out;
  if (count <= 0 || count >= tokens) {
    out.resize(std::max<int64_t>(tokens, 0));
    std::iota(out.begin(), out.end(), 0);
    return out;
  }
  if (count == 1)
    return {0};
  for (int64_t i = 0; i < count; ++i)
    out.push_back(i * (tokens - 1) / (count - 1)); // strictly increasing: count < tokens
  return out;
}

llvm::Expected<LayerCheckResult> checkLayerRun(const MoeSpec &spec, runtime::Backend &backend,
                                               const runtime::KernelSet &kernels,
                                               const runtime::WorkspaceLayout &ws,
                                               const runtime::LayerArgs &args,
                                               const RunInputs &in) {
  if (llvm::Error e = checkRunInputs(spec, in))
    return std::move(e);
  const Problem &pr = spec.problem;
  const int64_t T = in.tokens, topk = pr.topk, K = pr.modelDim, I = pr.interDim;
  auto ran = [&](KernelFamily f) { return kernels.find(f) != nullptr; };
  std::vector<int64_t> everyToken;
  if (in.checked.empty())
    everyToken = spreadTokens(T, 0);
  const llvm::ArrayRef<int64_t> checked =
      in.checked.empty() ? llvm::ArrayRef<int64_t>(everyToken) : in.checked;
  const int64_t n = static_cast<int64_t>(checked.size());
  const bool subset = n < T;
  auto pick = [&](const num::HostTensor &t) { return subset ? tokenRows(t, checked) : t; };

  // The sorting of every token: what the sort kernel must produce, and where
  // the kernels' sorted-position buffers put each (token, slot).
  auto sorting = num::sortMoe(in.topkIds, in.topkWeights, T, topk, pr.experts, spec.stage1.tileM);
  if (!sorting)
    return sorting.takeError();
  // The reference, on the checked tokens and the given experts.
  std::vector<int32_t> ids(in.topkIds.begin(), in.topkIds.end());
  std::vector<float> weights(in.topkWeights.begin(), in.topkWeights.end());
  if (subset) {
    ids.clear();
    weights.clear();
    for (int64_t t : checked) {
      ids.insert(ids.end(), in.topkIds.begin() + t * topk, in.topkIds.begin() + (t + 1) * topk);
      weights.insert(weights.end(), in.topkWeights.begin() + t * topk,
                     in.topkWeights.begin() + (t + 1) * topk);
    }
  }
  auto checkedSorting = num::sortMoe(ids, weights, n, topk, pr.experts, spec.stage1.tileM);
  if (!checkedSorting)
    return checkedSorting.takeError();
  MoeSpec keptSpec = spec; // the reference's view: the given experts only
  num::MoeSorting keptSorting = *checkedSorting;
  if (!in.experts.empty()) {
    keptSpec.problem.experts = static_cast<int64_t>(in.experts.size());
    auto renumbered = num::renumberExperts(*checkedSorting, in.experts);
    if (!renumbered)
      return renumbered.takeError();
    keptSorting = std::move(*renumbered);
  }
  auto ref = num::referenceStages(keptSpec, *in.a1, keptSorting, *in.w1, *in.w2);
  if (!ref)
    return ref.takeError();

  auto region = [&](const runtime::WorkspaceRegion &r) {
    return download<uint8_t>(backend, args.workspace + r.offset, r.bytes);
  };
  auto words = [&](const runtime::WorkspaceRegion &r) {
    return download<int32_t>(backend, args.workspace + r.offset, r.bytes / 4);
  };
  const DType interFormat = spec.formats.activation;
  const bool fused = spec.stage1.fusedQuant != FusedQuant::None;
  LayerCheckResult result;
  result.tokens = T;
  result.checkedTokens = n;
  num::CompareOptions exact;
  exact.rtol = exact.atol = 0;

  // --- sort: every token -------------------------------------------------------
  if (!ran(KernelFamily::Sort)) {
    result.notRun.push_back("sort");
  } else {
    const num::MoeSorting &want = *sorting;
    auto nv = words(ws.numValidIds);
    auto sortedIds = words(ws.sortedIds);
    auto sortedWeights = words(ws.sortedWeights); // compared bit for bit
    auto experts = words(ws.sortedExperts);
    if (!nv || !sortedIds || !sortedWeights || !experts)
      return makeError("cannot read the sorting outputs back");
    int64_t bad = 0, compared = 2;
    bad += (*nv)[0] != want.numValidIds[0];
    bad += (*nv)[1] != want.numValidIds[1];
    int64_t used = std::min<int64_t>(want.numValidIds[0], ws.maxPaddedRows);
    for (int64_t i = 0; i < used; ++i, compared += 2) {
      bad += (*sortedIds)[i] != want.sortedTokenIds[i];
      bad += std::memcmp(&(*sortedWeights)[i], &want.sortedWeights[i], 4) != 0;
    }
    for (int64_t blk = 0; blk < used / ws.blockM; ++blk, ++compared)
      bad += (*experts)[blk] != want.sortedExpertIds[blk];
    result.stages.push_back(exactCheck("sort", bad, compared));
  }

  // bf16 rows read back as a tensor of `shape` (a carried decoded
  // intermediate is compared by value with the reference's MX tensor).
  auto decodedRows = [&](llvm::Expected<std::vector<uint8_t>> rows,
                         std::vector<int64_t> shape) -> llvm::Expected<num::HostTensor> {
    if (!rows)
      return rows.takeError();
    num::HostTensor t{num::ElemFormat::BF16, std::move(shape), std::move(*rows), {}};
    t.data.resize(t.numElements() * 2);
    return t;
  };

  // --- input quantization (MX activations), exactly the host's --------------
  if (kernels.find(KernelFamily::QuantInput)) {
    num::HostTensor got;
    if (ws.decodedMx) {
      auto t = decodedRows(region(ws.inputQ), {T, K});
      if (!t)
        return t.takeError();
      got = pick(*t);
    } else {
      auto data = region(ws.inputQ);
      auto shuffled = region(ws.inputQScale);
      if (!data || !shuffled)
        return makeError("cannot read the quantized input back");
      auto scales = num::e8m0Unshuffle(*shuffled, T, K / 32);
      if (!scales)
        return scales.takeError();
      data->resize(num::packedBytes(in.a1->format, T * K));
      got = pick(num::HostTensor{in.a1->format, {T, K}, std::move(*data), std::move(*scales)});
    }
    auto cmp = num::compareTensors(*in.a1, got, {}, exact);
    if (!cmp)
      return cmp.takeError();
    if (!ws.decodedMx) // equal values with other scales would be another encoding
      cmp->passed = cmp->passed && got.scales == in.a1->scales;
    result.stages.push_back({"quant1", *cmp, exact});
  } else if (ws.inputQ.bytes) {
    result.notRun.push_back("quant1"); // its output is the reference's, placed by the caller
  }

  // --- stage 1 -----------------------------------------------------------------
  num::HostTensor kernelS1;
  if (!ran(KernelFamily::Stage1) && (fused || !ran(KernelFamily::QuantInter))) {
    result.notRun.push_back("stage1");
  } else {
    // Packed MX rows with scales by sorted position, or bf16 rows (of the
    // decoded values, where a quantized output is carried decoded).
    auto t = [&]() -> llvm::Expected<num::HostTensor> {
      if (!fused || ws.decodedMx)
        return decodedRows(region(ws.stage1Out), {T, topk, I});
      auto rows = region(ws.stage1Out);
      auto scales = region(ws.stage1OutScale);
      if (!rows || !scales)
        return makeError("cannot read the stage-1 output back");
      return num::stage1FromKernelLayout(spec, *sorting, *rows, *scales, /*sortedRows=*/false);
    }();
    if (!t)
      return t.takeError();
    kernelS1 = pick(*t);
    if (ran(KernelFamily::Stage1)) {
      num::CompareOptions tol = stageTolerance(interFormat, fused);
      auto cmp = num::compareTensors(ref->stage1.out, kernelS1, ref->stage1.pairRouted, tol);
      if (!cmp)
        return cmp.takeError();
      result.stages.push_back({"stage1", *cmp, tol});
    } else {
      result.notRun.push_back("stage1"); // its output is the reference's, placed by the caller
    }
  }

  // --- inter-stage quantization, exactly the host's of the same values --------
  num::HostTensor kernelA2 = kernelS1;
  if (kernels.find(KernelFamily::QuantInter)) {
    auto got = [&]() -> llvm::Expected<num::HostTensor> {
      if (ws.decodedMx)
        return decodedRows(region(ws.interQ), {T, topk, I});
      auto rows = region(ws.interQ);
      auto shuffled = region(ws.interQScale);
      if (!rows || !shuffled)
        return makeError("cannot read the stage-2 input back");
      // The inter-stage kernel writes the layout a fused stage 1 would.
      MoeSpec layoutSpec = spec;
      layoutSpec.stage1.fusedQuant =
          spec.formats.activation == DType::MXFP4 ? FusedQuant::FP4 : FusedQuant::FP8;
      return num::stage1FromKernelLayout(layoutSpec, *sorting, *rows, *shuffled,
                                         /*sortedRows=*/false);
    }();
    if (!got)
      return got.takeError();
    num::Stage1Result fromKernel;
    fromKernel.out = kernelS1;
    auto want = num::stage2Input(spec, fromKernel);
    if (!want)
      return want.takeError();
    num::HostTensor gotChecked = pick(*got);
    auto cmp = num::compareTensors(*want, gotChecked, ref->stage1.pairRouted, exact);
    if (!cmp)
      return cmp.takeError();
    result.stages.push_back({"quant2", *cmp, exact});
    kernelA2 = std::move(gotChecked);
  }

  // --- stage 2, judged alone: the reference applied to the kernels' stage-2 A --
  // It needs every kernel before it; the layer needs them all.
  bool whole = true;
  for (KernelFamily f : {KernelFamily::Sort, KernelFamily::Stage1, KernelFamily::Stage2})
    whole = whole && ran(f);
  if (!whole) {
    result.notRun.push_back("stage2");
    result.notRun.push_back("layer");
    return result;
  }
  num::HostTensor kernelOut;
  kernelOut.format = num::ElemFormat::BF16;
  kernelOut.shape = {T, K};
  {
    auto host = download<uint8_t>(backend, args.output, T * K * 2);
    if (!host)
      return host.takeError();
    kernelOut.data = std::move(*host);
  }
  kernelOut = pick(kernelOut);
  const bool atomic = spec.stage2.reduce == ReduceMode::Atomic;
  {
    // Packed bf16 atomics round every contribution and every partial sum to
    // bf16, per-slot rows round every contribution; the reference models
    // both (atomic mode in sorted order).
    num::RefOptions opts;
    opts.sum = atomic ? num::Stage2Sum::Bf16Atomic : num::Stage2Sum::Bf16SlotRows;
    auto ref2 = num::referenceStage2(keptSpec, kernelA2, keptSorting, *in.w2, opts);
    if (!ref2)
      return ref2.takeError();
    num::CompareOptions tol = num::stage2Tolerance(atomic, topk, ref2->perSlot);
    auto cmp = num::compareTensors(ref2->out, kernelOut, {}, tol);
    if (!cmp)
      return cmp.takeError();
    result.stages.push_back({"stage2", *cmp, tol});
  }
  {
    // The whole layer: quantized intermediates may differ by a code, so the
    // bound is the intermediate format's.
    num::CompareOptions tol = layerTolerance(spec);
    auto cmp = num::compareTensors(ref->stage2.out, kernelOut, {}, tol);
    if (!cmp)
      return cmp.takeError();
    result.stages.push_back({"layer", *cmp, tol});
  }
  return result;
}

} // namespace moegen
