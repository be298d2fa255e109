//===- RunCommand.cpp - moegen run ----------------------------------------===//
//
//   moegen run SPEC.moe --tokens N --backend emu [--seed S] [--inputs DIR] [--set key=value ...]
//
// Compiles the layer and runs it through MoeLayer (as host applications do)
// on the backend with inputs generated from the seed (or read from DIR, as
// `moegen ref` writes them), and prints the decode-first error metrics
// of each stage and of the layer against the reference. Exits non-zero when a
// stage exceeds the tolerance its formats imply.
//
//===----------------------------------------------------------------------===//

#include "tools/moegen/Args.h"
#include "tools/moegen/Commands.h"

#include "compiler/Compiler.h"
#include "compiler/spec/DslParser.h"
#include "compiler/spec/SpecLimits.h"
#include "runtime/backend/EmuBackend.h"
#include "runtime/check/LayerCheck.h"

#include "llvm/Support/Threading.h"
#include "llvm/Support/WithColor.h"

namespace moegen::cli {

int runRun(int argc, const char **argv) {
  ArgReader args("run", argc, argv);
  std::string path, backendName = "emu", value;
  std::vector<std::string> overrides;
  LayerCheckOptions options;
  while (!args.done() && !args.failed()) {
    if (args.flag("--tokens", value)) {
      if (auto v = parsePositive(args, "--tokens", value))
        options.tokens = *v;
    } else if (args.flag("--seed", value)) {
      if (llvm::StringRef(value).getAsInteger(10, options.seed))
        args.error("--seed: expected an unsigned integer, got '" + value + "'");
    } else if (args.flag("--inputs", value)) {
      options.inputsDir = value;
    } else if (args.flag("--backend", value)) {
      backendName = value;
    } else if (args.flag("--set", value)) {
      overrides.push_back(value);
    } else if (auto p = args.positional()) {
      path = *p;
    } else {
      args.unknown();
    }
  }
  if (!args.failed() && path.empty())
    args.error("no spec given; usage: moegen run SPEC.moe --tokens N --backend emu [--seed S]");
  if (!args.failed() && backendName != "emu")
    args.error("--backend: '" + backendName +
               "' is not available here; backends: emu (the hip backend runs through the "
               "runtime API on a gfx950)");
  if (!args.failed())
    if (llvm::Error e = checkTokenCount(options.tokens, "--tokens"))
      args.error(llvm::toString(std::move(e)));
  if (args.failed())
    return 2;

  auto spec = loadMoeSpec(path, overrides);
  if (!spec) {
    printError(spec.takeError());
    return 1;
  }
  auto fail = [](llvm::Error e) {
    llvm::WithColor::error(llvm::errs(), "moegen run") << llvm::toString(std::move(e)) << "\n";
    return 1;
  };
  if (options.inputsDir.empty())
    if (llvm::Error e = checkHostMemory(*spec, options.tokens, physicalMemoryBytes()))
      return fail(std::move(e));
  CompileOptions compileOptions;
  if (llvm::Error e = verifyLayer(*spec, compileOptions)) {
    llvm::errs() << llvm::toString(std::move(e)) << "\n";
    return 1;
  }
  // Workgroups spread over the host's cores: with atomic stage-2 reduction
  // the order of the bf16 additions then varies from run to run, which the
  // stage-2 check allows for (any order the hardware could pick).
  emu::Options emuOptions;
  emuOptions.Threads = llvm::heavyweight_hardware_concurrency().compute_thread_count();
  std::unique_ptr<runtime::Backend> backend = runtime::createEmuBackend(emuOptions);
  auto result = runLayerCheck(*spec, *backend, options);
  if (!result)
    return fail(result.takeError());
  llvm::outs() << spec->name << " (" << precisionTag(spec->formats) << ") on " << backendName
               << ", " << result->tokens << " tokens, "
               << (options.inputsDir.empty() ? "seed " + std::to_string(options.seed)
                                             : "inputs from " + options.inputsDir)
               << "\n"
               << result->table();
  return result->passed() ? 0 : 1;
}

} // namespace moegen::cli
