//===- KernelCache.h - Memory and disk cache of compiled kernels -*- C++ -*-===//
//
// get() returns the kernels of a compile unit (one layer spec) and compiles
// the unit at most once per process and, with a writable disk cache, at most
// once across processes:
//
//   memory hit ──> done
//   otherwise one thread per unit (the others wait for it):
//     every kernel's entry on disk and valid ──> load
//     else lock the unit (flock), look again, compile, publish, unlock
//
// Failures are remembered in memory too, so a spec that does not compile is
// not compiled again on every call.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_CACHE_KERNELCACHE_H
#define MOEGEN_RUNTIME_CACHE_KERNELCACHE_H

#include "runtime/cache/CacheKey.h"
#include "runtime/cache/DiskCache.h"
#include "runtime/cache/KernelBinary.h"
#include "runtime/cache/Log.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/FunctionExtras.h"
#include "llvm/Support/Error.h"

#include <atomic>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <unordered_map>

namespace moegen::cache {

/// The kernels of one compile unit, in the order the unit plans them.
struct KernelSet {
  CacheKey unit;
  std::vector<CacheKey> keys;
  std::vector<std::shared_ptr<const KernelBinary>> kernels;

  /// The kernel of a family, or null. Inline: tools that only plan a
  /// layer's launches (tools/cuda-check) link no cache.
  std::shared_ptr<const KernelBinary> find(KernelFamily family) const {
    for (const auto &k : kernels)
      if (k->meta.family == family)
        return k;
    return nullptr;
  }
};

/// One kernel a unit will produce, known before compiling it.
struct PlannedKernel {
  KernelFamily family;
  std::string symbol;
};

struct CacheStats {
  uint64_t memoryHits = 0;
  uint64_t diskHits = 0;        // kernels loaded from disk
  uint64_t compiles = 0;        // units compiled by this process
  uint64_t kernelsCompiled = 0; // kernels those compiles produced
  uint64_t rejectedEntries = 0; // corrupt, truncated or foreign entries met
  uint64_t diskWrites = 0;      // entries published
  uint64_t lockWaits = 0;       // units another process was compiling
};

struct KernelCacheOptions {
  /// The disk cache's root; "" = defaultCacheRoot().
  std::string dir;
  /// false: memory only.
  bool disk = true;
  runtime::LogHandler log;
};

class KernelCache {
public:
  using Compile = llvm::function_ref<llvm::Expected<std::vector<KernelBinary>>()>;

  explicit KernelCache(KernelCacheOptions options = {});
  ~KernelCache();

  /// The kernels of `unit` for `chip`; `planned` names them, in order, so
  /// they can be found on disk before compiling. `compile` must return
  /// exactly the planned kernels.
  llvm::Expected<std::shared_ptr<const KernelSet>> get(const CacheKey &unit, llvm::StringRef chip,
                                                       llvm::ArrayRef<PlannedKernel> planned,
                                                       Compile compile);

  /// A memory hit or null; never compiles or touches the disk.
  std::shared_ptr<const KernelSet> lookup(const CacheKey &unit) const;

  CacheStats stats() const;
  /// Null when the cache is memory-only.
  DiskCache *disk() { return diskCache.get(); }

private:
  struct Slot;
  llvm::Expected<std::shared_ptr<const KernelSet>> build(const CacheKey &unit, llvm::StringRef chip,
                                                         llvm::ArrayRef<PlannedKernel> planned,
                                                         Compile compile);
  bool loadAll(llvm::StringRef chip, llvm::ArrayRef<PlannedKernel> planned, KernelSet &out,
               std::vector<bool> &present);

  runtime::LogHandler log;
  std::unique_ptr<DiskCache> diskCache;
  mutable std::shared_mutex mapMutex;
  std::unordered_map<CacheKey, std::shared_ptr<Slot>, CacheKeyHash> slots;
  mutable std::atomic<uint64_t> memoryHits{0};
  std::atomic<uint64_t> diskHits{0}, compiles{0}, kernelsCompiled{0}, rejected{0}, diskWrites{0},
      lockWaits{0};
};

} // namespace moegen::cache

#endif // MOEGEN_RUNTIME_CACHE_KERNELCACHE_H
