//===- Compiler.cpp - The runtime's JIT compiler handle -------------------===//

#include "runtime/api/Compiler.h"

#include "llvm/ADT/Hashing.h"

#include "compiler/Compiler.h"
#include "compiler/spec/DslParser.h"
#include "templates/LayerKernels.h"

namespace moegen::runtime {
namespace {

cache::ArgKind toArgKind(KernelArgKind k) {
  switch (k) {
  case KernelArgKind::Pointer:
    return cache::ArgKind::Pointer;
  case KernelArgKind::I32:
    return cache::ArgKind::I32;
  case KernelArgKind::F32:
    return cache::ArgKind::F32;
  }
  return cache::ArgKind::Pointer;
}

cache::KernelBinary toBinary(CompiledKernel &&k, const std::string &description) {
  cache::KernelBinary b;
  b.meta.family = k.family;
  b.meta.symbol = k.signature.symbol;
  for (const KernelArg &a : k.signature.args)
    b.meta.args.push_back({a.name, toArgKind(a.kind)});
  b.meta.blockSize = k.signature.blockSize;
  const KernelResources &r = k.resources;
  b.meta.vgprs = r.vgprs;
  b.meta.agprs = r.agprs;
  b.meta.sgprs = r.sgprs;
  b.meta.ldsBytes = r.ldsBytes;
  b.meta.scratchBytes = r.scratchBytes;
  b.meta.vgprSpills = r.vgprSpills;
  b.meta.sgprSpills = r.sgprSpills;
  b.meta.kernargBytes = r.kernargBytes;
  b.meta.codeBytes = r.codeBytes;
  b.meta.compileMs = k.compileMs;
  b.meta.description = description;
  b.hsaco.assign(k.code.hsaco.begin(), k.code.hsaco.end());
  b.bitcode.assign(k.code.bitcode.begin(), k.code.bitcode.end());
  return b;
}

} // namespace

std::string Target::id() const {
  std::string s = "amdgcn-amd-amdhsa--" + chip;
  if (!features.empty())
    s += ":" + features;
  return s + ";cov" + std::to_string(codeObjectVersion);
}

Compiler::Compiler(CompilerOptions options) : opts(std::move(options)) {
  cache::KernelCacheOptions c;
  c.dir = opts.cacheDir;
  c.disk = opts.diskCache;
  c.log = opts.log;
  cacheImpl = std::make_unique<cache::KernelCache>(std::move(c));
}

Compiler::~Compiler() = default;

cache::CacheKey Compiler::computeUnitKey(const MoeSpec &spec, const Target &target) const {
  std::string identity = "opt=" + std::to_string(opts.optLevel) + "\n" + printMoeSpec(spec);
  return cache::makeUnitKey(target.id(), identity);
}

cache::CacheKey Compiler::unitKey(const MoeSpec &spec, const Target &target) const {
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

PreparedLayer Compiler::prepare(const MoeSpec &spec, const Target &target) const {
  return PreparedLayer{spec, target, unitKey(spec, target)};
}

llvm::Expected<std::shared_ptr<const KernelSet>> Compiler::getKernels(const MoeSpec &spec,
                                                                      const Target &target) {
  // A hit needs only the key; the spec is copied into a PreparedLayer only to
  // compile.
  if (auto hit = cacheImpl->lookup(unitKey(spec, target)))
    return hit;
  return getKernels(prepare(spec, target));
}

llvm::Expected<std::shared_ptr<const KernelSet>> Compiler::getKernels(const PreparedLayer &layer) {
  if (auto hit = cacheImpl->lookup(layer.key))
    return hit;
  const MoeSpec &spec = layer.spec;
  const Target &target = layer.target;
  const cache::CacheKey &unit = layer.key;
  std::optional<TargetInfo> info = TargetInfo::forChip(target.chip, target.codeObjectVersion);
  if (!info)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "target: moegen does not generate code for chip '%s'",
                                   target.chip.c_str());
  ScheduleIssues issues;
  std::vector<cache::PlannedKernel> planned;
  for (const PlannedKernel &k : planLayerKernels(spec, *info, issues))
    planned.push_back({k.family, k.signature.symbol});
  CompileOptions options;
  options.chip = target.chip;
  options.codeObjectVersion = target.codeObjectVersion;
  options.optLevel = opts.optLevel;
  std::string description = spec.name + " for " + target.id();
  return cacheImpl->get(unit, target.chip, planned,
                        [&]() -> llvm::Expected<std::vector<cache::KernelBinary>> {
                          auto layer = compileLayer(spec, options);
                          if (!layer)
                            return layer.takeError();
                          std::vector<cache::KernelBinary> out;
                          for (CompiledKernel &k : layer->kernels)
                            out.push_back(toBinary(std::move(k), description));
                          return out;
                        });
}

llvm::Expected<std::shared_ptr<const KernelBinary>>
Compiler::getKernel(const MoeSpec &spec, const Target &target, llvm::StringRef family) {
  auto set = getKernels(spec, target);
  if (!set)
    return set.takeError();
  if (auto k = (*set)->find(family))
    return k;
  std::string have;
  for (const auto &k : (*set)->kernels)
    have += (have.empty() ? "" : ", ") + k->meta.family;
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "layer '%s' has no '%s' kernel (it has: %s)", spec.name.c_str(),
                                 family.str().c_str(), have.c_str());
}

CacheStats Compiler::stats() const { return cacheImpl->stats(); }

} // namespace moegen::runtime
