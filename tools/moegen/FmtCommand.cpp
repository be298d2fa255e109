//===- FmtCommand.cpp - moegen fmt ----------------------------------------===//
//
//   moegen fmt SPEC.moe [--set key=value ...] [--emit moe|mlir]
//
// Parses a .moe file (or `-` for stdin) and prints it in canonical form, or
// as the `moe` dialect module the compiler starts from (--emit mlir).
//
//===----------------------------------------------------------------------===//

#include "tools/moegen/Args.h"
#include "tools/moegen/Commands.h"

#include "compiler/pipeline/Pipeline.h"
#include "compiler/spec/DslParser.h"
#include "dialects/moe/SpecConversion.h"

#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/MemoryBuffer.h"

namespace moegen::cli {

int runFmt(int argc, const char **argv) {
  ArgReader args("fmt", argc, argv);
  std::string path, emit = "moe", value;
  std::vector<std::string> overrides;
  while (!args.done() && !args.failed()) {
    if (args.flag("--emit", value)) {
      if (value != "moe" && value != "mlir")
        args.error("--emit: expected moe or mlir, got '" + value + "'");
      emit = value;
    } else if (args.flag("--set", value))
      overrides.push_back(value);
    else if (auto p = args.positional())
      path = *p;
    else
      args.unknown();
  }
  if (!args.failed() && path.empty())
    args.error("no spec given; usage: moegen fmt SPEC.moe [--emit moe|mlir]");
  if (args.failed())
    return 2;

  auto spec = loadMoeSpec(path, overrides);
  if (!spec) {
    printError(spec.takeError());
    return 1;
  }
  if (emit == "moe") {
    llvm::outs() << printMoeSpec(*spec);
    return 0;
  }
  mlir::DialectRegistry registry;
  registerMoegenDialects(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  auto module = moe::buildLayerModule(&ctx, *spec, moe::TargetAttr::get(&ctx, "gfx950", 6));
  if (!module)
    return 1; // the diagnostic is printed already
  module->print(llvm::outs());
  llvm::outs() << "\n";
  return 0;
}

} // namespace moegen::cli
