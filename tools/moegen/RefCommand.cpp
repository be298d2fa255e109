//===- RefCommand.cpp - moegen ref ----------------------------------------===//
//
//   moegen ref SPEC.moe --tokens N [--seed S] --out DIR
//              [--set key=value]... [--accum f32|f64]
//              [--fused-quant-rounding roundup|ocp|even|fused_epilogue]
//
// Generates the layer's inputs from the seed, runs the reference and writes
// every tensor as .npy into DIR (see runtime/numerics/RefBundle.h). The spec
// is verified as `moegen compile` does, and nothing is written on an error.
//
//===----------------------------------------------------------------------===//

#include "tools/moegen/Args.h"

#include "compiler/spec/DslParser.h"
#include "compiler/spec/SpecLimits.h"
#include "runtime/numerics/RefBundle.h"
#include "templates/LayerRules.h"

#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

namespace moegen::cli {

/// The reference follows the rules of the kernels it checks: the same checks
/// as moe-verify-schedule, reported the same way ("file:line:col: error:
/// stage1: ..."), before anything is generated or written.
static bool verifySchedule(const MoeSpec &spec) {
  if (llvm::Error e = verifyLayerRules(spec, TargetInfo::defaultTarget())) {
    llvm::errs() << llvm::toString(std::move(e)) << "\n";
    return false;
  }
  return true;
}

namespace cl = llvm::cl;

static int runRef();
static cl::SubCommand command("ref",
                              "generate inputs and reference outputs of a layer as .npy files");
static CommandRegistration registration(command, runRef);

static cl::opt<std::string> specArg(cl::Positional, cl::desc("<spec.moe>"), cl::sub(command),
                                    cl::cat(moegenCategory()));
static cl::opt<long long, false, PositiveParser>
    tokensArg("tokens", cl::desc("tokens of the layer's input (required)"), cl::sub(command),
              cl::cat(moegenCategory()));
static cl::opt<unsigned long long, false, UnsignedParser>
    seedArg("seed", cl::desc("seed of the generated inputs (default 0)"), cl::init(0),
            cl::sub(command), cl::cat(moegenCategory()));
static cl::opt<std::string> outArg("out",
                                   cl::desc("directory of the .npy files (required; also -o)"),
                                   cl::value_desc("dir"), cl::sub(command),
                                   cl::cat(moegenCategory()));
static cl::alias outShortArg("o", cl::desc("alias for --out"), cl::aliasopt(outArg),
                             cl::cat(moegenCategory()));
static SpecOverrideOption setArgs(command);
static cl::opt<std::string> accumArg("accum",
                                     cl::desc("accumulation of the reference GEMMs (default f32)"),
                                     cl::value_desc("f32|f64"), cl::sub(command),
                                     cl::cat(moegenCategory()));
static cl::opt<std::string>
    roundingArg("fused-quant-rounding",
                cl::desc("e8m0 scale rounding of the reference's fused stage-1 quantization "
                         "(default: the kernels' rule)"),
                cl::value_desc("roundup|ocp|even|fused_epilogue"), cl::sub(command),
                cl::cat(moegenCategory()));

static int runRef() {
  std::string specPath = specArg, out = outArg;
  std::vector<std::string> overrides = setArgs.values();
  num::RefBundleOptions opts;
  opts.seed = seedArg;
  if (accumArg.getNumOccurrences()) {
    if (accumArg != "f32" && accumArg != "f64")
      return usageError("ref", "--accum: expected f32 or f64, got '" + accumArg + "'");
    opts.ref.accum = accumArg == "f32" ? num::Accum::F32 : num::Accum::F64;
  }
  if (roundingArg.getNumOccurrences()) {
    opts.ref.fusedQuantRounding = num::parseScaleRounding(roundingArg);
    if (!opts.ref.fusedQuantRounding)
      return usageError("ref", "--fused-quant-rounding: expected roundup, ocp, even or "
                               "fused_epilogue, got '" +
                                   roundingArg + "'");
  }
  if (specPath.empty() || !tokensArg.getNumOccurrences() || out.empty())
    return usageError("ref", llvm::Twine("missing ") +
                                 (specPath.empty()                 ? "the spec"
                                  : !tokensArg.getNumOccurrences() ? "--tokens"
                                                                   : "--out") +
                                 "; usage: moegen ref SPEC.moe --tokens N [--seed S] --out DIR");
  std::optional<int64_t> tokens = tokensArg;

  auto fail = [&](llvm::Error err) {
    llvm::WithColor::error(llvm::errs(), "moegen ref") << llvm::toString(std::move(err)) << "\n";
    return 1;
  };
  if (llvm::Error e = checkTokenCount(*tokens, "--tokens"))
    return fail(std::move(e));
  auto spec = loadMoeSpec(specPath, overrides);
  if (!spec) {
    printError(spec.takeError());
    return 1;
  }
  if (!verifySchedule(*spec))
    return 1;
  auto summary = num::writeReferenceBundle(*spec, *tokens, out, opts);
  if (!summary)
    return fail(summary.takeError());
  llvm::outs() << spec->name << ": wrote " << out << "\n" << summary->text();
  return 0;
}

} // namespace moegen::cli
