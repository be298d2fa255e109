//===- TuneWorkerCommand.cpp - moegen tune-worker (a child of moegen tune) ===//
//
//   moegen tune-worker --spec CAND.moe --cache-dir DIR --tokens 1,16 [--chip C] [--plant-betas]
//
// Compiles one candidate layer into the disk cache at DIR (where the
// parent's checks find it) and prints, for each kernel and token count, its
// time by the latency model: "kernel <family> <symbol> <tokens> <us>", and
// the buffers the layer clears first as "kernel <family> memset:<what> ...",
// under the family that needs them cleared. For a chip the latency model does
// not know (--chip sm_90a) it compiles and prints nothing. Runs
// in its own process so that a compiler crash or hang costs only this
// candidate. Not listed in `moegen --help`.
//
// --plant-betas is a test hook: the kernels are built with every activation
// parameter divided by 16 but stored under the candidate's names, as a tuner that
// passes the wrong parameters to the kernel would build them (aiter's
// SiTUv2 betas). Only the emulator's code is renamed; the parent's check
// must reject the candidate.
//
//===----------------------------------------------------------------------===//

#include "tools/moegen/Args.h"

#include "bench/latency_model/KernelEstimate.h"
#include "compiler/spec/DslParser.h"
#include "compiler/target/Disassembler.h"
#include "runtime/api/FamilyLaunchers.h"
#include "runtime/jit/Compiler.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

namespace moegen::cli {

namespace cl = llvm::cl;

static int runTuneWorker();
static cl::SubCommand command("tune-worker",
                              "(internal) compile and model one candidate of moegen tune");
static CommandRegistration registration(command, runTuneWorker, /*listed=*/false);

static cl::opt<std::string> specArg("spec", cl::desc("the candidate layer"),
                                    cl::value_desc("spec.moe"), cl::sub(command),
                                    cl::cat(moegenCategory()));
static cl::opt<std::string> cacheDirArg("cache-dir", cl::desc("the disk cache to compile into"),
                                        cl::value_desc("dir"), cl::sub(command),
                                        cl::cat(moegenCategory()));
static cl::list<long long> tokensArg("tokens", cl::desc("token counts to model"),
                                     cl::CommaSeparated, cl::sub(command),
                                     cl::cat(moegenCategory()));
static cl::opt<bool> crashArg("crash", cl::Hidden,
                              cl::desc("test hook: abort before compiling, as a compiler crash"),
                              cl::sub(command), cl::cat(moegenCategory()));
static cl::opt<std::string> chipArg("chip",
                                    cl::desc("the chip to compile for (default gfx950; only "
                                             "gfx950 is modelled)"),
                                    cl::init(TargetInfo::kDefaultChip.str()), cl::sub(command),
                                    cl::cat(moegenCategory()));
static cl::opt<bool> plantArg("plant-betas",
                              cl::desc("test hook: build the kernels with wrong activation "
                                       "parameters under the candidate's names"),
                              cl::sub(command), cl::cat(moegenCategory()));

namespace {

llvm::Error renameFunction(std::vector<uint8_t> &bitcode, llvm::StringRef from,
                           llvm::StringRef to) {
  llvm::LLVMContext ctx;
  llvm::StringRef bytes(reinterpret_cast<const char *>(bitcode.data()), bitcode.size());
  auto module = llvm::parseBitcodeFile(llvm::MemoryBufferRef(bytes, "planted"), ctx);
  if (!module)
    return module.takeError();
  llvm::Function *f = (*module)->getFunction(from);
  if (!f)
    return llvm::createStringError("planted kernel: no function '%s'", from.str().c_str());
  f->setName(to);
  llvm::SmallVector<char, 0> out;
  llvm::BitcodeWriter writer(out);
  writer.writeModule(**module);
  writer.writeSymtab();
  writer.writeStrtab();
  bitcode.assign(out.begin(), out.end());
  return llvm::Error::success();
}

/// The JIT, building a different layer than it is asked for (--plant-betas).
class PlantingCompiler : public runtime::Compiler {
public:
  using Compiler::Compiler;

protected:
  llvm::Expected<std::vector<runtime::KernelBinary>>
  compileMissing(const runtime::PreparedLayer &layer, const TargetInfo &target,
                 llvm::ArrayRef<cache::PlannedKernel> planned) override {
    runtime::PreparedLayer wrong = layer;
    if (wrong.spec.activation.params.empty())
      return llvm::createStringError("--plant-betas: the activation '%s' has no parameters",
                                     wrong.spec.activation.name.c_str());
    // Far below the values the activation sees: SiTUv2's tanh clamps are
    // the identity for inputs well under beta, so a larger beta would go
    // unnoticed.
    for (ActivationParam &p : wrong.spec.activation.params)
      p.value /= 16;
    auto kernels = Compiler::compileMissing(wrong, target, planned);
    if (!kernels)
      return kernels.takeError();
    for (runtime::KernelBinary &k : *kernels)
      for (const cache::PlannedKernel &p : planned)
        if (p.family == k.meta.family && p.symbol != k.meta.symbol) {
          if (llvm::Error e = renameFunction(k.bitcode, k.meta.symbol, p.symbol))
            return std::move(e);
          k.meta.symbol = p.symbol;
        }
    return kernels;
  }
};

latency::ModelledKernel modelled(const runtime::KernelBinary &k,
                                 std::shared_ptr<const latency::Program> program) {
  latency::ModelledKernel m;
  m.family = k.meta.family;
  m.signature.symbol = k.meta.symbol;
  m.signature.blockSize = k.meta.blockSize;
  for (const cache::ArgInfo &a : k.meta.args)
    m.signature.args.push_back({a.name, a.kind == cache::ArgKind::Pointer ? KernelArgKind::Pointer
                                        : a.kind == cache::ArgKind::I32   ? KernelArgKind::I32
                                                                          : KernelArgKind::F32});
  KernelResources &r = m.resources;
  r.symbol = k.meta.symbol;
  r.vgprs = k.meta.vgprs;
  r.agprs = k.meta.agprs;
  r.sgprs = k.meta.sgprs;
  r.ldsBytes = k.meta.ldsBytes;
  r.scratchBytes = k.meta.scratchBytes;
  r.vgprSpills = k.meta.vgprSpills;
  r.sgprSpills = k.meta.sgprSpills;
  r.kernargBytes = k.meta.kernargBytes;
  r.maxFlatWorkgroupSize = k.meta.blockSize;
  r.wavefrontSize = 64;
  r.codeBytes = k.meta.codeBytes;
  m.program = std::move(program);
  return m;
}

} // namespace

static int runTuneWorker() {
  auto fail = [](const llvm::Twine &msg) {
    llvm::WithColor::error(llvm::errs(), "moegen tune-worker") << msg << "\n";
    return 1;
  };
  // Options are read before compiling: linking (lld) resets LLVM's
  // command-line options, ours included.
  std::string specPath = specArg, cacheDir = cacheDirArg, chip = chipArg;
  std::vector<long long> tokens(tokensArg.begin(), tokensArg.end());
  bool plant = plantArg;
  if (crashArg) {
    llvm::errs() << "tune-worker: --crash: aborting\n";
    std::abort();
  }
  if (specPath.empty() || cacheDir.empty() || tokens.empty())
    return usageError("tune-worker", "usage: moegen tune-worker --spec CAND.moe --cache-dir DIR "
                                     "--tokens N,...");
  auto spec = parseMoeSpecFile(specPath);
  if (!spec)
    return fail(llvm::toString(spec.takeError()));
  runtime::CompilerOptions options;
  options.cacheDir = cacheDir;
  std::unique_ptr<runtime::Compiler> jit = plant ? std::make_unique<PlantingCompiler>(options)
                                                 : std::make_unique<runtime::Compiler>(options);
  runtime::Target target;
  target.chip = chip;
  auto set = jit->getKernels(*spec, target);
  if (!set)
    return fail(llvm::toString(set.takeError()));
  if (chip != TargetInfo::kDefaultChip)
    return 0; // compiled; the gfx950 model says nothing of another chip
  const latency::MachineModel machine;
  for (const auto &k : (*set)->kernels) {
    auto isa = disassembleCodeObject(
        llvm::ArrayRef<char>(reinterpret_cast<const char *>(k->hsaco.data()), k->hsaco.size()),
        TargetInfo::kDefaultChip);
    if (!isa)
      return fail(k->meta.symbol + ": " + llvm::toString(isa.takeError()));
    auto program = latency::parseIsa(*isa);
    if (!program)
      return fail(k->meta.symbol + ": " + llvm::toString(program.takeError()));
    latency::ModelledKernel m =
        modelled(*k, std::make_shared<const latency::Program>(std::move(*program)));
    for (long long t : tokens) {
      auto e = latency::estimateKernel(m, *spec, t, machine);
      if (!e)
        return fail(k->meta.symbol + " at " + llvm::Twine(t) +
                    " tokens: " + llvm::toString(e.takeError()));
      llvm::outs() << "kernel " << toString(k->meta.family) << " " << k->meta.symbol << " " << t
                   << " " << llvm::format("%.9g", e->time.totalUs) << "\n";
    }
  }
  // What MoeLayer::run clears before the kernels (MoeLayer.cpp), as a fill
  // at the HBM bandwidth plus a launch, charged to the stage that needs it:
  // split-K partials and fused/inter-stage scales to stage 1, the atomic
  // output to stage 2, the input scales to neither.
  runtime::LayerPlan plan = runtime::LayerPlan::make(*spec, **set, TargetInfo::defaultTarget());
  for (long long t : tokens) {
    runtime::WorkspaceLayout ws = plan.layout(t);
    auto fill = [&](llvm::StringRef what, KernelFamily family, size_t bytes) {
      double us = machine.launchUs + double(bytes) / machine.hbmBytesPerSecond * 1e6;
      llvm::outs() << "kernel " << toString(family) << " memset:" << what << " " << t << " "
                   << llvm::format("%.9g", us) << "\n";
    };
    std::pair<const char *, const runtime::WorkspaceRegion *> stage1Regions[] = {
        {"partials", &ws.partials},
        {"stage1_out_scale", &ws.stage1OutScale},
        {"inter_q_scale", &ws.interQScale}};
    for (auto [what, reg] : stage1Regions)
      if (reg->zeroed && reg->bytes)
        fill(what, KernelFamily::Stage1, reg->bytes);
    for (auto [what, reg] :
         {std::pair{"input_q_scale", &ws.inputQScale}, std::pair{"no_scale", &ws.noScale}})
      if (reg->zeroed && reg->bytes)
        fill(what, KernelFamily::QuantInput, reg->bytes);
    if (plan.atomicOutput())
      fill("output", KernelFamily::Stage2, size_t(t) * spec->problem.modelDim * 2);
  }
  return 0;
}

} // namespace moegen::cli
