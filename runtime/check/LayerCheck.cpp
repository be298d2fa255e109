//===- LayerCheck.cpp - Run a compiled layer and check every stage --------===//

#include "runtime/check/LayerCheck.h"

#include "runtime/numerics/InputGen.h"
#include "runtime/numerics/KernelLayouts.h"
#include "runtime/numerics/Npy.h"
#include "runtime/numerics/Preshuffle.h"
#include "runtime/numerics/Reference.h"
#include "templates/finish/FinishKernel.h"
#include "templates/gemm/GemmPlan.h"
#include "templates/quant/QuantPlan.h"
#include "templates/reduce/ReducePlan.h"
#include "templates/sort/SortPlan.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

namespace moegen {
namespace {

using runtime::Backend;
using runtime::DevicePtr;

llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// Device buffers of one run, freed at the end.
class DeviceArena {
public:
  explicit DeviceArena(Backend &b) : b(b) {}
  ~DeviceArena() {
    for (DevicePtr p : owned)
      llvm::consumeError(b.free(p));
  }
  llvm::Expected<DevicePtr> alloc(size_t bytes, bool zero = true) {
    auto p = b.allocate(std::max<size_t>(bytes, 4));
    if (!p)
      return p.takeError();
    owned.push_back(*p);
    if (zero)
      if (llvm::Error e = b.memset(*p, 0, std::max<size_t>(bytes, 4)))
        return std::move(e);
    return *p;
  }
  template <typename T> llvm::Expected<DevicePtr> upload(const std::vector<T> &host) {
    auto p = alloc(host.size() * sizeof(T), /*zero=*/host.empty());
    if (!p)
      return p.takeError();
    if (!host.empty())
      if (llvm::Error e = b.copyToDevice(*p, host.data(), host.size() * sizeof(T)))
        return std::move(e);
    return *p;
  }
  template <typename T> llvm::Expected<std::vector<T>> download(DevicePtr p, size_t count) {
    std::vector<T> host(count);
    if (llvm::Error e = b.copyToHost(host.data(), p, count * sizeof(T)))
      return std::move(e);
    return host;
  }

private:
  Backend &b;
  std::vector<DevicePtr> owned;
};

/// Packs a kernel's arguments by name, in its signature's order.
struct ArgPack {
  const KernelSignature &sig;
  std::map<std::string, DevicePtr> pointers;
  std::map<std::string, int32_t> ints;

  llvm::Expected<std::vector<uint8_t>> pack() const {
    runtime::KernargPacker packer;
    for (const KernelArg &arg : sig.args) {
      if (arg.kind == KernelArgKind::Pointer) {
        auto it = pointers.find(arg.name);
        if (it == pointers.end())
          return makeError("no buffer for argument '" + arg.name + "' of " + sig.symbol);
        packer.add<uint64_t>(it->second);
      } else {
        auto it = ints.find(arg.name);
        if (it == ints.end())
          return makeError("no value for argument '" + arg.name + "' of " + sig.symbol);
        packer.add<int32_t>(it->second);
      }
    }
    return std::vector<uint8_t>(packer.bytes().begin(), packer.bytes().end());
  }
};

const CompiledKernel *findKernel(const CompiledLayer &layer, llvm::StringRef family) {
  for (const CompiledKernel &k : layer.kernels)
    if (k.family == family)
      return &k;
  return nullptr;
}

llvm::Error launch(Backend &b, const CompiledKernel &k, const ArgPack &args, runtime::Dim3 grid) {
  runtime::CodeBundle bundle;
  bundle.Name = k.signature.symbol;
  bundle.Hsaco.assign(k.code.hsaco.begin(), k.code.hsaco.end());
  bundle.Bitcode.assign(k.code.bitcode.begin(), k.code.bitcode.end());
  auto module = b.loadCode(bundle);
  if (!module)
    return module.takeError();
  auto kernel = b.getKernel(*module, k.signature.symbol);
  if (!kernel)
    return kernel.takeError();
  auto kernarg = args.pack();
  if (!kernarg)
    return kernarg.takeError();
  runtime::Dim3 block{static_cast<uint32_t>(k.signature.blockSize), 1, 1};
  if (llvm::Error e = b.launch(*kernel, grid, block, 0, *kernarg))
    return makeError(k.signature.symbol + ": " + llvm::toString(std::move(e)));
  return b.synchronize();
}

/// Scale rows of [experts * rows, cols] in the weight's row order (GUGU when
/// interleaved), in the e8m0_shuffle layout.
llvm::Expected<std::vector<uint8_t>> weightScales(const num::HostTensor &w, int64_t experts,
                                                  int64_t rows, bool interleave) {
  if (!num::isMx(w.format))
    return std::vector<uint8_t>(4, 0); // bf16 weights: the kernel reads no scales
  std::vector<uint8_t> scales = w.scales;
  int64_t cols = w.scaleCols();
  if (interleave) {
    auto inter = num::interleaveGateUp(scales, experts, rows, cols);
    if (!inter)
      return inter.takeError();
    scales = std::move(*inter);
  }
  return num::e8m0Shuffle(scales, experts * rows, cols);
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

} // namespace

num::CompareOptions stageTolerance(DType format, bool quantized) {
  num::CompareOptions o;
  if (!quantized) {
    // bf16 output: one rounding (2^-8 relative) plus f32 accumulation order
    // and the activation's hardware exp/rcp.
    o.rtol = 2e-2;
    o.atol = 1e-3;
    o.maxMismatch = 1e-3;
    o.maxCosineDiff = 1e-4;
    return o;
  }
  // A quantized output can land one code away when the value before
  // rounding sits at a rounding boundary: allow it on a small fraction.
  bool fp4 = format == DType::MXFP4;
  o.rtol = fp4 ? 0.34 : 0.13;
  o.atol = 1e-6;
  o.maxMismatch = 2e-2;
  o.maxCosineDiff = fp4 ? 1e-2 : 1e-3;
  return o;
}

bool LayerCheckResult::passed() const {
  for (const StageCheck &s : stages)
    if (!s.result.passed)
      return false;
  return !stages.empty();
}

std::string LayerCheckResult::table() const {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "stage    compared  mismatch  cosine-diff  rel-frob    max-abs   result\n";
  for (const StageCheck &s : stages) {
    const num::CompareResult &r = s.result;
    os << llvm::left_justify(s.stage, 7)
       << llvm::format("%10lld  %8lld  %11.3g  %8.3g  %9.3g   ", (long long)r.compared,
                       (long long)r.mismatches, r.cosineDiff, r.relFrobenius, r.maxAbs)
       << (r.passed ? "PASS" : "FAIL") << "\n";
  }
  return out;
}

template <typename T>
static llvm::Expected<std::vector<T>> readArray(llvm::StringRef dir, llvm::StringRef name,
                                                llvm::StringRef descr,
                                                llvm::ArrayRef<int64_t> shape) {
  std::string path = (dir + "/" + name + ".npy").str();
  auto a = num::readNpy(path);
  if (!a)
    return a.takeError();
  if (a->descr != descr || a->shape != std::vector<int64_t>(shape.begin(), shape.end())) {
    std::string want, got;
    for (int64_t d : shape)
      want += (want.empty() ? "" : ", ") + std::to_string(d);
    for (int64_t d : a->shape)
      got += (got.empty() ? "" : ", ") + std::to_string(d);
    return makeError(path + ": expected " + descr + " [" + want + "] for the spec, found " +
                     a->descr + " [" + got + "]");
  }
  std::vector<T> v(a->data.size() / sizeof(T));
  std::memcpy(v.data(), a->data.data(), v.size() * sizeof(T));
  return v;
}

llvm::Expected<num::LayerInputs> readLayerInputs(const MoeSpec &spec, llvm::StringRef dir) {
  const Problem &pr = spec.problem;
  num::LayerInputs in;
  auto a1 = num::readTensor(dir, "a1");
  if (!a1)
    return a1.takeError();
  if (a1->shape.size() != 2 || a1->shape[1] != pr.modelDim ||
      a1->format != num::elemFormatOf(spec.formats.activation))
    return makeError(dir + "/a1: expected [tokens, " + llvm::Twine(pr.modelDim) + "] in " +
                     toString(spec.formats.activation) + " for the spec");
  in.tokens = a1->shape[0];
  in.a1 = std::move(*a1);
  const int64_t M = in.tokens;
  auto hidden = readArray<float>(dir, "hidden", "<f4", {M, pr.modelDim});
  auto ids = readArray<int32_t>(dir, "topk_ids", "<i4", {M, pr.topk});
  auto weights = readArray<float>(dir, "topk_weights", "<f4", {M, pr.topk});
  if (!hidden)
    return hidden.takeError();
  if (!ids)
    return ids.takeError();
  if (!weights)
    return weights.takeError();
  in.hidden = std::move(*hidden);
  in.topkIds = std::move(*ids);
  in.topkWeights = std::move(*weights);
  for (auto [name, tensor, rows, cols] : {std::tuple{"w1", &in.w1, 2 * pr.interDim, pr.modelDim},
                                          std::tuple{"w2", &in.w2, pr.modelDim, pr.interDim}}) {
    auto w = num::readTensor(dir, name);
    if (!w)
      return w.takeError();
    if (w->shape != std::vector<int64_t>{pr.experts, rows, cols} ||
        w->format != num::elemFormatOf(spec.formats.weight))
      return makeError(dir + "/" + name + ": expected [" + llvm::Twine(pr.experts) + ", " +
                       llvm::Twine(rows) + ", " + llvm::Twine(cols) + "] in " +
                       toString(spec.formats.weight) + " for the spec");
    *tensor = std::move(*w);
  }
  return in;
}

llvm::Expected<LayerCheckResult> runLayerCheck(const MoeSpec &spec, const CompiledLayer &layer,
                                               Backend &backend, const LayerCheckOptions &options) {
  const Problem &pr = spec.problem;
  // Inputs: read from a reference bundle, or generated from the seed.
  auto generate = [&] {
    num::GenOptions gen;
    gen.seed = options.seed;
    gen.onlyRoutedExperts = true; // the kernels and the reference read no other expert
    return num::generateInputs(spec, options.tokens, gen);
  };
  llvm::Expected<num::LayerInputs> in =
      options.inputsDir.empty() ? generate() : readLayerInputs(spec, options.inputsDir);
  if (!in)
    return in.takeError();
  const int64_t T = in->tokens, E = pr.experts, topk = pr.topk, K = pr.modelDim, I = pr.interDim;
  const StageSchedule &s1 = spec.stage1, &s2 = spec.stage2;
  const bool interleave = pr.gateUp == GateUpLayout::Interleaved;
  const bool fused = s1.fusedQuant != FusedQuant::None;
  if (T <= 0 || T > kMaxSortTokens)
    return makeError("--tokens must be in [1, " + llvm::Twine(kMaxSortTokens) + "], got " +
                     llvm::Twine(T));
  const CompiledKernel *sortK = findKernel(layer, "sort");
  const CompiledKernel *stage1K = findKernel(layer, "stage1");
  const CompiledKernel *stage2K = findKernel(layer, "stage2");
  if (!sortK || !stage1K || !stage2K)
    return makeError("the compiled layer lacks a sort, stage1 or stage2 kernel");

  // The reference, from the spec alone.
  auto ref = num::referenceLayer(spec, in->a1, in->topkIds, in->topkWeights, in->w1, in->w2);
  if (!ref)
    return ref.takeError();

  DeviceArena dev(backend);
  LayerCheckResult result;
  result.tokens = T;
  const int64_t bm = s1.tileM;
  const int64_t paddedRows = num::maxNumTokensPadded(T, topk, E, bm);
  const int64_t maxBlocks = num::maxNumMBlocks(T, topk, E, bm);

  // --- sort ----------------------------------------------------------------
  auto ids = dev.upload(in->topkIds);
  auto weights = dev.upload(in->topkWeights);
  auto sortedIds = dev.alloc(paddedRows * 4);
  auto sortedWeights = dev.alloc(paddedRows * 4);
  auto sortedExperts = dev.alloc(maxBlocks * 4);
  auto numValid = dev.alloc(8);
  for (auto *p : {&ids, &weights, &sortedIds, &sortedWeights, &sortedExperts, &numValid})
    if (!*p)
      return p->takeError();
  ArgPack sortArgs{sortK->signature,
                   {{"topk_ids", *ids},
                    {"topk_weights", *weights},
                    {"sorted_ids", *sortedIds},
                    {"sorted_weights", *sortedWeights},
                    {"sorted_experts", *sortedExperts},
                    {"num_valid_ids", *numValid}},
                   {{"tokens", static_cast<int32_t>(T)}}};
  if (llvm::Error e = launch(backend, *sortK, sortArgs, {1, 1, 1}))
    return std::move(e);
  {
    const num::MoeSorting &want = ref->sorting;
    auto nv = dev.download<int32_t>(*numValid, 2);
    auto gotIds = dev.download<int32_t>(*sortedIds, paddedRows);
    auto gotW = dev.download<float>(*sortedWeights, paddedRows);
    auto gotE = dev.download<int32_t>(*sortedExperts, maxBlocks);
    if (!nv || !gotIds || !gotW || !gotE)
      return makeError("cannot read the sorting outputs back");
    int64_t bad = 0, compared = 2;
    bad += (*nv)[0] != want.numValidIds[0];
    bad += (*nv)[1] != want.numValidIds[1];
    int64_t used = std::min<int64_t>(want.numValidIds[0], paddedRows);
    for (int64_t i = 0; i < used; ++i, compared += 2) {
      bad += (*gotIds)[i] != want.sortedTokenIds[i];
      bad += std::memcmp(&(*gotW)[i], &want.sortedWeights[i], 4) != 0;
    }
    for (int64_t blk = 0; blk < used / bm; ++blk, ++compared)
      bad += (*gotE)[blk] != want.sortedExpertIds[blk];
    result.stages.push_back(exactCheck("sort", bad, compared));
  }

  // --- stage 1 ----------------------------------------------------------------
  // Stage-1 A: the bf16 input, quantized on the device when the activation
  // format is MX (checked exactly against the host quantization).
  std::optional<TargetInfo> target = TargetInfo::forChip("gfx950");
  ScheduleIssues planIssues;
  llvm::Expected<DevicePtr> a1 = DevicePtr(0), a1Scale = DevicePtr(0);
  if (const CompiledKernel *quantK = findKernel(layer, "quant_input")) {
    std::optional<QuantPlan> q = planInputQuant(spec, *target, planIssues);
    auto x = dev.upload(num::makeBf16({T, K}, in->hidden).data);
    a1 = dev.alloc(T * q->rowBytes());
    a1Scale = dev.alloc(q->scaleBytes(T));
    for (auto *p : {&x, &a1, &a1Scale})
      if (!*p)
        return p->takeError();
    ArgPack qArgs{quantK->signature,
                  {{"x", *x}, {"q", *a1}, {"scales", *a1Scale}},
                  {{"rows", static_cast<int32_t>(T)}}};
    auto g = q->grid(T);
    if (llvm::Error e =
            launch(backend, *quantK, qArgs, {uint32_t(g[0]), uint32_t(g[1]), uint32_t(g[2])}))
      return std::move(e);
    auto data = dev.download<uint8_t>(*a1, T * q->rowBytes());
    auto shuffled = dev.download<uint8_t>(*a1Scale, q->scaleBytes(T));
    if (!data || !shuffled)
      return makeError("cannot read the quantized input back");
    auto scales = num::e8m0Unshuffle(*shuffled, T, K / 32);
    if (!scales)
      return scales.takeError();
    num::HostTensor got{in->a1.format, in->a1.shape, std::move(*data), std::move(*scales)};
    num::CompareOptions exact;
    exact.rtol = exact.atol = 0;
    auto cmp = num::compareTensors(in->a1, got, {}, exact);
    if (!cmp)
      return cmp.takeError();
    bool sameScales = got.scales == in->a1.scales;
    cmp->passed = cmp->passed && sameScales;
    result.stages.push_back({"quant1", *cmp, exact});
  } else {
    a1 = dev.upload(in->a1.data);
    a1Scale = dev.alloc(4);
  }
  auto w1 = num::shuffleWeight16x16(in->w1.data, E, 2 * I, num::packedBytes(in->w1.format, K),
                                    interleave);
  if (!w1)
    return w1.takeError();
  auto w1Scale = weightScales(in->w1, E, 2 * I, interleave);
  if (!w1Scale)
    return w1Scale.takeError();
  auto w1Dev = dev.upload(*w1);
  auto w1ScaleDev = dev.upload(*w1Scale);
  DType interFormat = spec.formats.activation;
  int64_t out1Bytes =
      fused ? T * topk * num::packedBytes(num::elemFormatOf(interFormat), I) : T * topk * I * 2;
  int64_t scaleRows = num::e8m0ShuffledRows(paddedRows), scaleCols = num::e8m0ShuffledCols(I / 32);
  auto out1 = dev.alloc(out1Bytes);
  auto out1Scale = dev.alloc(scaleRows * scaleCols);
  for (auto *p : {&a1, &a1Scale, &w1Dev, &w1ScaleDev, &out1, &out1Scale})
    if (!*p)
      return p->takeError();
  ArgPack s1Args{stage1K->signature,
                 {{"a", *a1},
                  {"a_scale", *a1Scale},
                  {"w", *w1Dev},
                  {"w_scale", *w1ScaleDev},
                  {"sorted_ids", *sortedIds},
                  {"sorted_experts", *sortedExperts},
                  {"sorted_weights", *sortedWeights},
                  {"num_valid_ids", *numValid},
                  {"out", *out1},
                  {"out_scale", *out1Scale}},
                 {{"tokens", static_cast<int32_t>(T)}}};
  runtime::Dim3 grid1{static_cast<uint32_t>(I / s1.tileN), static_cast<uint32_t>(maxBlocks),
                      static_cast<uint32_t>(s1.kBatch)};
  const CompiledKernel *finishK = findKernel(layer, "finish");
  if (s1.kBatch > 1) {
    // Split-K: the GEMM writes f32 partials (zeroed: atomic mode adds into
    // them), the finishing kernel produces the stage-1 output.
    if (!finishK)
      return makeError("stage1 k_batch > 1 needs the finishing kernel, which is missing");
    int64_t splits = s1.kBatchMode == KBatchMode::Deterministic ? s1.kBatch : 1;
    auto partials = dev.alloc(splits * T * topk * 2 * I * 4);
    if (!partials)
      return partials.takeError();
    s1Args.pointers.erase("out");
    s1Args.pointers["partials"] = *partials;
    if (llvm::Error e = launch(backend, *stage1K, s1Args, grid1))
      return std::move(e);
    ArgPack finishArgs{finishK->signature,
                       {{"partials", *partials},
                        {"sorted_ids", *sortedIds},
                        {"sorted_weights", *sortedWeights},
                        {"num_valid_ids", *numValid},
                        {"out", *out1},
                        {"out_scale", *out1Scale}},
                       {{"tokens", static_cast<int32_t>(T)}}};
    int64_t threads = paddedRows * (I / 32);
    runtime::Dim3 gridF{static_cast<uint32_t>((threads + kFinishThreads - 1) / kFinishThreads), 1,
                        1};
    if (llvm::Error e = launch(backend, *finishK, finishArgs, gridF))
      return std::move(e);
  } else if (llvm::Error e = launch(backend, *stage1K, s1Args, grid1)) {
    return std::move(e);
  }

  num::HostTensor kernelS1;
  {
    auto rows = dev.download<uint8_t>(*out1, out1Bytes);
    if (!rows)
      return rows.takeError();
    if (fused) {
      auto scales = dev.download<uint8_t>(*out1Scale, scaleRows * scaleCols);
      if (!scales)
        return scales.takeError();
      auto t = num::stage1FromKernelLayout(spec, ref->sorting, *rows, *scales,
                                           /*sortedRows=*/false);
      if (!t)
        return t.takeError();
      kernelS1 = std::move(*t);
    } else {
      kernelS1.format = num::ElemFormat::BF16;
      kernelS1.shape = {T, topk, I};
      kernelS1.data = std::move(*rows);
    }
    num::CompareOptions tol = stageTolerance(interFormat, fused);
    auto cmp = num::compareTensors(ref->stage1.out, kernelS1, ref->stage1.pairRouted, tol);
    if (!cmp)
      return cmp.takeError();
    result.stages.push_back({"stage1", *cmp, tol});
  }

  // --- stage 2 ----------------------------------------------------------------
  // Stage-2 A: stage 1's output, or its quantization by the inter-stage kernel
  // (checked exactly against the host quantization of the same values).
  DevicePtr a2 = *out1, a2Scale = *out1Scale;
  num::HostTensor kernelA2 = kernelS1;
  if (const CompiledKernel *quantK = findKernel(layer, "quant_inter")) {
    std::optional<QuantPlan> q = planInterQuant(spec, *target, planIssues);
    auto data = dev.alloc(T * topk * q->rowBytes());
    auto scales = dev.alloc(q->scaleBytes(T));
    if (!data || !scales)
      return makeError("cannot allocate the stage-2 input");
    ArgPack qArgs{quantK->signature,
                  {{"x", *out1},
                   {"q", *data},
                   {"scales", *scales},
                   {"sorted_ids", *sortedIds},
                   {"num_valid_ids", *numValid}},
                  {{"tokens", static_cast<int32_t>(T)}}};
    auto g = q->grid(T);
    if (llvm::Error e =
            launch(backend, *quantK, qArgs, {uint32_t(g[0]), uint32_t(g[1]), uint32_t(g[2])}))
      return std::move(e);
    a2 = *data;
    a2Scale = *scales;
    auto rows = dev.download<uint8_t>(*data, T * topk * q->rowBytes());
    auto shuffled = dev.download<uint8_t>(*scales, q->scaleBytes(T));
    if (!rows || !shuffled)
      return makeError("cannot read the stage-2 input back");
    // The inter-stage kernel writes the layout a fused stage 1 would.
    MoeSpec layoutSpec = spec;
    layoutSpec.stage1.fusedQuant =
        spec.formats.activation == DType::MXFP4 ? FusedQuant::FP4 : FusedQuant::FP8;
    auto got = num::stage1FromKernelLayout(layoutSpec, ref->sorting, *rows, *shuffled,
                                           /*sortedRows=*/false);
    if (!got)
      return got.takeError();
    num::Stage1Result fromKernel;
    fromKernel.out = kernelS1;
    auto want = num::stage2Input(spec, fromKernel);
    if (!want)
      return want.takeError();
    num::CompareOptions exact;
    exact.rtol = exact.atol = 0;
    auto cmp = num::compareTensors(*want, *got, ref->stage1.pairRouted, exact);
    if (!cmp)
      return cmp.takeError();
    result.stages.push_back({"quant2", *cmp, exact});
    kernelA2 = std::move(*got);
  }
  auto w2 = num::shuffleWeight16x16(in->w2.data, E, K, num::packedBytes(in->w2.format, I));
  if (!w2)
    return w2.takeError();
  auto w2Scale = weightScales(in->w2, E, K, /*interleave=*/false);
  if (!w2Scale)
    return w2Scale.takeError();
  auto w2Dev = dev.upload(*w2);
  auto w2ScaleDev = dev.upload(*w2Scale);
  bool atomic = s2.reduce == ReduceMode::Atomic;
  int64_t out2Elems = atomic ? T * K : T * topk * K;
  auto out2 = dev.alloc(out2Elems * 2);
  for (auto *p : {&w2Dev, &w2ScaleDev, &out2})
    if (!*p)
      return p->takeError();
  ArgPack s2Args{stage2K->signature,
                 {{"a", a2},
                  {"a_scale", a2Scale},
                  {"w", *w2Dev},
                  {"w_scale", *w2ScaleDev},
                  {"sorted_ids", *sortedIds},
                  {"sorted_experts", *sortedExperts},
                  {"sorted_weights", *sortedWeights},
                  {"num_valid_ids", *numValid},
                  {"out", *out2}},
                 {{"tokens", static_cast<int32_t>(T)}}};
  GemmPlan plan2 = planGemm(spec, StageId::Stage2, *target, planIssues);
  runtime::Dim3 grid2{static_cast<uint32_t>(K / s2.tileN),
                      static_cast<uint32_t>(plan2.gridM(maxBlocks)),
                      static_cast<uint32_t>(s2.kBatch)};
  if (llvm::Error e = launch(backend, *stage2K, s2Args, grid2))
    return std::move(e);
  num::HostTensor kernelOut;
  kernelOut.format = num::ElemFormat::BF16;
  kernelOut.shape = {T, K};
  if (atomic) {
    auto host = dev.download<uint8_t>(*out2, out2Elems * 2);
    if (!host)
      return host.takeError();
    kernelOut.data = std::move(*host);
  } else {
    // Per-slot rows: the reduction kernel sums the top-k slots of each token.
    const CompiledKernel *reduceK = findKernel(layer, "reduce");
    if (!reduceK)
      return makeError("reduce=reduce needs the reduction kernel, which is missing");
    std::optional<ReducePlan> r = planReduce(spec, *target, planIssues);
    auto summed = dev.alloc(T * K * 2);
    if (!summed)
      return summed.takeError();
    ArgPack rArgs{reduceK->signature,
                  {{"slot_rows", *out2}, {"topk_ids", *ids}, {"out", *summed}},
                  {{"tokens", static_cast<int32_t>(T)}}};
    auto g = r->grid(T);
    if (llvm::Error e =
            launch(backend, *reduceK, rArgs, {uint32_t(g[0]), uint32_t(g[1]), uint32_t(g[2])}))
      return std::move(e);
    auto host = dev.download<uint8_t>(*summed, T * K * 2);
    if (!host)
      return host.takeError();
    kernelOut.data = std::move(*host);
  }
  {
    // Packed bf16 atomics round every contribution and every partial sum to
    // bf16, per-slot rows round every contribution; the reference models
    // both (atomic mode in sorted order).
    num::RefOptions opts;
    opts.sum = atomic ? num::Stage2Sum::Bf16Atomic : num::Stage2Sum::Bf16SlotRows;
    auto ref2 = num::referenceStage2(spec, kernelA2, ref->sorting, in->w2, opts);
    if (!ref2)
      return ref2.takeError();
    num::CompareOptions tol = stageTolerance(DType::BF16, false);
    if (atomic) {
      // Atomics add in an order the hardware picks; every partial sum is a
      // bf16, so each of the topk additions may round differently by half
      // an ulp of the largest contribution.
      double largest = 0;
      for (float v : num::decode(ref2->perSlot))
        largest = std::max(largest, std::fabs(double(v)));
      tol.atol = std::max(tol.atol, topk * std::ldexp(largest, -8));
    }
    auto cmp = num::compareTensors(ref2->out, kernelOut, {}, tol);
    if (!cmp)
      return cmp.takeError();
    result.stages.push_back({"stage2", *cmp, tol});
  }
  {
    // The whole layer: quantized intermediates may differ by a code, so the
    // bound is the intermediate format's.
    num::CompareOptions tol = stageTolerance(interFormat, fused);
    tol.maxCosineDiff = fused ? (interFormat == DType::MXFP4 ? 1e-2 : 1e-3) : 1e-4;
    tol.rtol = fused ? 0.25 : 5e-2;
    tol.atol = 1e-2;
    tol.maxMismatch = 5e-2;
    auto cmp = num::compareTensors(ref->stage2.out, kernelOut, {}, tol);
    if (!cmp)
      return cmp.takeError();
    result.stages.push_back({"layer", *cmp, tol});
  }
  return result;
}

} // namespace moegen
