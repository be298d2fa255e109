//===- CacheCliMain.cpp - `moegen cache` as a program of its own ----------===//
//
// The test suite drives the cache subcommand through this driver, so it is
// tested whether or not the moegen CLI links it: `moegen-cache-cli ARGS`
// runs `moegen cache ARGS`.
//
//===----------------------------------------------------------------------===//

#include "tools/moegen/Args.h"

#include "llvm/Support/InitLLVM.h"

#include <vector>

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  std::vector<const char *> args{argv[0], "cache"};
  args.insert(args.end(), argv + 1, argv + argc);
  return moegen::cli::runCommandLine(static_cast<int>(args.size()), args.data());
}
