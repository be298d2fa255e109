//===- CompileCommand.cpp - moegen compile --------------------------------===//
//
//   moegen compile SPEC.moe [--target gfx950|sm_90a] [--code-object-version 5|6]
//                  [--kernels quant_input,...] [--set stage1.k_batch=2 ...] [-o DIR]
//                  [--dump-ir DIR] [-j N] [--table CSV... --tokens N [--cu-num N]]
//
// Writes one .hsaco (gfx950) or .ptx (sm_90a) per kernel into DIR (default:
// the current directory) and prints the resource report. An invalid spec or schedule exits non-zero
// with its diagnostics and writes nothing. With --table and --tokens it compiles
// the schedules MoeLayer runs at that token count (runtime/api/LayerSchedule.h:
// the tier's tuned row, else aiter's heuristic, else the spec's own; the first
// that verifies) and says which.
//
//===----------------------------------------------------------------------===//

#include "tools/moegen/Args.h"
#include "tools/moegen/Report.h"

#include "compiler/Compiler.h"
#include "compiler/spec/DslParser.h"
#include "compiler/spec/SpecLimits.h"
#include "runtime/api/LayerSchedule.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

namespace moegen::cli {

static int runCompile();

namespace cl = llvm::cl;

static cl::SubCommand
    command("compile",
            "compile a .moe layer into gfx950 code objects (or sm_90a PTX) and print the report");
static CommandRegistration registration(command, runCompile);

static cl::opt<std::string> specArg(cl::Positional, cl::desc("<spec.moe>"), cl::sub(command),
                                    cl::cat(moegenCategory()));
static cl::opt<std::string>
    outDirArg("o",
              cl::desc("directory of the .hsaco (gfx950) or .ptx (sm_90a) files, created "
                       "(default: the current one)"),
              cl::value_desc("dir"), cl::init("."), cl::sub(command), cl::cat(moegenCategory()));
static SpecOverrideOption setArgs(command);
static cl::opt<std::string> targetArg("target",
                                      cl::desc("the chip to generate code for: gfx950 (default) "
                                               "or sm_90a"),
                                      cl::value_desc("chip"),
                                      cl::init(TargetInfo::kDefaultChip.str()), cl::sub(command),
                                      cl::cat(moegenCategory()));
static cl::opt<std::string> covArg("code-object-version",
                                   cl::desc("AMDHSA code object version: 5 or 6 (default 6)"),
                                   cl::value_desc("5|6"), cl::init("6"), cl::sub(command),
                                   cl::cat(moegenCategory()));
static cl::opt<std::string> dumpArg("dump-ir",
                                    cl::desc("write the IR of every stage (MLIR passes as a file "
                                             "tree, LLVM IR before and after O3, ISA) into dir"),
                                    cl::value_desc("dir"), cl::sub(command),
                                    cl::cat(moegenCategory()));
static cl::list<std::string>
    kernelsArg("kernels",
               cl::desc("only the kernels of these families (comma-separated, e.g. "
                        "quant_input,quant_inter); default: every kernel of the layer"),
               cl::value_desc("family,..."), cl::CommaSeparated, cl::sub(command),
               cl::cat(moegenCategory()));
static cl::opt<long long, false, PositiveParser>
    jobsArg("j", cl::desc("kernels compiled at once (default: one per hardware thread)"),
            cl::sub(command), cl::cat(moegenCategory()));

static cl::list<std::string>
    tableArgs("table",
              cl::desc("an aiter tuned CSV (repeatable): compile the schedules a layer runs at "
                       "--tokens (its tier's row, else aiter's heuristic, else the spec's)"),
              cl::value_desc("csv"), cl::sub(command), cl::cat(moegenCategory()));
static cl::opt<long long, false, PositiveParser>
    tokensArg("tokens", cl::desc("with --table: the token count whose schedules are compiled"),
              cl::sub(command), cl::cat(moegenCategory()));
static cl::opt<long long, false, PositiveParser>
    cuNumArg("cu-num", cl::desc("with --table: the tables' cu_num column (default 256)"),
             cl::init(256), cl::sub(command), cl::cat(moegenCategory()));

/// The schedules a layer of `spec` runs at `tokens` tokens with `tables`
/// (the first candidate that verifies), with where they come from.
static llvm::Expected<std::pair<MoeSpec, std::string>>
tierSchedules(const MoeSpec &spec, const std::vector<std::string> &tables, int64_t tokens,
              int64_t cuNum, const CompileOptions &options) {
  runtime::LayerOptions lo;
  lo.tunedTables = tables;
  lo.cuNum = cuNum;
  lo.target.chip = options.chip;
  auto scheduler = runtime::LayerScheduler::create(spec, lo);
  if (!scheduler)
    return scheduler.takeError();
  std::string refused;
  for (runtime::LayerScheduler::Candidate &c : (*scheduler)->candidates(tokens)) {
    if (llvm::Error e = verifyLayer(c.spec, options)) {
      refused += "\n  " + c.origin + ": " + llvm::toString(std::move(e));
      continue;
    }
    return std::make_pair(std::move(c.spec), c.origin);
  }
  return llvm::createStringError("no schedule of the tables or the spec verifies at " +
                                 std::to_string(tokens) + " tokens:" + refused);
}

static int runCompile() {
  std::string specPath = specArg, outDir = outDirArg;
  std::vector<std::string> overrides = setArgs.values();
  CompileOptions options;
  options.chip = targetArg;
  options.dumpDir = dumpArg;
  if (jobsArg.getNumOccurrences())
    options.threads = static_cast<unsigned>(std::min<int64_t>(jobsArg, 1024));
  if (covArg != "5" && covArg != "6")
    return usageError("compile", "--code-object-version: expected 5 or 6, got '" + covArg + "'");
  options.codeObjectVersion = covArg == "5" ? 5 : 6;
  auto families = parseKernelFamilies(kernelsArg);
  if (!families)
    return usageError("compile", "--kernels: " + llvm::toString(families.takeError()));
  options.families = std::move(*families);
  if (specPath.empty())
    return usageError("compile",
                      "no spec given; usage: moegen compile SPEC.moe [--set key=value] [-o DIR]");

  std::vector<std::string> tables(tableArgs.begin(), tableArgs.end());
  if (tables.empty() != (tokensArg.getNumOccurrences() == 0))
    return usageError("compile", "--table and --tokens go together: the tables' row of a token "
                                 "count");
  if (tokensArg.getNumOccurrences())
    if (llvm::Error e = checkTokenCount(tokensArg, "--tokens"))
      return usageError("compile", llvm::toString(std::move(e)));

  auto spec = loadMoeSpec(specPath, overrides);
  if (!spec) {
    printError(spec.takeError());
    return 1;
  }
  // Copied before anything compiles: LLVM's option parsing resets cl::opt values.
  const int64_t tokens = tokensArg, cuNum = cuNumArg;
  if (!tables.empty()) {
    auto tier = tierSchedules(*spec, tables, tokens, cuNum, options);
    if (!tier) {
      llvm::WithColor::error(llvm::errs(), "moegen compile")
          << llvm::toString(tier.takeError()) << "\n";
      return 1;
    }
    llvm::WithColor::note(llvm::errs(), "moegen compile")
        << tokens << " tokens: the schedules of " << tier->second << "\n";
    *spec = std::move(tier->first);
  } else if (llvm::Error e = verifyLayer(*spec, options)) {
    // Verify first (the tiers' schedules were): an invalid schedule must not
    // leave any file behind, not even the --dump-ir directory.
    llvm::errs() << llvm::toString(std::move(e)) << "\n";
    return 1;
  }
  auto layer = compileLayer(*spec, options);
  if (!layer) {
    llvm::WithColor::error(llvm::errs(), "moegen compile")
        << llvm::toString(layer.takeError()) << "\n";
    return 1;
  }
  if (std::error_code ec = llvm::sys::fs::create_directories(outDir)) {
    llvm::WithColor::error(llvm::errs(), "moegen compile")
        << "cannot create '" << outDir << "': " << ec.message() << "\n";
    return 1;
  }
  std::optional<TargetInfo> target = TargetInfo::forChip(options.chip, options.codeObjectVersion);
  std::string ext = target->codeObjectExtension().str();
  std::vector<ReportRow> rows;
  for (const CompiledKernel &k : layer->kernels) {
    // The PTX ends with the NUL the driver wants; the file holds the text.
    llvm::ArrayRef<char> bytes = k.code.hsaco;
    if (target->isNvptx() && !bytes.empty() && bytes.back() == '\0')
      bytes = bytes.drop_back();
    llvm::SmallString<256> path(outDir);
    llvm::sys::path::append(path, k.signature.symbol + "." + ext);
    if (llvm::Error e = writeFileAtomically(path, bytes)) {
      llvm::WithColor::error(llvm::errs(), "moegen compile")
          << llvm::toString(std::move(e)) << "\n";
      return 1;
    }
    rows.push_back({k.resources, k.compileMs});
  }
  for (const CompiledKernel &k : layer->kernels)
    for (const std::string &w : k.code.warnings)
      llvm::WithColor::warning(llvm::errs(), "moegen compile")
          << k.signature.symbol << ": " << w << "\n";
  // Spills are legal code but slow: say so. waves_per_eu caps occupancy
  // without a register budget, so only the tile itself can cause them.
  for (const CompiledKernel &k : layer->kernels) {
    const KernelResources &r = k.resources;
    if (r.vgprSpills + r.sgprSpills == 0 && r.scratchBytes == 0)
      continue;
    llvm::WithColor::warning(llvm::errs(), "moegen compile")
        << k.signature.symbol << " spills (" << r.vgprSpills << " VGPRs, " << r.sgprSpills
        << " SGPRs, " << r.scratchBytes << " bytes of scratch per lane): the " << toString(k.family)
        << " tile needs more registers than a lane has; a smaller tile "
        << "or a larger k_wave avoids it\n";
  }
  llvm::outs() << spec->name << " (" << precisionTag(spec->formats) << ", " << options.chip;
  if (target->isNvptx())
    llvm::outs() << ", PTX";
  else
    llvm::outs() << ", code object v" << options.codeObjectVersion;
  llvm::outs() << "): " << rows.size() << " kernel(s) in " << outDir << "\n";
  if (target->isNvptx()) {
    // Registers and spills are decided by ptxas in the driver at load.
    for (const CompiledKernel &k : layer->kernels) {
      llvm::outs() << k.signature.symbol << "  " << k.code.hsaco.size() - 1 << " bytes of PTX  "
                   << llvm::format("%.1f", k.compileMs) << " ms";
      // The shared memory each launch provides beyond the static 48 KiB.
      if (k.signature.dynamicSharedBytes > 0)
        llvm::outs() << "  " << k.signature.dynamicSharedBytes << " bytes of dynamic shared memory";
      llvm::outs() << "\n";
    }
    return 0;
  }
  printReport(llvm::outs(), rows);
  return 0;
}

} // namespace moegen::cli
