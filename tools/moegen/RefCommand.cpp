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
#include "tools/moegen/Commands.h"

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

int runRef(int argc, const char **argv) {
  ArgReader args("ref", argc, argv);
  std::string specPath, out, value;
  std::optional<int64_t> tokens;
  uint64_t seed = 0;
  std::vector<std::string> overrides;
  num::RefBundleOptions opts;
  while (!args.done() && !args.failed()) {
    if (args.flag("--tokens", value)) {
      tokens = parsePositive(args, "--tokens", value);
    } else if (args.flag("--seed", value)) {
      if (llvm::StringRef(value).getAsInteger(0, seed))
        args.error("--seed: expected an unsigned integer, got '" + value + "'");
    } else if (args.flag("--out", value) || args.flag("-o", value)) {
      out = value;
    } else if (args.flag("--set", value)) {
      overrides.push_back(value);
    } else if (args.flag("--accum", value)) {
      if (value == "f32" || value == "f64")
        opts.ref.accum = value == "f32" ? num::Accum::F32 : num::Accum::F64;
      else
        args.error("--accum: expected f32 or f64, got '" + value + "'");
    } else if (args.flag("--fused-quant-rounding", value)) {
      opts.ref.fusedQuantRounding = num::parseScaleRounding(value);
      if (!opts.ref.fusedQuantRounding)
        args.error("--fused-quant-rounding: expected roundup, ocp, even or fused_epilogue, "
                   "got '" +
                   value + "'");
    } else if (auto p = args.positional()) {
      if (!specPath.empty())
        args.error("more than one spec given ('" + specPath + "' and '" + *p + "')");
      specPath = *p;
    } else {
      args.unknown();
    }
  }
  if (!args.failed() && (specPath.empty() || !tokens || out.empty()))
    args.error("usage: moegen ref SPEC.moe --tokens N [--seed S] --out DIR");
  if (args.failed())
    return 2;
  opts.seed = seed;

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
