//===- GemmCheck.cpp - The GEMM stages of a layer on a CUDA device --------===//

#include "tools/cuda-check/GemmCheck.h"

#include "runtime/api/FamilyLaunchers.h"
#include "runtime/check/DeviceArena.h"
#include "runtime/numerics/ExpertSubset.h"
#include "runtime/numerics/InputGen.h"
#include "runtime/numerics/KernelLayouts.h"
#include "runtime/numerics/Preshuffle.h"
#include "runtime/numerics/Reference.h"
#include "runtime/numerics/StageTolerance.h"
#include "templates/LayerPlan.h"
#include "templates/gemm/GemmPlan.h"

#include "llvm/Support/Format.h"

#include <cmath>
#include <cstring>

namespace moegen {
namespace {

using runtime::ArgValue;
using runtime::Backend;
using runtime::DevicePtr;

llvm::Error fail(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// Copies `bytes` of `data` to `p` (nothing when `bytes` is 0).
llvm::Error copyIn(Backend &backend, DevicePtr p, const void *data, size_t bytes) {
  return bytes ? backend.copyToDevice(p, data, bytes) : llvm::Error::success();
}

/// The `bytes` at `p`.
llvm::Expected<std::vector<uint8_t>> copyOut(Backend &backend, DevicePtr p, size_t bytes) {
  std::vector<uint8_t> host(bytes);
  if (llvm::Error e = backend.copyToHost(host.data(), p, bytes))
    return std::move(e);
  return host;
}

/// The rows of tokens `picked` of a [T, ...] tensor whose token has
/// `rowsPerToken` rows (data and MX scales).
num::HostTensor pickTokens(const num::HostTensor &t, llvm::ArrayRef<int64_t> picked,
                           int64_t rowsPerToken) {
  num::HostTensor out;
  out.format = t.format;
  out.shape = t.shape;
  out.shape[0] = static_cast<int64_t>(picked.size());
  int64_t rowBytes = num::packedBytes(t.format, t.cols());
  int64_t scaleCols = num::isMx(t.format) ? t.scaleCols() : 0;
  for (int64_t tok : picked)
    for (int64_t r = tok * rowsPerToken; r < (tok + 1) * rowsPerToken; ++r) {
      out.data.insert(out.data.end(), t.data.begin() + r * rowBytes,
                      t.data.begin() + (r + 1) * rowBytes);
      if (scaleCols)
        out.scales.insert(out.scales.end(), t.scales.begin() + r * scaleCols,
                          t.scales.begin() + (r + 1) * scaleCols);
    }
  return out;
}

/// The tokens the reference runs on: all, or `cap` evenly spaced ones
/// (first and last included).
std::vector<int64_t> sampleTokens(int64_t tokens, int64_t cap) {
  std::vector<int64_t> picked;
  if (tokens <= cap) {
    for (int64_t t = 0; t < tokens; ++t)
      picked.push_back(t);
    return picked;
  }
  for (int64_t i = 0; i < cap; ++i)
    picked.push_back(i * (tokens - 1) / (cap - 1));
  return picked;
}

struct StageLine {
  std::string symbol;
  num::CompareResult cmp;
  double us = 0;
  int64_t sampled = 0;
};

class GemmCase {
public:
  GemmCase(Backend &backend, const MoeSpec &spec, const GemmCheckOptions &opts,
           const TargetInfo &target, const runtime::KernelSet &set,
           const runtime::FamilyLaunchers &launchers)
      : backend(backend), spec(spec), opts(opts), target(target), set(set), launchers(launchers),
        dev(backend, /*minBytes=*/256) {}

  llvm::Expected<std::vector<StageLine>> run(int64_t T,
                                             llvm::ArrayRef<runtime::KernelHandle *> kernels);

private:
  Backend &backend;
  const MoeSpec &spec;
  const GemmCheckOptions &opts;
  const TargetInfo &target;
  const runtime::KernelSet &set;
  const runtime::FamilyLaunchers &launchers;
  DeviceArena dev;
  std::array<DevicePtr, size_t(ArgValue::Count)> values{};

  /// Launches `family`'s kernel with its launcher's grid and bindings.
  llvm::Expected<std::function<llvm::Error()>> prepare(KernelFamily family,
                                                       const runtime::KernelHandle &kernel,
                                                       const runtime::WorkspaceLayout &ws,
                                                       int64_t T);
};

llvm::Expected<std::function<llvm::Error()>> GemmCase::prepare(KernelFamily family,
                                                               const runtime::KernelHandle &kernel,
                                                               const runtime::WorkspaceLayout &ws,
                                                               int64_t T) {
  auto launch = launchers[size_t(family)](spec, set, target);
  if (!launch)
    return launch.takeError();
  ScheduleIssues issues;
  StageId stage = family == KernelFamily::Stage1 ? StageId::Stage1 : StageId::Stage2;
  GemmPlan plan = planGemm(spec, stage, target, issues);
  KernelSignature sig = gemmKernelSignature(gemmKernelSymbol(spec, plan), spec, plan);
  runtime::KernargPacker args;
  for (const KernelArg &arg : sig.args) {
    std::optional<ArgValue> v = runtime::bindingOf(*launch, arg.name);
    if (!v)
      return fail("argument '" + arg.name + "' of " + sig.symbol + " has no binding");
    if (*v == ArgValue::Tokens)
      args.add(static_cast<int32_t>(T));
    else
      args.add(static_cast<uint64_t>(values[size_t(*v)]));
  }
  runtime::LaunchShape shape{T, ws, opts.smCount * kPersistentWorkgroupsPerCU};
  runtime::Dim3 grid = launch->grid(shape);
  runtime::Dim3 block{static_cast<uint32_t>(sig.blockSize), 1, 1};
  std::vector<uint8_t> bytes(args.bytes().begin(), args.bytes().end());
  uint32_t dynamicShared = static_cast<uint32_t>(sig.dynamicSharedBytes);
  return std::function<llvm::Error()>(
      [this, &kernel, grid, block, dynamicShared, bytes]() -> llvm::Error {
        return backend.launch(kernel, grid, block, dynamicShared, bytes);
      });
}

llvm::Expected<std::vector<StageLine>>
GemmCase::run(int64_t T, llvm::ArrayRef<runtime::KernelHandle *> kernels) {
  const Problem &pr = spec.problem;
  const int64_t topk = pr.topk, K = pr.modelDim, I = pr.interDim;
  const bool fused = spec.stage1.fusedQuant != FusedQuant::None;
  const bool atomic = spec.stage2.reduce == ReduceMode::Atomic;
  num::GenOptions gen;
  gen.seed = opts.seed;
  gen.onlyRoutedExperts = true; // the kernels and the reference read no other expert
  gen.compactExperts = true;
  auto in = num::generateInputs(spec, T, gen);
  if (!in)
    return in.takeError();
  auto sorting = num::sortMoe(in->topkIds, in->topkWeights, T, topk, pr.experts, spec.stage1.tileM);
  if (!sorting)
    return sorting.takeError();

  // The workspace as MoeLayer lays it out, poisoned; what the layer clears
  // before its kernels (scales, the atomic output) cleared.
  runtime::LayerPlan lp = runtime::LayerPlan::make(spec, set, target);
  runtime::WorkspaceLayout ws = lp.layout(T);
  auto wsp = dev.alloc(ws.total, /*zero=*/true, 0xA5);
  auto out = dev.alloc(T * K * 2, /*zero=*/true, 0xA5);
  if (!wsp || !out)
    return fail("allocating: " + llvm::toString(!wsp ? wsp.takeError() : out.takeError()));
  auto region = [&](const runtime::WorkspaceRegion &r) { return r.bytes ? *wsp + r.offset : 0; };
  for (const runtime::WorkspaceRegion *r :
       {&ws.inputQScale, &ws.noScale, &ws.partials, &ws.stage1OutScale, &ws.interQScale})
    if (r->zeroed && r->bytes)
      if (llvm::Error e = backend.memset(*wsp + r->offset, 0, r->bytes))
        return std::move(e);
  if (lp.atomicOutput())
    if (llvm::Error e = backend.memset(*out, 0, T * K * 2))
      return std::move(e);
  values[size_t(ArgValue::Output)] = *out;
  values[size_t(ArgValue::SortedIds)] = region(ws.sortedIds);
  values[size_t(ArgValue::SortedWeights)] = region(ws.sortedWeights);
  values[size_t(ArgValue::SortedExperts)] = region(ws.sortedExperts);
  values[size_t(ArgValue::NumValidIds)] = region(ws.numValidIds);
  values[size_t(ArgValue::InputQ)] = region(ws.inputQ);
  values[size_t(ArgValue::InputQScale)] = region(ws.inputQScale);
  values[size_t(ArgValue::NoScale)] = region(ws.noScale);
  values[size_t(ArgValue::Partials)] = region(ws.partials);
  values[size_t(ArgValue::Stage1Out)] = region(ws.stage1Out);
  values[size_t(ArgValue::Stage1OutScale)] = region(ws.stage1OutScale);
  values[size_t(ArgValue::InterQ)] = region(ws.interQ);
  values[size_t(ArgValue::InterQScale)] = region(ws.interQScale);
  values[size_t(ArgValue::SlotRows)] = region(ws.slotRows);
  values[size_t(ArgValue::StageReady)] = region(ws.stageReady);

  // The sorting kernel's outputs, from the reference sorting.
  const num::MoeSorting &so = *sorting;
  int64_t rows = std::min<int64_t>(so.sortedTokenIds.size(), ws.maxPaddedRows);
  int64_t blocks = std::min<int64_t>(so.sortedExpertIds.size(), ws.maxBlocks);
  llvm::Error put = copyIn(backend, region(ws.sortedIds), so.sortedTokenIds.data(), rows * 4);
  put = llvm::joinErrors(
      std::move(put), copyIn(backend, region(ws.sortedWeights), so.sortedWeights.data(), rows * 4));
  put = llvm::joinErrors(std::move(put), copyIn(backend, region(ws.sortedExperts),
                                                so.sortedExpertIds.data(), blocks * 4));
  put = llvm::joinErrors(std::move(put), copyIn(backend, region(ws.numValidIds), so.numValidIds,
                                                sizeof(so.numValidIds)));
  // And each block's stage 1 N tiles to count down (stagesOverlap).
  std::vector<int32_t> ready(ws.stageReady.bytes / 4, static_cast<int32_t>(ws.stageReadyCount));
  put = llvm::joinErrors(std::move(put),
                         copyIn(backend, region(ws.stageReady), ready.data(), ready.size() * 4));
  // Stage 1's A: the quantization kernel's output (the host's, which it
  // equals exactly: its decoded values where they are carried decoded) or
  // the bf16 input.
  if (lp.quantInput && ws.decodedMx) {
    num::HostTensor decoded = num::makeBf16({T, K}, num::decode(in->a1));
    put = llvm::joinErrors(std::move(put), copyIn(backend, region(ws.inputQ), decoded.data.data(),
                                                  decoded.data.size()));
  } else if (lp.quantInput) {
    std::vector<uint8_t> scales = num::e8m0Shuffle(in->a1.scales, T, K / 32);
    put = llvm::joinErrors(
        std::move(put), copyIn(backend, region(ws.inputQ), in->a1.data.data(), in->a1.data.size()));
    put = llvm::joinErrors(std::move(put),
                           copyIn(backend, region(ws.inputQScale), scales.data(),
                                  std::min<size_t>(scales.size(), ws.inputQScale.bytes)));
  } else {
    num::HostTensor hidden = num::makeBf16({T, K}, in->hidden);
    auto h = dev.alloc(hidden.data.size());
    if (!h)
      return h.takeError();
    values[size_t(ArgValue::Hidden)] = *h;
    put = llvm::joinErrors(std::move(put),
                           copyIn(backend, *h, hidden.data.data(), hidden.data.size()));
  }
  if (put)
    return std::move(put);
  const num::PackedSizes sizes = num::packedSizes(spec);
  for (auto [v, bytes] : {std::pair{ArgValue::W1, sizes.w1},
                          {ArgValue::W1Scale, sizes.w1Scale},
                          {ArgValue::W2, sizes.w2},
                          {ArgValue::W2Scale, sizes.w2Scale}}) {
    auto p = dev.alloc(bytes);
    if (!p)
      return p.takeError();
    values[size_t(v)] = *p;
  }
  auto sink = [&](num::PackedBuffer which, int64_t offset,
                  llvm::ArrayRef<uint8_t> bytes) -> llvm::Error {
    ArgValue v = which == num::PackedBuffer::W1        ? ArgValue::W1
                 : which == num::PackedBuffer::W1Scale ? ArgValue::W1Scale
                 : which == num::PackedBuffer::W2      ? ArgValue::W2
                                                       : ArgValue::W2Scale;
    return copyIn(backend, values[size_t(v)] + offset, bytes.data(), bytes.size());
  };
  if (llvm::Error e = num::packExperts(spec, in->w1, in->w2, in->experts, sink))
    return std::move(e);

  // Both stages, in the layer's order, then read back.
  auto s1 = prepare(KernelFamily::Stage1, *kernels[0], ws, T);
  if (!s1)
    return s1.takeError();
  auto s2 = prepare(KernelFamily::Stage2, *kernels[1], ws, T);
  if (!s2)
    return s2.takeError();
  if (llvm::Error e = (*s1)())
    return std::move(e);
  if (llvm::Error e = (*s2)())
    return std::move(e);
  if (llvm::Error e = backend.synchronize())
    return std::move(e);
  auto s1Rows = copyOut(backend, region(ws.stage1Out), ws.stage1Out.bytes);
  if (!s1Rows)
    return s1Rows.takeError();
  num::HostTensor kernelS1;
  if (fused && !ws.decodedMx) {
    auto scales = copyOut(backend, region(ws.stage1OutScale), ws.stage1OutScale.bytes);
    if (!scales)
      return scales.takeError();
    auto t = num::stage1FromKernelLayout(spec, so, *s1Rows, *scales, /*sortedRows=*/false);
    if (!t)
      return t.takeError();
    kernelS1 = std::move(*t);
  } else {
    s1Rows->resize(T * topk * I * 2);
    kernelS1 = {num::ElemFormat::BF16, {T, topk, I}, std::move(*s1Rows), {}};
  }
  bool perSlot = !atomic;
  auto s2Out = perSlot ? copyOut(backend, region(ws.slotRows), T * topk * K * 2)
                       : copyOut(backend, *out, T * K * 2);
  if (!s2Out)
    return s2Out.takeError();

  // The reference on the sampled tokens and the kept experts.
  std::vector<int64_t> picked = sampleTokens(T, opts.sampleTokens);
  const int64_t S = static_cast<int64_t>(picked.size());
  std::vector<int32_t> ids;
  std::vector<float> weights;
  for (int64_t t : picked)
    for (int64_t k = 0; k < topk; ++k) {
      ids.push_back(in->topkIds[t * topk + k]);
      weights.push_back(in->topkWeights[t * topk + k]);
    }
  auto subSorting = num::sortMoe(ids, weights, S, topk, pr.experts, spec.stage1.tileM);
  if (!subSorting)
    return subSorting.takeError();
  auto kept = num::renumberExperts(*subSorting, in->experts);
  if (!kept)
    return kept.takeError();
  MoeSpec keptSpec = spec;
  keptSpec.problem.experts = static_cast<int64_t>(in->experts.size());
  num::HostTensor a1 = pickTokens(in->a1, picked, 1);
  auto ref1 = num::referenceStage1(keptSpec, a1, *kept, in->w1);
  if (!ref1)
    return ref1.takeError();
  std::vector<StageLine> lines(2);
  lines[0].sampled = lines[1].sampled = S;
  num::HostTensor gotS1 = pickTokens(kernelS1, picked, topk);
  auto cmp1 = num::compareTensors(ref1->out, gotS1, ref1->pairRouted,
                                  num::stageTolerance(spec.formats.activation, fused));
  if (!cmp1)
    return cmp1.takeError();
  lines[0].cmp = *cmp1;

  // Stage 2 judged alone: the reference applied to the kernel's stage-1 rows.
  num::RefOptions ro;
  ro.sum = atomic ? num::Stage2Sum::Bf16Atomic : num::Stage2Sum::Bf16SlotRows;
  auto ref2 = num::referenceStage2(keptSpec, gotS1, *kept, in->w2, ro);
  if (!ref2)
    return ref2.takeError();
  num::CompareOptions tol2 = num::stage2Tolerance(atomic, topk, ref2->perSlot);
  num::HostTensor got2{num::ElemFormat::BF16,
                       perSlot ? std::vector<int64_t>{T, topk, K} : std::vector<int64_t>{T, K},
                       std::move(*s2Out),
                       {}};
  got2 = pickTokens(got2, picked, perSlot ? topk : 1);
  auto cmp2 = perSlot ? num::compareTensors(ref2->perSlot, got2, ref1->pairRouted, tol2)
                      : num::compareTensors(ref2->out, got2, {}, tol2);
  if (!cmp2)
    return cmp2.takeError();
  lines[1].cmp = *cmp2;

  if (opts.time) {
    for (int i = 0; i < 2; ++i) {
      auto us = opts.time(i == 0 ? *s1 : *s2);
      if (!us)
        return us.takeError();
      lines[i].us = *us;
    }
  }
  return lines;
}

} // namespace

GemmCheckSummary checkGemmStages(Backend &backend, const MoeSpec &spec,
                                 const GemmCheckOptions &opts, llvm::raw_ostream &os) {
  GemmCheckSummary sum;
  TargetInfo target = *TargetInfo::forChip(TargetInfo::kHopperChip);
  ScheduleIssues issues;
  std::vector<PlannedKernel> planned = planLayerKernels(spec, target, issues);
  // The layer's kernel set as MoeLayer would hold it: which families exist
  // decides the launchers' bindings (a quantization before stage 1, ...).
  runtime::KernelSet set;
  for (const PlannedKernel &k : planned) {
    auto bin = std::make_shared<cache::KernelBinary>();
    bin->meta.family = k.family;
    bin->meta.symbol = k.signature.symbol;
    bin->meta.blockSize = k.signature.blockSize;
    set.kernels.push_back(bin);
  }
  std::string symbols[2];
  for (const PlannedKernel &k : planned)
    if (k.family == KernelFamily::Stage1 || k.family == KernelFamily::Stage2)
      symbols[k.family == KernelFamily::Stage2] = k.signature.symbol;
  if (set.find(KernelFamily::QuantInter)) {
    os << "stage1/stage2 not checked: stage 2 reads the inter-stage quantization "
          "(set stage1.fused_quant)\n";
    return sum;
  }
  std::vector<std::unique_ptr<runtime::KernelHandle>> handles;
  for (const std::string &symbol : symbols) {
    auto ptx = opts.readPtx(symbol);
    if (!ptx) {
      os << llvm::format("%-50s not checked: ", symbol.c_str()) << llvm::toString(ptx.takeError())
         << "\n";
      return sum;
    }
    runtime::CodeBundle bundle;
    bundle.Hsaco.assign(ptx->begin(), ptx->end());
    bundle.Name = symbol;
    auto module = backend.loadCode(bundle);
    auto kernel = module ? backend.getKernel(*module, symbol)
                         : llvm::Expected<runtime::KernelHandle>(module.takeError());
    if (!kernel) {
      os << symbol << ": " << llvm::toString(kernel.takeError()) << "\n";
      sum.ok = false;
      return sum;
    }
    handles.push_back(std::make_unique<runtime::KernelHandle>(*kernel));
  }
  runtime::FamilyLaunchers launchers = runtime::builtinLaunchers();
  for (int64_t T : opts.tokens) {
    GemmCase c(backend, spec, opts, target, set, launchers);
    auto lines = c.run(T, {handles[0].get(), handles[1].get()});
    sum.checked += 2;
    if (!lines) {
      os << llvm::format("%-50s tokens %6lld  ERROR ", symbols[0].c_str(), (long long)T)
         << llvm::toString(lines.takeError()) << "\n";
      sum.ok = false;
      continue;
    }
    for (int i = 0; i < 2; ++i) {
      const StageLine &l = (*lines)[i];
      const num::CompareResult &r = l.cmp;
      sum.ok &= r.passed;
      os << llvm::format("%-50s tokens %6lld  compared %9lld (%lld tokens)  mismatch %6lld  "
                         "cos-diff %.3g  max abs %.3g  %s",
                         symbols[i].c_str(), (long long)T, (long long)r.compared,
                         (long long)l.sampled, (long long)r.mismatches, r.cosineDiff, r.maxAbs,
                         r.passed ? "PASS" : "FAIL");
      if (r.nonFinite)
        os << "  non-finite " << r.nonFinite;
      if (l.us > 0)
        os << llvm::format("  %.2f us/launch", l.us);
      os << "\n";
    }
  }
  return sum;
}

} // namespace moegen
