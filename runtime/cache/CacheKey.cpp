//===- CacheKey.cpp - Keys of the kernel cache ----------------------------===//

#include "runtime/cache/CacheKey.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/BLAKE3.h"

namespace moegen::cache {
namespace {

/// Fields are written as "name=<length>:<value>\n" so that no choice of
/// values can make two different field lists serialise alike.
class KeyWriter {
public:
  explicit KeyWriter(llvm::StringRef kind) { field("moegen-cache-key", kind); }
  void field(llvm::StringRef name, llvm::StringRef value) {
    hasher.update(name);
    hasher.update("=" + std::to_string(value.size()) + ":");
    hasher.update(value);
    hasher.update("\n");
  }
  CacheKey finish() {
    CacheKey k;
    hasher.final(k.digest);
    return k;
  }

private:
  llvm::BLAKE3 hasher;
};

} // namespace

std::string CacheKey::hex() const { return llvm::toHex(digest, /*LowerCase=*/true); }

std::optional<CacheKey> CacheKey::fromHex(llvm::StringRef hex) {
  if (hex.size() != 64)
    return std::nullopt;
  std::string bytes;
  if (!llvm::tryGetFromHex(hex, bytes) || bytes.size() != 32)
    return std::nullopt;
  CacheKey k;
  std::memcpy(k.digest.data(), bytes.data(), 32);
  return k;
}

llvm::StringRef llvmVersion() { return LLVM_VERSION_STRING; }

CacheKey makeUnitKey(llvm::StringRef target, llvm::StringRef identity) {
  KeyWriter w("unit/1");
  w.field("build", buildId());
  w.field("llvm", llvmVersion());
  w.field("target", target);
  w.field("identity", identity);
  return w.finish();
}

CacheKey makeKernelKey(const CacheKey &unit, KernelFamily family, llvm::StringRef symbol) {
  KeyWriter w("kernel/1");
  w.field("unit", unit.hex());
  w.field("family", toString(family));
  w.field("symbol", symbol);
  return w.finish();
}

} // namespace moegen::cache
