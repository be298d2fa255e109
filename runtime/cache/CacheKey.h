//===- CacheKey.h - Keys of the kernel cache --------------------*- C++ -*-===//
//
// A key is the BLAKE3-256 digest of a canonical, versioned serialisation of
// everything that changes the generated code: the moegen build id (a hash of
// the compiler's sources, computed at build time), the LLVM version, the
// target (chip, target-ID features, code object version) and the identity
// of what is compiled (the canonical .moe text of the spec plus the compile
// options). A compile unit (one spec) has a unit key; each kernel it yields
// has a kernel key derived from the unit key, its family and its symbol.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_CACHE_CACHEKEY_H
#define MOEGEN_RUNTIME_CACHE_CACHEKEY_H

#include "compiler/spec/KernelFamily.h"

#include "llvm/ADT/StringRef.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

namespace moegen::cache {

struct CacheKey {
  std::array<uint8_t, 32> digest{};

  /// 64 lowercase hex digits: the entry's file name.
  std::string hex() const;
  static std::optional<CacheKey> fromHex(llvm::StringRef hex);
  bool operator==(const CacheKey &) const = default;
};

struct CacheKeyHash {
  size_t operator()(const CacheKey &k) const {
    size_t h;
    std::memcpy(&h, k.digest.data(), sizeof(h));
    return h;
  }
};

/// "<version>+<hash of the compiler's sources>", fixed at build time.
llvm::StringRef buildId();

/// The LLVM release the compiler links ("22.1.8").
llvm::StringRef llvmVersion();

/// The key of a compile unit: `target` names the chip, features and code
/// object version; `identity` is the canonical text of what is compiled.
CacheKey makeUnitKey(llvm::StringRef target, llvm::StringRef identity);

/// The key of one kernel of a unit.
CacheKey makeKernelKey(const CacheKey &unit, KernelFamily family, llvm::StringRef symbol);

} // namespace moegen::cache

#endif // MOEGEN_RUNTIME_CACHE_CACHEKEY_H
