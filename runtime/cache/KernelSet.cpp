//===- KernelSet.cpp - The kernels of one compile unit --------------------===//
//
// Apart from the cache so that what only reads a kernel set (the family
// launchers, moegen-cuda-check's static build) links without the cache.
//
//===----------------------------------------------------------------------===//

#include "runtime/cache/KernelCache.h"

namespace moegen::cache {

std::shared_ptr<const KernelBinary> KernelSet::find(KernelFamily family) const {
  for (const auto &k : kernels)
    if (k->meta.family == family)
      return k;
  return nullptr;
}

} // namespace moegen::cache
