//===- CodeObjectFuzzer.cpp - Fuzz the code-object metadata reader --------===//
//
// The input is the bytes of a code object (ELF64 with an AMDGPU metadata
// note, as `moegen inspect` reads it). Errors are fine; for what reads, the
// occupancy is computed from each kernel's registers.
//
//===----------------------------------------------------------------------===//

#include "compiler/target/CodeObjectInfo.h"

#include <cstdint>
#include <cstring>
#include <vector>

using namespace moegen;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A copy with the alignment of a file read into memory: the ELF reader
  // reads headers in place.
  std::vector<uint64_t> aligned((size + 7) / 8);
  if (size)
    std::memcpy(aligned.data(), data, size);
  auto info = readCodeObjectInfo(
      llvm::ArrayRef<char>(reinterpret_cast<const char *>(aligned.data()), size));
  if (!info) {
    llvm::consumeError(info.takeError());
    return 0;
  }
  for (const KernelResources &k : info->kernels)
    (void)occupancyFromRegisters(k);
  return 0;
}
