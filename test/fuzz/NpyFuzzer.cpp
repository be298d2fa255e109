//===- NpyFuzzer.cpp - Fuzz the .npy reader -------------------------------===//
//
// The input is the bytes of a .npy file. An array that parses is encoded
// again; the encoding must parse back to the same descr, shape and data.
//
//===----------------------------------------------------------------------===//

#include "runtime/numerics/Npy.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>

using namespace moegen::num;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  auto arr = parseNpy(input, "fuzz.npy");
  if (!arr) {
    llvm::consumeError(arr.takeError());
    return 0;
  }
  std::string bytes = encodeNpy(arr->descr, arr->shape, arr->data);
  auto again = parseNpy(bytes, "encoded.npy");
  if (!again) {
    llvm::errs() << "the encoded array does not parse: " << llvm::toString(again.takeError())
                 << "\n";
    std::abort();
  }
  if (again->descr != arr->descr || again->shape != arr->shape || again->data != arr->data) {
    llvm::errs() << "the encoded array parses to a different array (descr '" << arr->descr
                 << "' -> '" << again->descr << "')\n";
    std::abort();
  }
  return 0;
}
