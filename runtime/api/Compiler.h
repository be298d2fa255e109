//===- Compiler.h - The runtime's JIT compiler handle -----------*- C++ -*-===//
//
// What a host application holds to get kernels: compile on first use, then
// from memory or from the disk cache (KernelCache.h).
//
//   moegen::runtime::Compiler jit;                       // $MOEGEN_CACHE_DIR, ...
//   auto spec = moegen::parseMoeSpecFile("layer.moe");
//   auto sort = jit.getKernel(*spec, moegen::runtime::Target(), "sort");
//   // (*sort)->hsaco, (*sort)->meta.args, (*sort)->meta.blockSize
//
// Thread-safe. One compile per (spec, target) per process, and per cache
// directory across processes.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_API_COMPILER_H
#define MOEGEN_RUNTIME_API_COMPILER_H

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

struct CompilerOptions {
  /// The disk cache's root; "" = $MOEGEN_CACHE_DIR, else
  /// $XDG_CACHE_HOME/moegen, else ~/.cache/moegen.
  std::string cacheDir;
  /// false: memory cache only.
  bool diskCache = true;
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
  cache::CacheKey key;
};

class Compiler {
public:
  explicit Compiler(CompilerOptions options = {});
  ~Compiler();
  Compiler(const Compiler &) = delete;
  Compiler &operator=(const Compiler &) = delete;

  /// Every kernel of the layer `spec` describes, compiled for `target` on
  /// first use. A spec that fails verification is an error naming the stage
  /// and parameter.
  llvm::Expected<std::shared_ptr<const KernelSet>> getKernels(const MoeSpec &spec,
                                                              const Target &target = Target());

  PreparedLayer prepare(const MoeSpec &spec, const Target &target = Target()) const;
  llvm::Expected<std::shared_ptr<const KernelSet>> getKernels(const PreparedLayer &layer);

  /// The kernel of one family ("sort", "stage1", ...) of the layer.
  llvm::Expected<std::shared_ptr<const KernelBinary>>
  getKernel(const MoeSpec &spec, const Target &target, llvm::StringRef family);

  /// The cache key of a layer (also what `moegen cache ls` shows).
  cache::CacheKey unitKey(const MoeSpec &spec, const Target &target) const;

  CacheStats stats() const;
  cache::KernelCache &kernelCache() { return *cacheImpl; }
  const CompilerOptions &options() const { return opts; }

private:
  cache::CacheKey computeUnitKey(const MoeSpec &spec, const Target &target) const;

  CompilerOptions opts;
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

#endif // MOEGEN_RUNTIME_API_COMPILER_H
