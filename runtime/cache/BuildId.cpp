//===- BuildId.cpp - The moegen build id ----------------------------------===//
//
// MOEGEN_BUILD_ID is generated at build time from the sources of the compiler
// (compiler/, dialects/, templates/): any change to code generation changes
// every cache key, without hashing libraries at run time.
//
//===----------------------------------------------------------------------===//

#include "runtime/cache/CacheKey.h"

#include "runtime/cache/BuildId.inc"

namespace moegen::cache {

llvm::StringRef buildId() { return MOEGEN_BUILD_ID; }

} // namespace moegen::cache
