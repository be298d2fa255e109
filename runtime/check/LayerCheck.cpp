//===- LayerCheck.cpp - Run a compiled layer and check every stage --------===//

#include "runtime/check/LayerCheck.h"

#include "compiler/spec/SpecLimits.h"
#include "runtime/api/MoeLayer.h"
#include "runtime/check/DeviceArena.h"
#include "runtime/numerics/ExpertSubset.h"
#include "runtime/numerics/InputGen.h"
#include "runtime/numerics/Npy.h"
#include "runtime/numerics/Preshuffle.h"
#include "runtime/numerics/Reference.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace moegen {
namespace {

using runtime::Backend;
using runtime::DevicePtr;

llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// After a run of the sort, stage 1 and, where it counts down, the
/// inter-stage quantization (stagesOverlap): every sorted block of an expert
/// has its stage_ready counter down to zero, stage 1 having counted down
/// exactly its N tiles and the quantization its one. Stage 2 waits for zero
/// there; a count that falls short would make it wait for the grid before it
/// after its last try (correct but slow, so the results alone would not
/// show it).
llvm::Error checkStageReadyDrained(runtime::Backend &backend, const runtime::LayerArgs &args,
                                   const runtime::WorkspaceLayout &ws, int64_t experts) {
  if (!ws.stageReady.bytes)
    return llvm::Error::success();
  auto read = [&](const runtime::WorkspaceRegion &r, size_t count) {
    std::vector<int32_t> v(count);
    llvm::Error e = backend.copyToHost(v.data(), args.workspace + r.offset, count * 4);
    return std::make_pair(std::move(e), std::move(v));
  };
  auto [e0, numValid] = read(ws.numValidIds, 1);
  if (e0)
    return std::move(e0);
  int64_t blocks = std::min<int64_t>((int64_t(numValid[0]) + ws.blockM - 1) / ws.blockM,
                                     int64_t(ws.stageReady.bytes / 4));
  if (blocks <= 0)
    return llvm::Error::success();
  auto [e1, expertOf] = read(ws.sortedExperts, size_t(blocks));
  if (e1)
    return std::move(e1);
  auto [e2, ready] = read(ws.stageReady, size_t(blocks));
  if (e2)
    return std::move(e2);
  for (int64_t b = 0; b < blocks; ++b)
    if (expertOf[b] >= 0 && expertOf[b] < experts && ready[b] != 0)
      return makeError("stage_ready of sorted block " + llvm::Twine(b) + " (expert " +
                       llvm::Twine(expertOf[b]) + ") is " + llvm::Twine(ready[b]) +
                       " after the layer, not 0: " + llvm::Twine(ws.stageReadyCount - ready[b]) +
                       " of its " + llvm::Twine(ws.stageReadyCount) + " counted down (stage 1's " +
                       llvm::Twine(ws.stageReadyCount - ws.stageReadyQuant) + " N tiles" +
                       (ws.stageReadyQuant ? ", the inter-stage quantization's 1)" : ")"));
  return llvm::Error::success();
}

} // namespace

static float quantile(std::vector<float> v, bool median) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  if (!median)
    return v.front();
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

float LayerTiming::medianMs() const { return quantile(runsMs, true); }
float LayerTiming::minMs() const { return quantile(runsMs, false); }
float LayerTiming::medianGraphCallMs() const { return quantile(graphCallMs, true); }
float LayerTiming::medianMsOf(llvm::function_ref<bool(const runtime::RunStep &)> pick) const {
  std::vector<float> sums;
  for (const std::vector<float> &run : stepMs) {
    float sum = 0;
    for (size_t i = 0; i < run.size() && i < steps.size(); ++i)
      if (pick(steps[i]))
        sum += run[i];
    sums.push_back(sum);
  }
  return quantile(sums, true);
}

std::string LayerTiming::stepTable() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  float total = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    std::vector<float> runs;
    for (const std::vector<float> &run : stepMs)
      if (i < run.size())
        runs.push_back(run[i]);
    float ms = quantile(runs, true);
    total += ms;
    std::string name = (steps[i].kind == runtime::RunStep::Kind::Clear ? "clear before " : "") +
                       toString(steps[i].family).str();
    os << llvm::format("  %-28s %9.4f ms\n", name.c_str(), ms);
  }
  os << llvm::format("  %-28s %9.4f ms\n", "sum of the step medians", total);
  return text;
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

std::string generatedInputsOf(const LayerCheckOptions &options) {
  std::string out = "seed " + std::to_string(options.seed);
  if (options.weightScale != 1.0)
    out += llvm::formatv(", weights x{0}", options.weightScale).str();
  return out;
}

runtime::LayerOptions layerOptionsOf(const LayerCheckOptions &options) {
  runtime::LayerOptions layer;
  layer.cuNum = options.cuNum;
  layer.target = options.target;
  layer.families = options.families;
  layer.tunedTables = options.tunedTables;
  return layer;
}

/// The input quantization's output for `a1` (the reference's MX activations,
/// [tokens, model_dim]) in its workspace layout: bf16 rows of the decoded
/// values where MX activations are carried decoded, else the packed codes
/// and the preshuffled e8m0 scales.
template <typename Put>
static llvm::Error placeQuantizedInput(Put &put, const runtime::WorkspaceLayout &ws,
                                       const num::HostTensor &a1) {
  const int64_t T = a1.shape[0], K = a1.shape[1];
  if (ws.decodedMx) {
    num::HostTensor rows = num::makeBf16({T, K}, num::decode(a1));
    return put(ws.inputQ, rows.data.data(), rows.data.size());
  }
  std::vector<uint8_t> scales = num::e8m0Shuffle(a1.scales, T, K / 32);
  return llvm::joinErrors(put(ws.inputQ, a1.data.data(), a1.data.size()),
                          put(ws.inputQScale, scales.data(), scales.size()));
}

std::string kernelResourceTable(llvm::ArrayRef<runtime::TierKernel> kernels) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::formatv("kernel resources ({0}):\n",
                      kernels.empty() ? "none" : kernels.front().source.c_str());
  os << "  family       registers  local-bytes  static-shared  dynamic-shared  block  symbol\n";
  for (const runtime::TierKernel &k : kernels) {
    const runtime::KernelResources &r = k.resources;
    os << llvm::format("  %-11s  %9lld  %11lld  %13lld  %14u  %5u  %s\n",
                       toString(k.family).str().c_str(), (long long)r.registers,
                       (long long)r.localBytes, (long long)r.staticSharedBytes,
                       k.dynamicSharedBytes, k.blockSize, k.symbol.c_str());
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

std::shared_ptr<const num::LayerInputs> GeneratedInputsCache::find(llvm::StringRef wanted) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!inputs || key != wanted) {
    inputs.reset();
    return nullptr;
  }
  ++found;
  return inputs;
}

void GeneratedInputsCache::keep(std::string k, std::shared_ptr<const num::LayerInputs> in) {
  std::lock_guard<std::mutex> lock(mutex);
  key = std::move(k);
  inputs = std::move(in);
}

int64_t GeneratedInputsCache::hits() const {
  std::lock_guard<std::mutex> lock(mutex);
  return found;
}

DeviceWeightsCache::~DeviceWeightsCache() { release(); }

void DeviceWeightsCache::release() {
  for (DevicePtr p : owned)
    llvm::consumeError(backend->free(p));
  owned.clear();
  sets.clear();
  key.clear();
}

llvm::Expected<DeviceWeightsCache::Set>
DeviceWeightsCache::get(Backend &b, llvm::StringRef wanted, size_t index,
                        const num::PackedSizes &sizes,
                        llvm::function_ref<llvm::Error(const Set &)> pack) {
  if (backend != &b || key != wanted) {
    if (backend)
      release();
    backend = &b;
    key = wanted.str();
  }
  if (index < sets.size()) {
    ++found;
    return sets[index];
  }
  if (index != sets.size())
    return makeError("DeviceWeightsCache: copy " + llvm::Twine(index) + " asked before copy " +
                     llvm::Twine(sets.size()));
  Set set;
  std::vector<DevicePtr> allocated;
  auto alloc = [&](DevicePtr &field, int64_t bytes) -> llvm::Error {
    const size_t n = static_cast<size_t>(std::max<int64_t>(bytes, 4));
    auto p = b.allocate(n);
    if (!p)
      return p.takeError();
    allocated.push_back(*p);
    field = *p;
    return b.memset(*p, 0, n);
  };
  llvm::Error e = llvm::Error::success();
  for (auto [field, bytes] : {std::pair<DevicePtr *, int64_t>{&set.w1, sizes.w1},
                              {&set.w1Scale, sizes.w1Scale},
                              {&set.w2, sizes.w2},
                              {&set.w2Scale, sizes.w2Scale}})
    if (!e)
      e = alloc(*field, bytes);
  if (!e)
    e = pack(set);
  if (e) {
    for (DevicePtr p : allocated)
      llvm::consumeError(b.free(p));
    return std::move(e);
  }
  owned.insert(owned.end(), allocated.begin(), allocated.end());
  sets.push_back(set);
  return set;
}

/// What generated inputs depend on (num::generateInputs reads the problem
/// and the formats), with the token count, the seed and the weight scale
/// (its bits: no two scales share a key).
static std::string generatedInputsKey(const MoeSpec &spec, int64_t tokens, uint64_t seed,
                                      double weightScale) {
  const Problem &p = spec.problem;
  return llvm::formatv("{0} {1} {2} {3} {4} {5} {6} {7} {8} {9}", p.modelDim, p.interDim, p.experts,
                       p.topk, static_cast<int>(p.gateUp), toString(spec.formats.activation),
                       toString(spec.formats.weight), tokens, seed,
                       llvm::bit_cast<uint64_t>(weightScale))
      .str();
}

llvm::Expected<LayerCheckResult> runLayerCheck(const MoeSpec &layerSpec, Backend &backend,
                                               const LayerCheckOptions &options) {
  // Until the tier's schedules are known, only the problem and the formats
  // are read (the same in every schedule).
  const Problem &pr = layerSpec.problem;
  // Inputs: read from a reference bundle, or generated from the seed.
  if (options.inputsDir.empty())
    if (llvm::Error e = checkTokenCount(options.tokens, "tokens"))
      return std::move(e);
  if (!(options.weightScale > 0.0 && options.weightScale <= kMaxWeightScale))
    return makeError(llvm::formatv("weight scale {0} is not in (0, {1}]: it multiplies the "
                                   "generated weights' standard deviations",
                                   options.weightScale, kMaxWeightScale));
  if (!options.inputsDir.empty() && options.weightScale != 1.0)
    return makeError("weight scale " + llvm::formatv("{0}", options.weightScale).str() +
                     ": the inputs are read from " + options.inputsDir +
                     ", not generated; scale them where they are written");
  std::shared_ptr<const num::LayerInputs> in;
  // Generated inputs are named by what they depend on (read ones are not
  // kept anywhere).
  const std::string inputsKey =
      options.inputsDir.empty()
          ? generatedInputsKey(layerSpec, options.tokens, options.seed, options.weightScale)
          : "";
  if (options.inputsDir.empty()) {
    if (options.inputsCache)
      in = options.inputsCache->find(inputsKey);
    if (!in) {
      num::GenOptions gen;
      gen.seed = options.seed;
      gen.w1Scale *= options.weightScale;
      gen.w2Scale *= options.weightScale;
      gen.onlyRoutedExperts = true; // the kernels and the reference read no other expert
      gen.compactExperts = true;
      auto generated = num::generateInputs(layerSpec, options.tokens, gen);
      if (!generated)
        return generated.takeError();
      in = std::make_shared<const num::LayerInputs>(std::move(*generated));
      if (options.inputsCache)
        options.inputsCache->keep(inputsKey, in);
    }
  } else {
    auto read = readLayerInputs(layerSpec, options.inputsDir);
    if (!read)
      return read.takeError();
    if (llvm::Error e = checkTokenCount(read->tokens, options.inputsDir + "/a1"))
      return std::move(e);
    // Only the routed experts' weights are kept on the host (see
    // ExpertSubset.h): read inputs are cut down to them here.
    if (read->experts.empty()) {
      read->experts = num::routedExperts(read->topkIds, pr.experts);
      for (num::HostTensor *w : {&read->w1, &read->w2}) {
        auto kept = num::selectExperts(*w, read->experts);
        if (!kept)
          return kept.takeError();
        *w = std::move(*kept);
      }
    }
    in = std::make_shared<const num::LayerInputs>(std::move(*read));
  }
  const int64_t T = in->tokens, topk = pr.topk, K = pr.modelDim;

  // The layer as a host application runs it: kernels from the caller's
  // KernelSource, dispatched with the schedules MoeLayer chooses for the
  // tier (the tuned tables' row, else the spec's own), and launched by
  // MoeLayer::run; intermediates are read from its workspace.
  if (!options.kernels)
    return makeError("runLayerCheck: no kernel source (LayerCheckOptions::kernels)");
  // Timing needs events: ask before the long part, so that a backend that
  // cannot time says so at once.
  std::optional<runtime::EventPair> events;
  if (options.timedRuns > 0) {
    auto pair = runtime::createEventPair(backend);
    if (!pair)
      return pair.takeError();
    events = *pair;
  }
  auto layer =
      runtime::MoeLayer::create(options.kernels, backend, layerSpec, layerOptionsOf(options));
  if (!layer)
    return layer.takeError();
  auto dispatch = (*layer)->dispatch(T);
  if (!dispatch)
    return dispatch.takeError();
  if (!dispatch->notLaunched.empty())
    return makeError("the layer has kernels without a launcher: " +
                     llvm::join(llvm::map_range(dispatch->notLaunched,
                                                [](KernelFamily f) { return toString(f); }),
                                ", "));
  auto ws = (*layer)->workspaceLayout(T);
  if (!ws)
    return ws.takeError();
  // From here on, the schedules that run: the sorting's block, the packing
  // and the reference follow them.
  const MoeSpec &spec = dispatch->spec;
  const runtime::KernelSet &kernels = *dispatch->kernels;
  auto ran = [&](KernelFamily f) { return kernels.find(f) != nullptr; };
  const std::vector<int32_t> &experts = in->experts;
  const bool fused = spec.stage1.fusedQuant != FusedQuant::None;

  // What a kernel that does not run would have written, from the reference:
  // the sorting (every later kernel reads it), the quantized input for stage
  // 1 without the input quantization and, for the inter-stage quantization
  // alone, stage 1's output (bf16 rows by (token, slot)). Stage 2 without the
  // inter-stage quantization it reads is refused: nothing would write its A.
  if (ran(KernelFamily::Stage2) && !ran(KernelFamily::QuantInter) && ws->interQ.bytes)
    return makeError("--kernels: stage2 reads quant_inter's output; run both or neither");
  auto sorting = num::sortMoe(in->topkIds, in->topkWeights, T, topk, pr.experts, spec.stage1.tileM);
  if (!sorting)
    return sorting.takeError();
  std::optional<num::Stage1Result> placedStage1;
  if (ran(KernelFamily::QuantInter) && !ran(KernelFamily::Stage1) && !fused) {
    MoeSpec keptSpec = spec; // the reference's view: the kept experts only
    keptSpec.problem.experts = static_cast<int64_t>(experts.size());
    auto keptSorting = num::renumberExperts(*sorting, experts);
    if (!keptSorting)
      return keptSorting.takeError();
    auto s1 = num::referenceStage1(keptSpec, in->a1, *keptSorting, in->w1);
    if (!s1)
      return s1.takeError();
    placedStage1 = std::move(*s1);
  }

  DeviceArena dev(backend);
  const num::PackedSizes sizes = num::packedSizes(spec);
  const uint8_t unwritten = options.poison ? 0xff : 0;
  // One set of device buffers: the inputs in the kernels' layouts, the
  // output and the workspace. The check runs on the first; timing rotates
  // over all of them.
  auto placeSet = [&](size_t copyIndex) -> llvm::Expected<runtime::LayerArgs> {
    runtime::LayerArgs args;
    args.tokens = T;
    llvm::Error placed = llvm::Error::success();
    auto place = [&](DevicePtr &field, llvm::Expected<DevicePtr> p) {
      if (p)
        field = *p;
      else
        placed = llvm::joinErrors(std::move(placed), p.takeError());
    };
    place(args.topkIds, dev.upload(in->topkIds));
    place(args.topkWeights, dev.upload(in->topkWeights));
    place(args.hidden, dev.upload(num::makeBf16({T, K}, in->hidden).data));
    place(args.output, dev.alloc(T * K * 2, true, unwritten));
    place(args.workspace, dev.alloc(ws->total, true, unwritten));
    if (placed)
      return std::move(placed);
    args.workspaceBytes = ws->total;
    // The packed weights go to zeroed device buffers expert by expert: the
    // unrouted experts stay zeros, as packWeights gives them.
    auto pack = [&](const DeviceWeightsCache::Set &w) -> llvm::Error {
      auto sink = [&](num::PackedBuffer which, int64_t offset,
                      llvm::ArrayRef<uint8_t> bytes) -> llvm::Error {
        DevicePtr base = which == num::PackedBuffer::W1        ? w.w1
                         : which == num::PackedBuffer::W1Scale ? w.w1Scale
                         : which == num::PackedBuffer::W2      ? w.w2
                                                               : w.w2Scale;
        return backend.copyToDevice(base + offset, bytes.data(), bytes.size());
      };
      return num::packExperts(spec, in->w1, in->w2, experts, sink);
    };
    DeviceWeightsCache::Set w;
    if (options.weightsCache && !inputsKey.empty()) {
      auto got = options.weightsCache->get(backend, inputsKey, copyIndex, sizes, pack);
      if (!got)
        return got.takeError();
      w = *got;
    } else {
      place(w.w1, dev.alloc(sizes.w1));
      place(w.w1Scale, dev.alloc(sizes.w1Scale));
      place(w.w2, dev.alloc(sizes.w2));
      place(w.w2Scale, dev.alloc(sizes.w2Scale));
      if (placed)
        return std::move(placed);
      if (llvm::Error e = pack(w))
        return std::move(e);
    }
    args.w1 = w.w1;
    args.w1Scale = w.w1Scale;
    args.w2 = w.w2;
    args.w2Scale = w.w2Scale;
    auto put = [&](const runtime::WorkspaceRegion &r, const void *data, size_t bytes) {
      return backend.copyToDevice(args.workspace + r.offset, data, std::min(bytes, r.bytes));
    };
    const num::MoeSorting &sorted = *sorting;
    if (!ran(KernelFamily::Sort))
      if (llvm::Error e = llvm::joinErrors(
              llvm::joinErrors(put(ws->sortedIds, sorted.sortedTokenIds.data(),
                                   sorted.sortedTokenIds.size() * 4),
                               put(ws->sortedWeights, sorted.sortedWeights.data(),
                                   sorted.sortedWeights.size() * 4)),
              llvm::joinErrors(
                  put(ws->sortedExperts, sorted.sortedExpertIds.data(),
                      sorted.sortedExpertIds.size() * 4),
                  put(ws->numValidIds, sorted.numValidIds, sizeof(sorted.numValidIds)))))
        return std::move(e);
    // Each sorted block's stage_ready as the sort would set it, less what
    // the kernels that do not run would have counted down (the rows they
    // would have written are placed): stage 1's N tiles, the inter-stage
    // quantization's one.
    if (ws->stageReady.bytes && !ran(KernelFamily::Sort)) {
      int64_t count = (ran(KernelFamily::Stage1) ? ws->stageReadyCount - ws->stageReadyQuant : 0) +
                      (ran(KernelFamily::QuantInter) ? ws->stageReadyQuant : 0);
      std::vector<int32_t> ready(ws->stageReady.bytes / 4, int32_t(count));
      if (llvm::Error e = put(ws->stageReady, ready.data(), ready.size() * 4))
        return std::move(e);
    }
    if (ran(KernelFamily::Stage1) && !ran(KernelFamily::QuantInput) && ws->inputQ.bytes)
      if (llvm::Error e = placeQuantizedInput(put, *ws, in->a1))
        return std::move(e);
    if (placedStage1)
      if (llvm::Error e =
              put(ws->stage1Out, placedStage1->out.data.data(), placedStage1->out.data.size()))
        return std::move(e);
    return args;
  };
  const size_t setBytes = in->topkIds.size() * 4 + in->topkWeights.size() * 4 + T * K * 2 +
                          sizes.w1 + sizes.w1Scale + sizes.w2 + sizes.w2Scale + T * K * 2 +
                          ws->total;
  int copies = 1;
  if (options.timedRuns > 0)
    copies = static_cast<int>(
        std::clamp<size_t>(options.rotateBytes / std::max<size_t>(setBytes, 1) + 1, 2, 64));
  std::vector<runtime::LayerArgs> sets;
  for (int c = 0; c < copies; ++c) {
    auto set = placeSet(static_cast<size_t>(c));
    if (!set)
      return set.takeError();
    sets.push_back(*set);
  }
  const runtime::LayerArgs &args = sets[0];
  if (llvm::Error e = (*layer)->run(args))
    return std::move(e);
  if (llvm::Error e = backend.synchronize())
    return std::move(e);
  if (ran(KernelFamily::Sort) && ran(KernelFamily::Stage1) &&
      (!ws->stageReadyQuant || ran(KernelFamily::QuantInter)))
    if (llvm::Error e = checkStageReadyDrained(backend, args, *ws, spec.problem.experts))
      return std::move(e);

  // The check, on the tokens asked for.
  const std::vector<int64_t> checked = options.checkTokens > 0 && options.checkTokens < T
                                           ? spreadTokens(T, options.checkTokens)
                                           : std::vector<int64_t>{};
  num::HostTensor checkedA1;
  if (!checked.empty())
    checkedA1 = tokenRows(in->a1, checked);
  RunInputs runInputs;
  runInputs.tokens = T;
  runInputs.topkIds = in->topkIds;
  runInputs.topkWeights = in->topkWeights;
  runInputs.checked = checked;
  runInputs.a1 = checked.empty() ? &in->a1 : &checkedA1;
  runInputs.w1 = &in->w1;
  runInputs.w2 = &in->w2;
  runInputs.experts = experts;
  auto checkedRun = checkLayerRun(spec, backend, kernels, *ws, args, runInputs);
  if (!checkedRun)
    return checkedRun.takeError();
  checkedRun->schedules = dispatch->origin;
  if (options.kernelResources) {
    auto used = (*layer)->kernelResources(T);
    if (!used)
      return used.takeError();
    checkedRun->kernels = std::move(*used);
  }

  // Timing, after the check (which ran on the first set): warmup, then each
  // run between two events, rotating over the sets.
  auto finishWithTiming = [&](LayerCheckResult r) -> llvm::Expected<LayerCheckResult> {
    if (!events || (options.timeOnlyIfPassed && !r.passed()))
      return r;
    LayerTiming timing;
    timing.copies = copies;
    timing.copyBytes = setBytes;
    for (int i = 0; i < options.warmupRuns; ++i)
      if (llvm::Error e = (*layer)->run(sets[i % copies]))
        return std::move(e);
    // Per step: one event after each clear and launch (created on first
    // use, reused by every run).
    std::vector<runtime::EventHandle> stepEvents;
    std::vector<runtime::RunStep> steps;
    auto observer = [&](const runtime::RunStep &step) -> llvm::Error {
      size_t i = steps.size();
      if (i == stepEvents.size()) {
        auto e = backend.createEvent();
        if (!e)
          return e.takeError();
        stepEvents.push_back(*e);
      }
      steps.push_back(step);
      return backend.recordEvent(stepEvents[i]);
    };
    for (int i = 0; i < options.timedRuns; ++i) {
      steps.clear();
      if (llvm::Error e = backend.recordEvent(events->Start))
        return std::move(e);
      if (llvm::Error e = options.timeSteps
                              ? (*layer)->run(sets[(options.warmupRuns + i) % copies], observer)
                              : (*layer)->run(sets[(options.warmupRuns + i) % copies]))
        return std::move(e);
      if (llvm::Error e = backend.recordEvent(events->End))
        return std::move(e);
      auto ms = backend.elapsedMs(events->Start, events->End);
      if (!ms)
        return ms.takeError();
      timing.runsMs.push_back(*ms);
      if (!options.timeSteps)
        continue;
      std::vector<float> stepMs;
      runtime::EventHandle from = events->Start;
      for (size_t s = 0; s < steps.size(); ++s) {
        auto ms = backend.elapsedMs(from, stepEvents[s]);
        if (!ms)
          return ms.takeError();
        stepMs.push_back(*ms);
        from = stepEvents[s];
      }
      timing.steps = steps;
      timing.stepMs.push_back(std::move(stepMs));
    }
    if (options.graphReplays > 0) {
      auto graph = (*layer)->captureRuns(sets);
      if (!graph)
        return graph.takeError();
      auto ms = runtime::timeGraphReplays(backend, *graph, *events, 1 + options.graphReplays);
      llvm::Error destroyed = backend.destroyGraph(*graph);
      if (!ms)
        return llvm::joinErrors(ms.takeError(), std::move(destroyed));
      if (destroyed)
        return std::move(destroyed);
      for (size_t i = 1; i < ms->size(); ++i) // the first replay untimed
        timing.graphCallMs.push_back((*ms)[i] / float(sets.size()));
    }
    if (llvm::Error e = backend.synchronize())
      return std::move(e);
    r.timing = std::move(timing);
    return r;
  };

  return finishWithTiming(std::move(*checkedRun));
}

} // namespace moegen
