//===- KernelSource.cpp - Where a layer's kernels come from ---------------===//

#include "runtime/api/KernelSource.h"

#include "compiler/spec/DslParser.h"
#include "compiler/spec/SpecLimits.h"
#include "templates/LayerPlan.h"
#include "templates/LayerRules.h"

#include "llvm/ADT/Hashing.h"

namespace moegen::runtime {
namespace {

llvm::Expected<TargetInfo> targetInfo(const Target &target) {
  return TargetInfo::get(target.chip, target.codeObjectVersion);
}

} // namespace

std::string Target::id() const {
  // The triple of the chip's architecture: gfx950 and sm_90a keys never meet.
  std::optional<TargetInfo> info = TargetInfo::forChip(chip, codeObjectVersion);
  std::string triple = info ? info->triple().str() : "amdgcn-amd-amdhsa";
  std::string s = triple + "--" + chip;
  if (!features.empty())
    s += ":" + features;
  return s + ";cov" + std::to_string(codeObjectVersion);
}

KernelSource::KernelSource(KernelSourceOptions options) : opts(std::move(options)) {
  cache::KernelCacheOptions c;
  c.dir = opts.cacheDir;
  c.disk = opts.diskCache;
  c.log = opts.log;
  cacheImpl = std::make_unique<cache::KernelCache>(std::move(c));
}

KernelSource::~KernelSource() = default;

llvm::Error KernelSource::verify(const MoeSpec &spec, const Target &target) const {
  auto info = targetInfo(target);
  if (!info)
    return info.takeError();
  if (llvm::Error e = checkSpecLimits(spec))
    return e;
  return verifyLayerRules(spec, *info);
}

cache::CacheKey KernelSource::computeUnitKey(const MoeSpec &spec, const Target &target) const {
  std::string identity = "opt=" + std::to_string(opts.optLevel) + "\n" + printMoeSpec(spec);
  return cache::makeUnitKey(target.id(), identity);
}

cache::CacheKey KernelSource::unitKey(const MoeSpec &spec, const Target &target) const {
  size_t h =
      llvm::hash_combine(hashSpec(spec), target.chip, target.features, target.codeObjectVersion);
  auto sameTarget = [&](const Target &t) {
    return t.chip == target.chip && t.features == target.features &&
           t.codeObjectVersion == target.codeObjectVersion;
  };
  {
    std::lock_guard<std::mutex> lock(memoMutex);
    auto it = keyMemo.find(h);
    if (it != keyMemo.end())
      for (const MemoEntry &e : it->second)
        if (sameTarget(e.target) && sameSpec(e.spec, spec))
          return e.key;
  }
  cache::CacheKey key = computeUnitKey(spec, target);
  std::lock_guard<std::mutex> lock(memoMutex);
  if (memoSize >= 4096) { // a bound for processes that see endless specs
    keyMemo.clear();
    memoSize = 0;
  }
  keyMemo[h].push_back({spec, target, key});
  ++memoSize;
  return key;
}

PreparedLayer KernelSource::prepare(const MoeSpec &spec, const Target &target) const {
  return PreparedLayer{spec, target, unitKey(spec, target)};
}

llvm::Expected<std::shared_ptr<const KernelSet>> KernelSource::getKernels(const MoeSpec &spec,
                                                                          const Target &target) {
  // A hit needs only the key; the spec is copied into a PreparedLayer only on
  // a miss.
  if (auto hit = cacheImpl->lookup(unitKey(spec, target)))
    return hit;
  return getKernels(prepare(spec, target));
}

llvm::Expected<std::shared_ptr<const KernelSet>>
KernelSource::getKernels(const PreparedLayer &layer) {
  if (auto hit = cacheImpl->lookup(layer.key))
    return hit;
  auto info = targetInfo(layer.target);
  if (!info)
    return info.takeError();
  // The plan names every kernel (family and symbol) so that its entry can be
  // found on disk; a spec that breaks a rule has no kernels to find.
  ScheduleIssues issues;
  std::vector<cache::PlannedKernel> planned;
  for (const PlannedKernel &k : planLayerKernels(layer.spec, *info, issues))
    planned.push_back({k.family, k.signature.symbol});
  if (!issues.empty())
    return verifyLayerRules(layer.spec, *info);
  return cacheImpl->get(layer.key, layer.target.chip, planned,
                        [&]() { return compileMissing(layer, *info, planned); });
}

llvm::Expected<std::vector<KernelBinary>>
KernelSource::compileMissing(const PreparedLayer &layer, const TargetInfo &,
                             llvm::ArrayRef<cache::PlannedKernel>) {
  cache::DiskCache *disk = cacheImpl->disk();
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "layer '%s' for %s is not in the kernel cache %s (key %s), and this runtime has no "
      "compiler: fill the cache with `moegen cache prefill` (same moegen build), or link "
      "moegen::jit",
      layer.spec.name.c_str(), layer.target.id().c_str(),
      disk ? ("'" + disk->root().str() + "'").c_str() : "(memory only)", layer.key.hex().c_str());
}

llvm::Expected<std::shared_ptr<const KernelBinary>>
KernelSource::getKernel(const MoeSpec &spec, const Target &target, KernelFamily family) {
  auto set = getKernels(spec, target);
  if (!set)
    return set.takeError();
  if (auto k = (*set)->find(family))
    return k;
  std::string have;
  for (const auto &k : (*set)->kernels)
    have += (have.empty() ? "" : ", ") + toString(k->meta.family).str();
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "layer '%s' has no '%s' kernel (it has: %s)", spec.name.c_str(),
                                 toString(family).data(), have.c_str());
}

CacheStats KernelSource::stats() const { return cacheImpl->stats(); }

} // namespace moegen::runtime
