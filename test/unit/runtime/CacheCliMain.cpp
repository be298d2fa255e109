//===- CacheCliMain.cpp - `moegen cache` as a program of its own ----------===//
//
// The test suite drives the cache subcommand through this driver, so it is
// tested whether or not the moegen CLI links it.
//
//===----------------------------------------------------------------------===//

#include "llvm/Support/InitLLVM.h"

namespace moegen::cli {
int runCache(int argc, const char **argv);
} // namespace moegen::cli

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  return moegen::cli::runCache(argc, const_cast<const char **>(argv));
}
