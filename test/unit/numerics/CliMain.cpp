//===- CliMain.cpp - A stand-alone driver of `ref` and `lookup` -----------===//
//
// Runs the two subcommands outside the full moegen binary (which needs the
// MLIR build): moegen-numerics-cli ref|lookup ARGS...
//
//===----------------------------------------------------------------------===//

#include "tools/moegen/Commands.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  llvm::StringRef cmd = argc > 1 ? argv[1] : "";
  const char **args = const_cast<const char **>(argv + 1);
  if (cmd == "ref")
    return moegen::cli::runRef(argc - 1, args);
  if (cmd == "lookup")
    return moegen::cli::runLookup(argc - 1, args);
  llvm::errs() << "usage: moegen-numerics-cli ref|lookup ARGS...\n";
  return 2;
}
