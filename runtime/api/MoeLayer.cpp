//===- MoeLayer.cpp - One MoE layer, dispatched and launched --------------===//

#include "runtime/api/MoeLayer.h"

#include "compiler/spec/SpecLimits.h"
#include "runtime/api/FamilyLaunchers.h"
#include "runtime/api/LayerSchedule.h"
#include "runtime/dispatch/Tiers.h"
#include "templates/LayerPlan.h"
#include "templates/gemm/GemmPlan.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cstring>
#include <optional>
#include <set>

namespace moegen::runtime {
namespace {

llvm::Error argError(const llvm::Twine &msg) {
  return llvm::createStringError(std::make_error_code(std::errc::invalid_argument),
                                 "MoeLayer::run: " + msg);
}

/// The alignment a pointer value must have: its element size, 16 where the
/// kernels load 16-byte vectors.
size_t alignmentOf(ArgValue v) {
  switch (v) {
  case ArgValue::TopkIds:
  case ArgValue::TopkWeights:
    return 4;
  case ArgValue::Hidden:
  case ArgValue::W1:
  case ArgValue::W2:
  case ArgValue::Output:
    return 16;
  default:
    return 1;
  }
}

/// The LayerArgs field a value comes from, for messages.
const char *argFieldName(ArgValue v) {
  switch (v) {
  case ArgValue::TopkIds:
    return "topkIds";
  case ArgValue::TopkWeights:
    return "topkWeights";
  case ArgValue::Hidden:
    return "hidden";
  case ArgValue::W1:
    return "w1";
  case ArgValue::W1Scale:
    return "w1Scale";
  case ArgValue::W2:
    return "w2";
  case ArgValue::W2Scale:
    return "w2Scale";
  case ArgValue::Output:
    return "output";
  default:
    return "workspace";
  }
}

bool isWorkspace(ArgValue v) { return v >= ArgValue::SortedIds && v <= ArgValue::StageReady; }

std::mutex &launcherMutex() {
  static std::mutex m;
  return m;
}

FamilyLaunchers &launchers() {
  static FamilyLaunchers table = builtinLaunchers();
  return table;
}

size_t tierSlot(int64_t tier) {
  return tier > 32768 ? 16 : static_cast<size_t>(llvm::Log2_64(static_cast<uint64_t>(tier)));
}

size_t alignUp(size_t v, size_t a) { return (v + a - 1) / a * a; }

} // namespace

llvm::StringRef toString(ScheduleSource s) {
  switch (s) {
  case ScheduleSource::Tuned:
    return "tuned";
  case ScheduleSource::TunedActAgnostic:
    return "tuned (act_type-agnostic row)";
  case ScheduleSource::Heuristic:
    return "fallback heuristic";
  case ScheduleSource::SpecDefault:
    return "the spec's schedules";
  }
  return "";
}

void registerFamilyLauncher(KernelFamily family, FamilyLauncher launcher) {
  std::lock_guard<std::mutex> lock(launcherMutex());
  launchers()[static_cast<size_t>(family)] = std::move(launcher);
}

void resetFamilyLaunchers() {
  std::lock_guard<std::mutex> lock(launcherMutex());
  launchers() = builtinLaunchers();
}

/// One kernel of a tier, ready to launch.
struct KernelLaunch {
  KernelHandle handle;
  KernelFamily family = KernelFamily::Sort;
  GridRule grid;
  uint32_t blockSize = 0;
  uint32_t dynamicSharedBytes = 0;
  struct Slot {
    ArgValue value;
    uint32_t offset, size;
  };
  std::vector<Slot> slots;
  uint32_t kernargBytes = 0;
};

struct MoeLayer::Resolved {
  TierDispatch dispatch;
  LayerPlan plan;
  bool clearOutput = false; // stage 2 accumulates into the output
  std::vector<KernelLaunch> launches;
  /// Pointer values some kernel reads, with their alignment.
  std::vector<std::pair<ArgValue, size_t>> required;
};

struct MoeLayer::Tables {
  std::unique_ptr<LayerScheduler> scheduler;
  /// Kernels already loaded on the backend, by kernel key.
  std::unordered_map<cache::CacheKey, KernelHandle, cache::CacheKeyHash> loaded;
};

MoeLayer::MoeLayer(std::shared_ptr<KernelSource> k, Backend &b, const MoeSpec &spec, LayerOptions o)
    : kernels(std::move(k)), backend(b), layerSpec(spec), options(std::move(o)),
      tables(std::make_unique<Tables>()) {}

MoeLayer::~MoeLayer() = default;

llvm::Expected<std::unique_ptr<MoeLayer>> MoeLayer::create(std::shared_ptr<KernelSource> kernels,
                                                           Backend &backend, const MoeSpec &spec,
                                                           LayerOptions options) {
  if (!kernels)
    return llvm::createStringError(std::errc::invalid_argument,
                                   "MoeLayer::create: argument 'kernels' is null");
  const Problem &p = spec.problem;
  if (p.modelDim <= 0 || p.interDim <= 0 || p.experts <= 0 || p.topk <= 0 || p.topk > p.experts)
    return llvm::createStringError(
        std::errc::invalid_argument,
        "MoeLayer::create: argument 'spec' has an invalid problem: model_dim=%lld "
        "inter_dim=%lld experts=%lld topk=%lld (all positive, topk <= experts)",
        (long long)p.modelDim, (long long)p.interDim, (long long)p.experts, (long long)p.topk);
  // The spec's schedules are every tier's last resort: they must verify.
  if (llvm::Error e = kernels->verify(spec, options.target, options.families))
    return llvm::createStringError(std::make_error_code(std::errc::invalid_argument),
                                   "MoeLayer::create: argument 'spec': " +
                                       llvm::toString(std::move(e)));
  auto scheduler = LayerScheduler::create(spec, options);
  if (!scheduler)
    return scheduler.takeError();
  std::unique_ptr<MoeLayer> layer(new MoeLayer(std::move(kernels), backend, spec, options));
  layer->target = *TargetInfo::forChip(options.target.chip, options.target.codeObjectVersion);
  layer->tables->scheduler = std::move(*scheduler);
  return layer;
}

llvm::Expected<std::unique_ptr<MoeLayer::Resolved>> MoeLayer::resolveTier(int64_t tier,
                                                                          int64_t tokens) {
  auto r = std::make_unique<Resolved>();
  auto chosen = tables->scheduler->choose(tokens, *kernels);
  if (!chosen)
    return chosen.takeError();
  r->dispatch = std::move(*chosen);
  r->dispatch.tier = tier;
  if (options.families.empty()) {
    r->plan = LayerPlan::make(r->dispatch.spec, *r->dispatch.kernels, target);
  } else {
    // Part of the layer: the workspace is still the whole layer's, so that
    // every region a present kernel reads exists.
    ScheduleIssues issues;
    std::vector<KernelFamily> all;
    for (const PlannedKernel &k : planLayerKernels(r->dispatch.spec, target, issues))
      all.push_back(k.family);
    r->plan = LayerPlan::make(r->dispatch.spec, all, target);
  }

  std::vector<bool> needed(static_cast<size_t>(ArgValue::Count), false);
  for (size_t i = 0; i < r->dispatch.kernels->kernels.size(); ++i) {
    const KernelBinary &k = *r->dispatch.kernels->kernels[i];
    const cache::CacheKey &key = r->dispatch.kernels->keys[i];
    KernelLaunch launch;
    FamilyLauncher launcher;
    {
      std::lock_guard<std::mutex> lock(launcherMutex());
      launcher = launchers()[static_cast<size_t>(k.meta.family)];
      if (!launcher) {
        r->dispatch.notLaunched.push_back(k.meta.family);
        continue;
      }
    }
    auto family = launcher(r->dispatch.spec, *r->dispatch.kernels, target);
    if (!family)
      return family.takeError();
    launch.grid = family->grid;
    launch.blockSize = static_cast<uint32_t>(k.meta.blockSize);
    launch.dynamicSharedBytes = static_cast<uint32_t>(k.meta.dynamicSharedBytes);
    launch.family = k.meta.family;
    uint32_t offset = 0;
    for (const cache::ArgInfo &a : k.meta.args) {
      std::optional<ArgValue> value = bindingOf(*family, a.name);
      if (!value)
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "MoeLayer: argument '%s' of kernel %s has no binding",
                                       a.name.c_str(), k.meta.symbol.c_str());
      uint32_t size = a.kind == cache::ArgKind::Pointer ? 8 : 4;
      offset = static_cast<uint32_t>(alignUp(offset, size));
      launch.slots.push_back({*value, offset, size});
      offset += size;
      if (a.kind == cache::ArgKind::Pointer && !isWorkspace(*value) && !needed[size_t(*value)]) {
        needed[size_t(*value)] = true;
        r->required.push_back({*value, alignmentOf(*value)});
      }
    }
    launch.kernargBytes = offset;
    if (offset > 4096)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "MoeLayer: kernel %s has %u bytes of arguments",
                                     k.meta.symbol.c_str(), offset);
    auto loaded = tables->loaded.find(key);
    if (loaded != tables->loaded.end()) {
      launch.handle = loaded->second;
    } else {
      CodeBundle bundle;
      bundle.Hsaco = k.hsaco;
      bundle.Bitcode = k.bitcode;
      bundle.Name = k.meta.symbol;
      std::lock_guard<std::mutex> lock(launchMutex);
      auto module = backend.loadCode(bundle);
      if (!module)
        return module.takeError();
      auto handle = backend.getKernel(*module, k.meta.symbol);
      if (!handle)
        return handle.takeError();
      tables->loaded[key] = *handle;
      launch.handle = std::move(*handle);
    }
    r->launches.push_back(std::move(launch));
  }
  const auto &skipped = r->dispatch.notLaunched;
  // Stage 1 zeroes the output itself where it has clear_out (and runs).
  bool stage1Clears = llvm::any_of(r->dispatch.kernels->kernels, [&](const auto &k) {
    return k->meta.family == KernelFamily::Stage1 &&
           llvm::find(skipped, KernelFamily::Stage1) == skipped.end() &&
           llvm::any_of(k->meta.args,
                        [](const cache::ArgInfo &a) { return a.name == "clear_out"; });
  });
  r->clearOutput = r->plan.atomicOutput() && !stage1Clears &&
                   llvm::find(skipped, KernelFamily::Stage2) == skipped.end();
  if (!r->dispatch.notLaunched.empty()) {
    std::string families;
    for (KernelFamily f : r->dispatch.notLaunched)
      families += (families.empty() ? "" : ", ") + toString(f).str();
    static std::mutex m;
    static std::set<std::string> noted;
    std::lock_guard<std::mutex> lock(m);
    if (noted.insert(families).second)
      logMessage(nullptr, LogLevel::Note,
                 "MoeLayer: no launcher for kernel famil" +
                     llvm::Twine(r->dispatch.notLaunched.size() > 1 ? "ies " : "y ") + families +
                     " yet; they are compiled and cached but not launched");
  }
  return std::move(r);
}

llvm::Expected<const MoeLayer::Resolved &> MoeLayer::resolve(int64_t tokens) {
  if (tokens < 1 || tokens > limits::kMaxTokens)
    return argError("argument 'tokens' is " + llvm::Twine(tokens) + "; it must be in [1, " +
                    llvm::Twine(limits::kMaxTokens) + "]");
  int64_t tier = dispatch::paddedM(tokens);
  size_t slot = tierSlot(tier);
  if (Resolved *r = tiers[slot].load(std::memory_order_acquire))
    return *r;
  // Resolving loads kernels, which a graph capture cannot hold.
  if (backend.capturing())
    return argError(llvm::Twine(tokens) + " tokens (tier " + llvm::Twine(tier) +
                    ") during a graph capture, but the tier's kernels are not loaded yet; "
                    "resolve it before the capture (dispatch(" +
                    llvm::Twine(tokens) + "), or captureRuns)");
  std::lock_guard<std::mutex> lock(resolveMutex);
  if (Resolved *r = tiers[slot].load(std::memory_order_acquire))
    return *r;
  auto r = resolveTier(tier, tokens);
  if (!r)
    return r.takeError();
  Resolved *raw = r->get();
  owned.push_back(std::move(*r));
  tiers[slot].store(raw, std::memory_order_release);
  return *raw;
}

llvm::Expected<const TierDispatch &> MoeLayer::dispatch(int64_t tokens) {
  auto r = resolve(tokens);
  if (!r)
    return r.takeError();
  return r->dispatch;
}

llvm::Expected<std::vector<TierKernel>> MoeLayer::kernelResources(int64_t tokens) {
  auto r = resolve(tokens);
  if (!r)
    return r.takeError();
  std::vector<TierKernel> out;
  for (const KernelLaunch &launch : r->launches) {
    TierKernel k;
    k.family = launch.family;
    k.symbol = launch.handle.Symbol;
    k.blockSize = launch.blockSize;
    k.dynamicSharedBytes = launch.dynamicSharedBytes;
    if (target.isNvptx()) {
      // Registers of PTX are allocated when the driver loads it.
      auto used = backend.kernelResources(launch.handle);
      if (!used)
        return used.takeError();
      k.resources = *used;
      k.source = "driver";
    } else {
      auto binary = llvm::find_if(r->dispatch.kernels->kernels,
                                  [&](const auto &b) { return b->meta.symbol == k.symbol; });
      if (binary == r->dispatch.kernels->kernels.end())
        return llvm::createStringError(std::errc::invalid_argument,
                                       "MoeLayer: kernel %s is not in the tier's kernel set",
                                       k.symbol.c_str());
      const cache::KernelMeta &m = (*binary)->meta;
      k.resources.registers = m.vgprs + m.agprs;
      k.resources.localBytes = m.scratchBytes;
      k.resources.staticSharedBytes = m.ldsBytes;
      k.source = "code object";
    }
    out.push_back(std::move(k));
  }
  return out;
}

llvm::Expected<WorkspaceLayout> MoeLayer::workspaceLayout(int64_t tokens) {
  auto r = resolve(tokens);
  if (!r)
    return r.takeError();
  return r->plan.layout(tokens);
}

llvm::Expected<GraphHandle> MoeLayer::captureRuns(llvm::ArrayRef<LayerArgs> calls) {
  if (calls.empty())
    return llvm::createStringError(std::errc::invalid_argument,
                                   "MoeLayer::captureRuns: argument 'calls' is empty");
  for (const LayerArgs &call : calls)
    if (auto r = resolve(call.tokens); !r)
      return r.takeError();
  return backend.captureGraph([&]() -> llvm::Error {
    for (const LayerArgs &call : calls)
      if (llvm::Error e = run(call))
        return e;
    return llvm::Error::success();
  });
}

llvm::Error MoeLayer::run(const LayerArgs &args, RunObserver observer) {
  auto resolved = resolve(args.tokens);
  if (!resolved)
    return resolved.takeError();
  const Resolved &r = *resolved;
  WorkspaceLayout ws = r.plan.layout(args.tokens);
  if (!args.workspace)
    return argError("argument 'workspace' is null");
  if (args.workspace % 256)
    return argError("argument 'workspace' (0x" + llvm::utohexstr(args.workspace) +
                    ") is not 256-byte aligned");
  if (args.workspaceBytes < ws.total)
    return argError("argument 'workspaceBytes' is " + llvm::Twine(args.workspaceBytes) + ", but " +
                    llvm::Twine(args.tokens) + " tokens need " + llvm::Twine(ws.total) +
                    " (see workspaceLayout)");

  std::array<uint64_t, size_t(ArgValue::Count)> values{};
  auto set = [&](ArgValue v, uint64_t x) { values[size_t(v)] = x; };
  auto region = [&](ArgValue v, const WorkspaceRegion &reg) {
    set(v, reg.bytes ? args.workspace + reg.offset : 0);
  };
  set(ArgValue::TopkIds, args.topkIds);
  set(ArgValue::TopkWeights, args.topkWeights);
  set(ArgValue::Hidden, args.hidden);
  set(ArgValue::W1, args.w1);
  set(ArgValue::W1Scale, args.w1Scale);
  set(ArgValue::W2, args.w2);
  set(ArgValue::W2Scale, args.w2Scale);
  set(ArgValue::Output, args.output);
  region(ArgValue::SortedIds, ws.sortedIds);
  region(ArgValue::SortedWeights, ws.sortedWeights);
  region(ArgValue::SortedExperts, ws.sortedExperts);
  region(ArgValue::NumValidIds, ws.numValidIds);
  region(ArgValue::SortCounts, ws.sortCounts);
  region(ArgValue::SortTotals, ws.sortTotals);
  region(ArgValue::InputQ, ws.inputQ);
  region(ArgValue::InputQScale, ws.inputQScale);
  region(ArgValue::NoScale, ws.noScale);
  region(ArgValue::Partials, ws.partials);
  region(ArgValue::Stage1Out, ws.stage1Out);
  region(ArgValue::Stage1OutScale, ws.stage1OutScale);
  region(ArgValue::InterQ, ws.interQ);
  region(ArgValue::InterQScale, ws.interQScale);
  region(ArgValue::SlotRows, ws.slotRows);
  region(ArgValue::StageReady, ws.stageReady);
  set(ArgValue::Tokens, static_cast<uint64_t>(args.tokens));
  for (auto [value, align] : r.required) {
    uint64_t p = values[size_t(value)];
    if (!p)
      return argError("argument '" + llvm::Twine(argFieldName(value)) +
                      "' is null, but a kernel of this layer reads it");
    if (p % align)
      return argError("argument '" + llvm::Twine(argFieldName(value)) + "' (0x" +
                      llvm::utohexstr(p) + ") is not " + llvm::Twine(align) + "-byte aligned");
  }

  LaunchShape shape{args.tokens, ws, options.cuNum * kPersistentWorkgroupsPerCU};
  std::lock_guard<std::mutex> lock(launchMutex);
  auto observe = [&](RunStep::Kind kind, KernelFamily family) {
    return observer ? observer(RunStep{kind, family}) : llvm::Error::success();
  };
  // What the kernels accumulate into starts at zero; each clear is the step
  // of the family that needs it.
  std::pair<const WorkspaceRegion *, KernelFamily> clears[] = {
      {&ws.inputQScale, KernelFamily::QuantInput},
      {&ws.noScale, KernelFamily::Stage1},
      {&ws.partials, KernelFamily::Stage1},
      {&ws.stage1OutScale, KernelFamily::Stage1},
      {&ws.interQScale, KernelFamily::QuantInter}};
  for (auto [reg, family] : clears)
    if (reg->zeroed && reg->bytes && r.dispatch.kernels->find(family)) {
      if (llvm::Error e = backend.memset(args.workspace + reg->offset, 0, reg->bytes))
        return e;
      if (llvm::Error e = observe(RunStep::Kind::Clear, family))
        return e;
    }
  if (r.clearOutput) {
    if (llvm::Error e =
            backend.memset(args.output, 0, size_t(args.tokens) * r.plan.spec.problem.modelDim * 2))
      return e;
    if (llvm::Error e = observe(RunStep::Kind::Clear, KernelFamily::Stage2))
      return e;
  }
  for (const KernelLaunch &k : r.launches) {
    Dim3 grid = k.grid(shape);
    if (uint64_t(grid.X) * grid.Y * grid.Z == 0)
      continue; // nothing to do at this size (a single-chunk sort's count and scan)
    alignas(8) uint8_t kernarg[4096];
    std::memset(kernarg, 0, k.kernargBytes);
    for (const KernelLaunch::Slot &s : k.slots) {
      uint64_t v = values[size_t(s.value)];
      if (s.size == 8) {
        std::memcpy(kernarg + s.offset, &v, 8);
      } else {
        uint32_t v32 = static_cast<uint32_t>(v);
        std::memcpy(kernarg + s.offset, &v32, 4);
      }
    }
    if (llvm::Error e =
            backend.launch(k.handle, grid, Dim3{k.blockSize, 1, 1}, k.dynamicSharedBytes,
                           llvm::ArrayRef<uint8_t>(kernarg, k.kernargBytes)))
      return e;
    if (llvm::Error e = observe(RunStep::Kind::Launch, k.family))
      return e;
  }
  return llvm::Error::success();
}

} // namespace moegen::runtime
