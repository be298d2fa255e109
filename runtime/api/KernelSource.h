//===- KernelSource.h - Where a layer's kernels come from -------*- C++ -*-===//
//
// A KernelSource hands out the kernels of a layer from memory or from the
// disk cache (KernelCache.h). On its own it is the ahead-of-time runtime:
// it serves a cache that `moegen cache prefill` (or a JIT run) filled, and a
// layer that is not there is an error naming its key and the directory. The
// JIT (runtime/jit/Compiler.h) derives from it and compiles on a miss.
//
//   auto kernels = std::make_shared<moegen::runtime::KernelSource>();  // $MOEGEN_CACHE_DIR
//   auto set = kernels->getKernels(*spec);                 // (*set)->kernels: hsaco, metadata
//
// Thread-safe. With the JIT: one compile per (spec, target) per process,
// and per cache directory across processes.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_API_KERNELSOURCE_H
#define MOEGEN_RUNTIME_API_KERNELSOURCE_H

#include "compiler/spec/KernelFamily.h"
#include "compiler/spec/Spec.h"
#include "compiler/spec/TargetInfo.h"
#include "runtime/cache/KernelBinary.h"
#include "runtime/cache/KernelCache.h"
#include "runtime/cache/Log.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace moegen::runtime {

using cache::CacheStats;
using cache::KernelBinary;
using cache::KernelSet;

/// What the kernels are generated for. Every field is part of the cache key.
struct Target {
  std::string chip = TargetInfo::kDefaultChip.str();
  /// Target-ID features, e.g. "sramecc+:xnack-"; "" = any. moegen's code
  /// objects are feature-agnostic today, so this only separates cache entries.
  std::string features;
  int codeObjectVersion = 6;

  /// "amdgcn-amd-amdhsa--gfx950[:features];cov6".
  std::string id() const;
};

struct KernelSourceOptions {
  /// The disk cache's root; "" = $MOEGEN_CACHE_DIR, else
  /// $XDG_CACHE_HOME/moegen, else ~/.cache/moegen.
  std::string cacheDir;
  /// false: memory cache only.
  bool diskCache = true;
  /// The LLVM optimization level the kernels are (or were) compiled at:
  /// part of the cache key.
  int optLevel = 3;
  /// Where warnings go; empty = the process-wide handler (stderr).
  LogHandler log;
};

/// A layer with its cache key computed once. getKernels() on it skips the
/// canonical printing and hashing of the spec, so a memory hit is one
/// hash-map lookup (tens of ns instead of a few us).
struct PreparedLayer {
  MoeSpec spec;
  Target target;
  /// Only these kernel families of the layer (empty: every kernel). A target
  /// without templates for some families (sm_90a so far) builds, caches and
  /// runs the others this way; the subset is part of the cache key.
  std::vector<KernelFamily> families;
  cache::CacheKey key;
};

class KernelSource {
public:
  explicit KernelSource(KernelSourceOptions options = {});
  virtual ~KernelSource();
  KernelSource(const KernelSource &) = delete;
  KernelSource &operator=(const KernelSource &) = delete;

  /// Whether `spec` is a layer moegen can generate for `target`: the spec
  /// limits and every kernel template's rules. Errors name the stage, the
  /// parameter and the numbers, at the spec's file:line:col when it has one.
  /// With `families`, only the rules of those kernels (and that the layer has
  /// them) are checked.
  virtual llvm::Error verify(const MoeSpec &spec, const Target &target = Target(),
                             llvm::ArrayRef<KernelFamily> families = {}) const;

  /// Every kernel of the layer `spec` describes, for `target` (with
  /// `families`: those kernels only, see PreparedLayer).
  llvm::Expected<std::shared_ptr<const KernelSet>>
  getKernels(const MoeSpec &spec, const Target &target = Target(),
             llvm::ArrayRef<KernelFamily> families = {});

  PreparedLayer prepare(const MoeSpec &spec, const Target &target = Target(),
                        llvm::ArrayRef<KernelFamily> families = {}) const;
  llvm::Expected<std::shared_ptr<const KernelSet>> getKernels(const PreparedLayer &layer);

  /// The kernel of one family of the layer.
  llvm::Expected<std::shared_ptr<const KernelBinary>>
  getKernel(const MoeSpec &spec, const Target &target, KernelFamily family);

  /// The cache key of a layer (also what `moegen cache ls` shows).
  cache::CacheKey unitKey(const MoeSpec &spec, const Target &target,
                          llvm::ArrayRef<KernelFamily> families = {}) const;

  CacheStats stats() const;
  cache::KernelCache &kernelCache() { return *cacheImpl; }
  const KernelSourceOptions &options() const { return opts; }

protected:
  /// Produces the kernels of a layer missing from the cache, exactly as
  /// `planned` lists them. The ahead-of-time source cannot: its error names
  /// the layer, its key and the cache directory.
  virtual llvm::Expected<std::vector<KernelBinary>>
  compileMissing(const PreparedLayer &layer, const TargetInfo &target,
                 llvm::ArrayRef<cache::PlannedKernel> planned);

private:
  cache::CacheKey computeUnitKey(const MoeSpec &spec, const Target &target,
                                 llvm::ArrayRef<KernelFamily> families) const;

  KernelSourceOptions opts;
  std::unique_ptr<cache::KernelCache> cacheImpl;
  // Spec -> key memo: a structural hash and equality instead of printing
  // and hashing the canonical text on every lookup.
  struct MemoEntry {
    MoeSpec spec;
    Target target;
    cache::CacheKey key;
  };
  mutable std::mutex memoMutex;
  mutable std::unordered_map<size_t, std::vector<MemoEntry>> keyMemo;
  mutable size_t memoSize = 0;
};

} // namespace moegen::runtime

#endif // MOEGEN_RUNTIME_API_KERNELSOURCE_H
