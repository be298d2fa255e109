//===- KernelCache.cpp - Memory and disk cache of compiled kernels --------===//

#include "runtime/cache/KernelCache.h"

#include <condition_variable>
#include <mutex>

namespace moegen::cache {

/// One unit's result. `done` flips once; after that `value`/`error` are
/// immutable and read without the mutex.
struct KernelCache::Slot {
  std::mutex m;
  std::condition_variable cv;
  std::atomic<bool> done{false};
  std::shared_ptr<const KernelSet> value;
  std::string error;
};

KernelCache::KernelCache(KernelCacheOptions options) : log(options.log) {
  if (options.disk)
    diskCache = std::make_unique<DiskCache>(options.dir, log);
}

KernelCache::~KernelCache() = default;

std::shared_ptr<const KernelSet> KernelCache::lookup(const CacheKey &unit) const {
  std::shared_lock<std::shared_mutex> lock(mapMutex);
  auto it = slots.find(unit);
  if (it == slots.end() || !it->second->done.load(std::memory_order_acquire))
    return nullptr;
  if (it->second->value)
    memoryHits.fetch_add(1, std::memory_order_relaxed);
  return it->second->value;
}

llvm::Expected<std::shared_ptr<const KernelSet>>
KernelCache::get(const CacheKey &unit, llvm::StringRef chip, llvm::ArrayRef<PlannedKernel> planned,
                 Compile compile) {
  std::shared_ptr<Slot> slot;
  bool owner = false;
  {
    std::shared_lock<std::shared_mutex> lock(mapMutex);
    auto it = slots.find(unit);
    if (it != slots.end())
      slot = it->second;
  }
  if (!slot) {
    std::unique_lock<std::shared_mutex> lock(mapMutex);
    auto [it, inserted] = slots.try_emplace(unit, nullptr);
    if (inserted)
      it->second = std::make_shared<Slot>();
    slot = it->second;
    owner = inserted;
  }
  if (owner) {
    auto result = build(unit, chip, planned, compile);
    std::lock_guard<std::mutex> lock(slot->m);
    if (result)
      slot->value = std::move(*result);
    else
      slot->error = llvm::toString(result.takeError());
    slot->done.store(true, std::memory_order_release);
    slot->cv.notify_all();
  } else if (!slot->done.load(std::memory_order_acquire)) {
    std::unique_lock<std::mutex> lock(slot->m);
    slot->cv.wait(lock, [&] { return slot->done.load(std::memory_order_acquire); });
  } else if (slot->value) {
    memoryHits.fetch_add(1, std::memory_order_relaxed);
  }
  if (!slot->value)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), slot->error);
  return slot->value;
}

bool KernelCache::loadAll(llvm::StringRef chip, llvm::ArrayRef<PlannedKernel> planned,
                          KernelSet &out, std::vector<bool> &present) {
  bool all = true;
  for (size_t i = 0; i < planned.size(); ++i) {
    if (present[i])
      continue;
    KernelBinary k;
    switch (diskCache->load(out.keys[i], chip, k)) {
    case DiskCache::LoadResult::Hit:
      // An entry that decodes but describes another kernel is not ours.
      if (k.meta.family == planned[i].family && k.meta.symbol == planned[i].symbol) {
        out.kernels[i] = std::make_shared<const KernelBinary>(std::move(k));
        present[i] = true;
        continue;
      }
      [[fallthrough]];
    case DiskCache::LoadResult::Rejected:
      rejected.fetch_add(1, std::memory_order_relaxed);
      [[fallthrough]];
    case DiskCache::LoadResult::Miss:
      all = false;
    }
  }
  return all;
}

llvm::Expected<std::shared_ptr<const KernelSet>>
KernelCache::build(const CacheKey &unit, llvm::StringRef chip,
                   llvm::ArrayRef<PlannedKernel> planned, Compile compile) {
  auto set = std::make_shared<KernelSet>();
  set->unit = unit;
  for (const PlannedKernel &p : planned)
    set->keys.push_back(makeKernelKey(unit, p.family, p.symbol));
  set->kernels.resize(planned.size());
  std::vector<bool> present(planned.size(), false);

  FileLock lock;
  if (diskCache && diskCache->state() != DiskCache::State::Unusable) {
    if (loadAll(chip, planned, *set, present)) {
      diskHits.fetch_add(planned.size(), std::memory_order_relaxed);
      return std::shared_ptr<const KernelSet>(std::move(set));
    }
    // A lock that cannot be taken costs at most a duplicate compile, never
    // a wrong entry (publishing is atomic): warn and go on.
    if (auto l = diskCache->lockUnit(unit, chip))
      lock = std::move(*l);
    else
      runtime::logMessage(log, runtime::LogLevel::Warning, llvm::toString(l.takeError()));
    if (lock.hadToWait())
      lockWaits.fetch_add(1, std::memory_order_relaxed);
    // Another process may have published the unit between our first look
    // and taking the lock: look again under it.
    if (lock.held()) {
      // Under the lock, temp files of this unit's kernels belong to dead writers.
      for (const CacheKey &k : set->keys)
        diskCache->removeStaleTemps(k, chip);
      if (loadAll(chip, planned, *set, present)) {
        diskHits.fetch_add(planned.size(), std::memory_order_relaxed);
        return std::shared_ptr<const KernelSet>(std::move(set));
      }
    }
  }

  auto compiled = compile();
  if (!compiled)
    return compiled.takeError();
  compiles.fetch_add(1, std::memory_order_relaxed);
  kernelsCompiled.fetch_add(compiled->size(), std::memory_order_relaxed);
  if (compiled->size() != planned.size())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: the compiler produced %zu kernels, %zu were "
                                   "planned",
                                   compiled->size(), planned.size());
  for (size_t i = 0; i < planned.size(); ++i) {
    KernelBinary &k = (*compiled)[i];
    if (k.meta.family != planned[i].family || k.meta.symbol != planned[i].symbol)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "internal error: kernel %zu is %s '%s', %s '%s' was planned",
                                     i, toString(k.meta.family).data(), k.meta.symbol.c_str(),
                                     toString(planned[i].family).data(), planned[i].symbol.c_str());
    if (diskCache && !present[i]) {
      if (llvm::Error e = diskCache->store(set->keys[i], chip, k))
        runtime::logMessage(log, runtime::LogLevel::Warning, llvm::toString(std::move(e)));
      else if (diskCache->state() == DiskCache::State::Writable)
        diskWrites.fetch_add(1, std::memory_order_relaxed);
    }
    // Kernels found on disk stay as loaded: every process sees the same bytes.
    if (present[i])
      diskHits.fetch_add(1, std::memory_order_relaxed);
    else
      set->kernels[i] = std::make_shared<const KernelBinary>(std::move(k));
  }
  return std::shared_ptr<const KernelSet>(std::move(set));
}

CacheStats KernelCache::stats() const {
  CacheStats s;
  s.memoryHits = memoryHits.load();
  s.diskHits = diskHits.load();
  s.compiles = compiles.load();
  s.kernelsCompiled = kernelsCompiled.load();
  s.rejectedEntries = rejected.load();
  s.diskWrites = diskWrites.load();
  s.lockWaits = lockWaits.load();
  return s;
}

} // namespace moegen::cache
