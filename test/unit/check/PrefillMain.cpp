//===- PrefillMain.cpp - Fills a kernel cache with the JIT, for tests -----===//
//
//   moegen-test-prefill SPEC.moe DIR [CHIP [FAMILY,...]] [--set key=value]...
//
// Compiles the layer (only those families, when given) for CHIP (default
// gfx950) into the disk cache DIR, as a JIT run or `moegen cache prefill`
// would, and prints "kernels N". The MLIR-free layer-check tests read it.
//
//===----------------------------------------------------------------------===//

#include "compiler/spec/DslParser.h"
#include "runtime/jit/Compiler.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace moegen;

int main(int argc, char **argv) {
  std::vector<std::string> positional, overrides;
  for (int i = 1; i < argc; ++i) {
    if (llvm::StringRef(argv[i]) == "--set" && i + 1 < argc)
      overrides.push_back(argv[++i]);
    else
      positional.push_back(argv[i]);
  }
  if (positional.size() < 2) {
    llvm::errs() << "usage: moegen-test-prefill SPEC.moe DIR [CHIP [FAMILY,...]]\n";
    return 1;
  }
  auto spec = loadMoeSpec(positional[0], overrides);
  if (!spec) {
    llvm::errs() << llvm::toString(spec.takeError()) << "\n";
    return 1;
  }
  runtime::Target target;
  if (positional.size() > 2)
    target.chip = positional[2];
  std::vector<KernelFamily> families;
  if (positional.size() > 3) {
    llvm::SmallVector<llvm::StringRef> names;
    llvm::SplitString(positional[3], names, ",");
    auto parsed = parseKernelFamilies(
        llvm::to_vector(llvm::map_range(names, [](llvm::StringRef n) { return n.str(); })));
    if (!parsed) {
      llvm::errs() << llvm::toString(parsed.takeError()) << "\n";
      return 1;
    }
    families = std::move(*parsed);
  }
  runtime::CompilerOptions options;
  options.cacheDir = positional[1];
  runtime::Compiler jit(options);
  auto kernels = jit.getKernels(*spec, target, families);
  if (!kernels) {
    llvm::errs() << llvm::toString(kernels.takeError()) << "\n";
    return 1;
  }
  llvm::outs() << "kernels " << (*kernels)->kernels.size() << "\n";
  return 0;
}
