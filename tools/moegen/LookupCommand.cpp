//===- LookupCommand.cpp - moegen lookup ----------------------------------===//
//
//   moegen lookup --table CSV [--table CSV]... --tokens N
//                 ( --spec SPEC.moe | --model-dim K --inter-dim I --experts E
//                   --topk k --act situv2 --a-dtype mxfp4 --w-dtype mxfp4 )
//                 [--gfx gfx950] [--cu-num 256] [--dtype bf16] [--q-type per_1x32]
//                 [--doweight-stage1]
//
// Prints the token tier, every key tried, the row hit (file:line) or the
// fallback aiter takes, and the moegen schedules its kernels map to.
//
//===----------------------------------------------------------------------===//

#include "tools/moegen/Args.h"

#include "compiler/spec/DslParser.h"
#include "compiler/spec/TargetInfo.h"
#include "runtime/dispatch/Lookup.h"

#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

namespace moegen::cli {

namespace cl = llvm::cl;

static int runLookup();
static cl::SubCommand command("lookup", "show which aiter tuned-table row a token count uses");
static CommandRegistration registration(command, runLookup);

static cl::list<std::string>
    tableArgs("table",
              cl::desc("an aiter tuned CSV (repeatable; a duplicate key keeps the first row)"),
              cl::value_desc("csv"), cl::sub(command), cl::cat(moegenCategory()));
static cl::opt<long long, false, PositiveParser> tokensArg("tokens",
                                                           cl::desc("token count (required)"),
                                                           cl::sub(command),
                                                           cl::cat(moegenCategory()));
static cl::opt<std::string> specArg("spec",
                                    cl::desc("the layer whose key is looked up (else the "
                                             "problem options)"),
                                    cl::value_desc("spec.moe"), cl::sub(command),
                                    cl::cat(moegenCategory()));
static cl::opt<std::string> gfxArg("gfx", cl::desc("the table's gfx column (default gfx950)"),
                                   cl::value_desc("chip"), cl::init(TargetInfo::kDefaultChip.str()),
                                   cl::sub(command), cl::cat(moegenCategory()));
static cl::opt<long long, false, PositiveParser>
    cuNumArg("cu-num", cl::desc("the table's cu_num column (default 256)"), cl::init(256),
             cl::sub(command), cl::cat(moegenCategory()));
static cl::opt<long long, false, PositiveParser> modelDimArg("model-dim",
                                                             cl::desc("problem: model_dim"),
                                                             cl::sub(command),
                                                             cl::cat(moegenCategory()));
static cl::opt<long long, false, PositiveParser> interDimArg("inter-dim",
                                                             cl::desc("problem: inter_dim"),
                                                             cl::sub(command),
                                                             cl::cat(moegenCategory()));
static cl::opt<long long, false, PositiveParser> expertsArg("experts", cl::desc("problem: experts"),
                                                            cl::sub(command),
                                                            cl::cat(moegenCategory()));
static cl::opt<long long, false, PositiveParser>
    topkArg("topk", cl::desc("problem: topk"), cl::sub(command), cl::cat(moegenCategory()));
static cl::opt<std::string> actArg("act", cl::desc("activation, e.g. situv2 or silu"),
                                   cl::value_desc("name"), cl::sub(command),
                                   cl::cat(moegenCategory()));
static cl::opt<std::string> aDtypeArg("a-dtype", cl::desc("activation dtype, e.g. mxfp4"),
                                      cl::value_desc("dtype"), cl::sub(command),
                                      cl::cat(moegenCategory()));
static cl::opt<std::string> wDtypeArg("w-dtype", cl::desc("weight dtype, e.g. mxfp4"),
                                      cl::value_desc("dtype"), cl::sub(command),
                                      cl::cat(moegenCategory()));
static cl::opt<std::string> dtypeArg("dtype", cl::desc("the table's dtype column (default bf16)"),
                                     cl::value_desc("dtype"), cl::init("bf16"), cl::sub(command),
                                     cl::cat(moegenCategory()));
static cl::opt<std::string> qTypeArg("q-type",
                                     cl::desc("the table's q_type column (default per_1x32)"),
                                     cl::value_desc("type"), cl::init("per_1x32"), cl::sub(command),
                                     cl::cat(moegenCategory()));
static cl::opt<bool> doweightArg("doweight-stage1",
                                 cl::desc("the top-k weights are applied in stage 1"),
                                 cl::sub(command), cl::cat(moegenCategory()));

static int runLookup() {
  std::vector<std::string> tables(tableArgs.begin(), tableArgs.end());
  std::string specPath = specArg, gfx = gfxArg, act = actArg, aDtype = aDtypeArg,
              wDtype = wDtypeArg, dtype = dtypeArg, qType = qTypeArg;
  auto given = [](auto &opt) {
    return opt.getNumOccurrences() ? std::optional<int64_t>(opt) : std::nullopt;
  };
  std::optional<int64_t> tokens = given(tokensArg), cuNum = int64_t(cuNumArg),
                         modelDim = given(modelDimArg), interDim = given(interDimArg),
                         experts = given(expertsArg), topk = given(topkArg);
  bool doweight = doweightArg;
  if (tables.empty() || !tokens)
    return usageError("lookup", llvm::Twine("missing ") +
                                    (tables.empty() ? "--table" : "--tokens") +
                                    "; usage: moegen lookup --table CSV... --tokens N (--spec "
                                    "SPEC.moe | problem options)");
  auto fail = [&](llvm::Error err) {
    llvm::WithColor::error(llvm::errs(), "moegen lookup") << llvm::toString(std::move(err)) << "\n";
    return 1;
  };

  dispatch::TunedKey key;
  if (!specPath.empty()) {
    auto spec = parseMoeSpecFile(specPath);
    if (!spec)
      return fail(spec.takeError());
    auto k = dispatch::aiterKeyFor(*spec, gfx, *cuNum);
    if (!k)
      return fail(k.takeError());
    key = *k;
  } else {
    if (!modelDim || !interDim || !experts || !topk || act.empty() || aDtype.empty() ||
        wDtype.empty()) {
      return usageError("lookup", "without --spec, give --model-dim, --inter-dim, --experts, "
                                  "--topk, --act, --a-dtype and --w-dtype");
    }
    key.gfx = gfx;
    key.cuNum = *cuNum;
    key.modelDim = *modelDim;
    key.interDim = *interDim;
    key.expert = *experts;
    key.topk = *topk;
    key.qType = llvm::StringRef(qType).starts_with("QuantType.") ? qType : "QuantType." + qType;
    key.useG1U1 = 1;
  }
  // Explicit flags refine what the spec gave.
  if (!act.empty())
    key.actType = dispatch::canonicalActType(act);
  if (!aDtype.empty())
    key.qDtypeA = dispatch::canonicalDtype(aDtype);
  if (!wDtype.empty())
    key.qDtypeW = dispatch::canonicalDtype(wDtype);
  if (key.dtype.empty() || dtype != "bf16")
    key.dtype = dispatch::canonicalDtype(dtype);
  if (doweight)
    key.doweightStage1 = 1;

  auto table = dispatch::TunedTable::loadAll(tables);
  if (!table)
    return fail(table.takeError());
  for (const std::string &d : table->duplicates())
    llvm::WithColor::warning(llvm::errs(), "moegen lookup") << d << "\n";
  for (const std::string &w : table->warnings())
    llvm::WithColor::warning(llvm::errs(), "moegen lookup") << w << "\n";
  dispatch::LookupResult r = table->lookup(key, *tokens);
  llvm::outs() << "key " << dispatch::describeKey(key) << "\n"
               << dispatch::formatLookupReport(key, r);
  return 0;
}

} // namespace moegen::cli
