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
#include "tools/moegen/Commands.h"

#include "compiler/spec/DslParser.h"
#include "runtime/dispatch/Lookup.h"

#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

namespace moegen::cli {

int runLookup(int argc, const char **argv) {
  ArgReader args("lookup", argc, argv);
  std::vector<std::string> tables;
  std::string specPath, value, gfx = "gfx950", act, aDtype, wDtype, dtype = "bf16",
                               qType = "per_1x32";
  std::optional<int64_t> tokens, cuNum = 256, modelDim, interDim, experts, topk;
  bool doweight = false;
  while (!args.done() && !args.failed()) {
    if (args.flag("--table", value))
      tables.push_back(value);
    else if (args.flag("--tokens", value))
      tokens = parsePositive(args, "--tokens", value);
    else if (args.flag("--spec", value))
      specPath = value;
    else if (args.flag("--gfx", value))
      gfx = value;
    else if (args.flag("--cu-num", value))
      cuNum = parsePositive(args, "--cu-num", value);
    else if (args.flag("--model-dim", value))
      modelDim = parsePositive(args, "--model-dim", value);
    else if (args.flag("--inter-dim", value))
      interDim = parsePositive(args, "--inter-dim", value);
    else if (args.flag("--experts", value))
      experts = parsePositive(args, "--experts", value);
    else if (args.flag("--topk", value))
      topk = parsePositive(args, "--topk", value);
    else if (args.flag("--act", value))
      act = value;
    else if (args.flag("--a-dtype", value))
      aDtype = value;
    else if (args.flag("--w-dtype", value))
      wDtype = value;
    else if (args.flag("--dtype", value))
      dtype = value;
    else if (args.flag("--q-type", value))
      qType = value;
    else if (args.option("--doweight-stage1"))
      doweight = true;
    else
      args.unknown();
  }
  if (!args.failed() && (tables.empty() || !tokens))
    args.error("usage: moegen lookup --table CSV... --tokens N (--spec SPEC.moe | problem "
               "flags)");
  if (args.failed())
    return 2;
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
      args.error("without --spec, give --model-dim, --inter-dim, --experts, --topk, --act, "
                 "--a-dtype and --w-dtype");
      return 2;
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
