//===- FmtCommand.cpp - moegen fmt ----------------------------------------===//
//
//   moegen fmt SPEC.moe [--set key=value ...] [--emit moe|mlir]
//
// Parses a .moe file (or `-` for stdin) and prints it in canonical form, or
// as the `moe` dialect module the compiler starts from (--emit mlir).
//
//===----------------------------------------------------------------------===//

#include "tools/moegen/Args.h"

#include "compiler/pipeline/Pipeline.h"
#include "compiler/spec/DslParser.h"
#include "dialects/moe/SpecConversion.h"

#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/MemoryBuffer.h"

namespace moegen::cli {

namespace cl = llvm::cl;

static int runFmt();
static cl::SubCommand
    command("fmt", "print a .moe file in canonical form, or as the moe dialect (--emit mlir)");
static CommandRegistration registration(command, runFmt);

static cl::opt<std::string> specArg(cl::Positional, cl::desc("<spec.moe | ->"), cl::sub(command),
                                    cl::cat(moegenCategory()));
static cl::opt<std::string>
    emitArg("emit",
            cl::desc("what to print: moe (the canonical .moe) or mlir "
                     "(the moe dialect module the compiler starts from); default moe"),
            cl::value_desc("moe|mlir"), cl::init("moe"), cl::sub(command),
            cl::cat(moegenCategory()));
static SpecOverrideOption setArgs(command);

static int runFmt() {
  std::string path = specArg, emit = emitArg;
  std::vector<std::string> overrides = setArgs.values();
  if (emit != "moe" && emit != "mlir")
    return usageError("fmt", "--emit: expected moe or mlir, got '" + emit + "'");
  if (path.empty())
    return usageError("fmt", "no spec given; usage: moegen fmt SPEC.moe [--emit moe|mlir]");

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
  auto module =
      moe::buildLayerModule(&ctx, *spec, moe::TargetAttr::get(&ctx, TargetInfo::kDefaultChip, 6));
  if (!module)
    return 1; // the diagnostic is printed already
  module->print(llvm::outs());
  llvm::outs() << "\n";
  return 0;
}

} // namespace moegen::cli
