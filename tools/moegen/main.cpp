//===- main.cpp - The moegen command-line tool ----------------------------===//
//
// The commands register themselves (Args.h); each lives in its own file.
//
//===----------------------------------------------------------------------===//

#include "tools/moegen/Args.h"

#include "llvm/Support/InitLLVM.h"

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  return moegen::cli::runCommandLine(argc, const_cast<const char **>(argv));
}
