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

std::string familyList(llvm::ArrayRef<KernelFamily> families) {
  std::string s;
  for (KernelFamily f : families)
    s += (s.empty() ? "" : ",") + toString(f).str();
  return s;
}

/// Every family asked for is a kernel of the layer.
llvm::Error checkFamiliesOfLayer(const MoeSpec &spec, const TargetInfo &target,
                                 llvm::ArrayRef<KernelFamily> families) {
  if (families.empty())
    return llvm::Error::success();
  ScheduleIssues issues;
  std::vector<KernelFamily> have;
  for (const PlannedKernel &k : planLayerKernels(spec, target, issues))
    have.push_back(k.family);
  for (KernelFamily f : families)
    if (!llvm::is_contained(have, f))
      return llvm::createStringError(
          std::errc::invalid_argument, "layer '%s' has no '%s' kernel (it has: %s)",
          spec.name.c_str(), toString(f).data(), familyList(have).c_str());
  return llvm::Error::success();
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

llvm::Error KernelSource::verify(const MoeSpec &spec, const Target &target,
                                 llvm::ArrayRef<KernelFamily> families) const {
  auto info = targetInfo(target);
  if (!info)
    return info.takeError();
  if (llvm::Error e = checkSpecLimits(spec))
    return e;
  if (llvm::Error e = checkFamiliesOfLayer(spec, *info, families))
    return e;
  return verifyLayerRules(spec, *info, families);
}

cache::CacheKey KernelSource::computeUnitKey(const MoeSpec &spec, const Target &target,
                                             llvm::ArrayRef<KernelFamily> families) const {
  std::string identity = "opt=" + std::to_string(opts.optLevel) + "\n";
  // A subset is another unit; the whole layer's identity stays as it was.
  if (!families.empty())
    identity += "families=" + familyList(families) + "\n";
  identity += printMoeSpec(spec);
  return cache::makeUnitKey(target.id(), identity);
}

cache::CacheKey KernelSource::unitKey(const MoeSpec &spec, const Target &target,
                                      llvm::ArrayRef<KernelFamily> families) const {
  if (!families.empty()) // rare (a partial port): not memoized
    return computeUnitKey(spec, target, families);
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
  cache::CacheKey key = computeUnitKey(spec, target, {});
  std::lock_guard<std::mutex> lock(memoMutex);
  if (memoSize >= 4096) { // a bound for processes that see endless specs
    keyMemo.clear();
    memoSize = 0;
  }
  keyMemo[h].push_back({spec, target, key});
  ++memoSize;
  return key;
}

PreparedLayer KernelSource::prepare(const MoeSpec &spec, const Target &target,
                                    llvm::ArrayRef<KernelFamily> families) const {
  return PreparedLayer{
      spec, target, {families.begin(), families.end()}, unitKey(spec, target, families)};
}

llvm::Expected<std::shared_ptr<const KernelSet>>
KernelSource::getKernels(const MoeSpec &spec, const Target &target,
                         llvm::ArrayRef<KernelFamily> families) {
  // A hit needs only the key; the spec is copied into a PreparedLayer only on
  // a miss.
  if (auto hit = cacheImpl->lookup(unitKey(spec, target, families)))
    return hit;
  return getKernels(prepare(spec, target, families));
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
    if (layer.families.empty() || llvm::is_contained(layer.families, k.family))
      planned.push_back({k.family, k.signature.symbol});
  if (!issues.empty())
    return verifyLayerRules(layer.spec, *info);
  if (llvm::Error e = checkFamiliesOfLayer(layer.spec, *info, layer.families))
    return std::move(e);
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
