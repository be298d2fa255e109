//===- PtxGridWaitFuzzer.cpp - Fuzz the cuda backend's PTX entry scan -----===//
//
// The input is PTX text (the cuda backend reads it when it loads a code
// object). Every entry reported as waiting is a name that follows `.entry`
// in the input, and the scan of the same text gives the same answer.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/PtxGridWait.h"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef ptx(reinterpret_cast<const char *>(data), size);
  llvm::StringSet<> waiting = moegen::cuda::ptxEntriesThatWait(ptx);
  for (const auto &entry : waiting) {
    llvm::StringRef name = entry.getKey();
    if (name.empty() || !ptx.contains(name) || !ptx.contains(".entry"))
      std::abort();
  }
  if (moegen::cuda::ptxEntriesThatWait(ptx).size() != waiting.size())
    std::abort();
  return 0;
}
