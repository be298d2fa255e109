//===- Exports.cpp - Entry points of the installed runtime library --------===//
//
// The installed libmoegen_runtime.so is linked from moegen's static
// libraries, so it holds only what something references. Host applications
// also parse .moe files, prepare inputs in the kernels' layouts and check
// results against the reference, which the runtime itself never calls:
// referencing them here keeps them in.
//
//===----------------------------------------------------------------------===//

#include "compiler/spec/DslParser.h"
#include "runtime/cache/CacheKey.h"
#include "runtime/numerics/Compare.h"
#include "runtime/numerics/InputGen.h"
#include "runtime/numerics/Preshuffle.h"
#include "runtime/numerics/Reference.h"
#include "runtime/numerics/Sorting.h"

namespace moegen::runtime {

/// The moegen build the library was made from ("0.1.0+<hash>").
const char *libraryBuildId() { return cache::buildId().data(); }

[[gnu::used]] const void *const kExportedEntryPoints[] = {
    reinterpret_cast<const void *>(&parseMoeSpec),
    reinterpret_cast<const void *>(&parseMoeSpecFile),
    reinterpret_cast<const void *>(&applySpecOverride),
    reinterpret_cast<const void *>(&parseActivation),
    reinterpret_cast<const void *>(&printMoeSpec),
    reinterpret_cast<const void *>(&printActivation),
    reinterpret_cast<const void *>(&num::sortMoe),
    reinterpret_cast<const void *>(&num::maxNumTokensPadded),
    reinterpret_cast<const void *>(&num::maxNumMBlocks),
    reinterpret_cast<const void *>(&num::generateInputs),
    reinterpret_cast<const void *>(&num::referenceLayer),
    reinterpret_cast<const void *>(&num::shuffleWeight16x16),
    reinterpret_cast<const void *>(&num::packWeights),
    reinterpret_cast<const void *>(&num::interleaveGateUp),
    reinterpret_cast<const void *>(&num::e8m0Shuffle),
    reinterpret_cast<const void *>(&num::makeBf16),
    reinterpret_cast<const void *>(&num::decode),
    reinterpret_cast<const void *>(&num::compareTensors),
    reinterpret_cast<const void *>(&num::packedBytes),
};

} // namespace moegen::runtime
