//===- TuneManifestFuzzer.cpp - Fuzz the tuning manifest reader -----------===//
//
// The input is a manifest (tune-manifest.txt, which moegen-tune-device reads
// from a cache directory). A manifest that parses is printed, and the printed
// text must parse again and print the same (print is a fixed point), with
// every pair's candidates in range.
//
//===----------------------------------------------------------------------===//

#include "tune/Manifest.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>

using namespace moegen::tune;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  auto m = Manifest::parse(input, "fuzz.txt");
  if (!m) {
    llvm::consumeError(m.takeError());
    return 0;
  }
  for (const ManifestPair &p : m->pairs)
    if (p.s1 >= m->candidates.size() || p.s2 >= m->candidates.size() || !m->pairOf(p.s1, p.s2)) {
      llvm::errs() << "a pair names a candidate out of range\n";
      std::abort();
    }
  std::string printed = m->print();
  auto again = Manifest::parse(printed, "printed.txt");
  if (!again) {
    llvm::errs() << "the printed manifest does not parse: " << llvm::toString(again.takeError())
                 << "\n--- printed ---\n"
                 << printed;
    std::abort();
  }
  if (again->print() != printed) {
    llvm::errs() << "printing the manifest again changes it\n--- printed ---\n"
                 << printed << "--- printed again ---\n"
                 << again->print();
    std::abort();
  }
  return 0;
}
