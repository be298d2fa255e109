//===- RunCommand.cpp - moegen run ----------------------------------------===//
//
//   moegen run SPEC.moe --tokens N --backend emu|cuda [--target gfx950|sm_90a]
//              [--seed S] [--inputs DIR] [--set key=value ...]
//
// Compiles the layer (for gfx950 on emu unless --target sm_90a, for sm_90a on
// cuda) and runs it
// through MoeLayer (as host applications do) on the backend with inputs generated from the seed (or
// read from DIR, as `moegen ref` writes them), and prints the decode-first error metrics of each
// stage and of the layer against the reference. Exits non-zero when a stage exceeds the tolerance
// its formats imply.
//
//===----------------------------------------------------------------------===//

#include "tools/moegen/Args.h"

#include "compiler/Compiler.h"
#include "compiler/spec/DslParser.h"
#include "compiler/spec/SpecLimits.h"
#include "runtime/backend/EmuBackend.h"
#include "runtime/check/LayerCheck.h"
#include "runtime/cuda/CudaBackend.h"
#include "runtime/jit/Compiler.h"

#include "llvm/Support/Threading.h"
#include "llvm/Support/WithColor.h"

namespace moegen::cli {

namespace cl = llvm::cl;

static int runRun();
static cl::SubCommand command("run", "run a layer on a backend and compare it with the reference");
static CommandRegistration registration(command, runRun);

static cl::opt<std::string> specArg(cl::Positional, cl::desc("<spec.moe>"), cl::sub(command),
                                    cl::cat(moegenCategory()));
static cl::opt<long long, false, PositiveParser>
    tokensArg("tokens", cl::desc("tokens of the layer's input (default 16)"),
              cl::init(LayerCheckOptions().tokens), cl::sub(command), cl::cat(moegenCategory()));
static cl::opt<unsigned long long, false, UnsignedParser>
    seedArg("seed", cl::desc("seed of the generated inputs (default 0)"),
            cl::init(LayerCheckOptions().seed), cl::sub(command), cl::cat(moegenCategory()));
static cl::opt<double> weightScaleArg(
    "weight-scale",
    cl::desc("multiply the generated weights' standard deviations by this (default 1; 64 "
             "gives MX weight scales above 2)"),
    cl::value_desc("F"), cl::init(LayerCheckOptions().weightScale), cl::sub(command),
    cl::cat(moegenCategory()));
static cl::opt<std::string> inputsArg("inputs",
                                      cl::desc("read the inputs `moegen ref` wrote into dir "
                                               "instead of generating them"),
                                      cl::value_desc("dir"), cl::sub(command),
                                      cl::cat(moegenCategory()));
static cl::opt<std::string>
    backendArg("backend",
               cl::desc("where the kernels run: emu (the default: the CPU emulator) or cuda "
                        "(an sm_90a GPU)"),
               cl::value_desc("name"), cl::init("emu"), cl::sub(command),
               cl::cat(moegenCategory()));
static cl::opt<std::string>
    targetArg("target",
              cl::desc("the chip the kernels are compiled for: gfx950 (emu's default) or sm_90a "
                       "(cuda's; on emu, the emulator runs the sm_90a kernels)"),
              cl::value_desc("chip"), cl::sub(command), cl::cat(moegenCategory()));
static SpecOverrideOption setArgs(command);

static int runRun() {
  std::string path = specArg, backendName = backendArg;
  std::vector<std::string> overrides = setArgs.values();
  LayerCheckOptions options;
  options.tokens = tokensArg;
  options.seed = seedArg;
  options.weightScale = weightScaleArg;
  options.inputsDir = inputsArg;
  if (path.empty())
    return usageError("run", "no spec given; usage: moegen run SPEC.moe --tokens N --backend emu "
                             "[--seed S]");
  if (backendName != "emu" && backendName != "cuda")
    return usageError("run", "--backend: '" + backendName +
                                 "' is not available here; backends: emu, cuda (the hip backend "
                                 "runs through the runtime API on a gfx950)");
  const bool cuda = backendName == "cuda";
  const llvm::StringRef hopper = TargetInfo::kHopperChip;
  std::string chip = !targetArg.empty() ? std::string(targetArg)
                     : cuda             ? hopper.str()
                                        : TargetInfo::kDefaultChip.str();
  if (!TargetInfo::forChip(chip))
    return usageError("run", "--target: '" + chip + "' is not a chip moegen generates code for; " +
                                 "chips: " + TargetInfo::supportedChips());
  if (cuda && chip != hopper)
    return usageError("run", "--target " + chip + " with --backend cuda: the cuda backend runs " +
                                 hopper + " code");
  if (llvm::Error e = checkTokenCount(options.tokens, "--tokens"))
    return usageError("run", llvm::toString(std::move(e)));

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
  // The cuda backend runs sm_90a code: a family without an sm_90a template
  // is refused here, by name (templates/TargetSupport).
  CompileOptions compileOptions;
  compileOptions.chip = options.target.chip = chip;
  if (llvm::Error e = verifyLayer(*spec, compileOptions)) {
    llvm::errs() << llvm::toString(std::move(e)) << "\n";
    return 1;
  }
  runtime::CompilerOptions jitOptions;
  jitOptions.diskCache = false;
  options.kernels = std::make_shared<runtime::Compiler>(jitOptions);
  // Workgroups spread over the host's cores: with atomic stage-2 reduction
  // the order of the bf16 additions then varies from run to run, which the
  // stage-2 check allows for (any order the hardware could pick).
  emu::Options emuOptions;
  emuOptions.Threads = llvm::heavyweight_hardware_concurrency().compute_thread_count();
  std::unique_ptr<runtime::Backend> backend;
  if (cuda) {
    auto b = runtime::createCudaBackend();
    if (!b)
      return fail(b.takeError());
    backend = std::move(*b);
  } else {
    backend = runtime::createEmuBackend(emuOptions);
  }
  auto result = runLayerCheck(*spec, *backend, options);
  if (!result)
    return fail(result.takeError());
  llvm::outs() << spec->name << " (" << precisionTag(spec->formats) << ") on " << backendName
               << (cuda || chip == TargetInfo::kDefaultChip ? "" : " (" + chip + ")") << ", "
               << result->tokens << " tokens, "
               << (options.inputsDir.empty() ? generatedInputsOf(options)
                                             : "inputs from " + options.inputsDir)
               << "\n"
               << result->table();
  return result->passed() ? 0 : 1;
}

} // namespace moegen::cli
