//===- DslPrinter.cpp - Canonical .moe text of a spec --------------------===//

#include "compiler/spec/DslParser.h"

#include "llvm/ADT/Twine.h"

#include <sstream>

namespace moegen {

static std::string formatParam(double v) {
  // printExpr prints a constant node with the shortest exact decimal form.
  ActivationExpr tmp;
  return printExpr(tmp, makeConst(v));
}

std::string printActivation(const ActivationExpr &act) {
  std::string out = act.name;
  if (act.builtin) {
    if (!act.params.empty()) {
      out += '(';
      for (size_t i = 0; i < act.params.size(); ++i)
        out += (i ? ", " : "") + act.params[i].name + " = " + formatParam(act.params[i].value);
      out += ')';
    }
    return out;
  }
  out += "(g, u";
  for (size_t i = 0; i < act.params.size(); ++i)
    out += (i ? ", " : "; ") + act.params[i].name + " = " + formatParam(act.params[i].value);
  out += ") = " + printExpr(act, act.body);
  return out;
}

static void printStage(std::ostringstream &os, const char *name, const StageSchedule &s,
                       StageId id) {
  os << "  " << name << " {\n";
  os << "    tile = " << s.tileM << "x" << s.tileN << "x" << s.tileK << "\n";
  os << "    k_batch = " << s.kBatch << "\n";
  os << "    k_batch_mode = " << toString(s.kBatchMode).str() << "\n";
  os << "    k_wave = " << s.kWave << "\n";
  os << "    waves_per_eu = " << s.wavesPerEU << "\n";
  // Only where chosen: a gfx950 spec never has it.
  if (s.weightDecode != WeightDecode::Mixed)
    os << "    weight_decode = " << toString(s.weightDecode).str() << "\n";
  if (s.prefetch != 0)
    os << "    prefetch = " << s.prefetch << "\n";
  // Likewise: only where the workgroups are regrouped (gfx950).
  if (s.xcdSwizzle != 1)
    os << "    xcd_swizzle = " << s.xcdSwizzle << "\n";
  if (id == StageId::Stage1)
    os << "    fused_quant = " << toString(s.fusedQuant).str() << "\n";
  else
    os << "    reduce = " << toString(s.reduce).str() << "\n";
  // Only where chosen: the default is what every target accepts.
  if (id == StageId::Stage2 && s.wait != Stage2Wait::Rows)
    os << "    wait = " << toString(s.wait).str() << "\n";
  os << "  }\n";
}

std::string printMoeSpec(const MoeSpec &spec) {
  std::ostringstream os;
  const Problem &p = spec.problem;
  os << "moe " << spec.name << " {\n";
  os << "  model_dim = " << p.modelDim << "\n";
  os << "  inter_dim = " << p.interDim << "\n";
  os << "  experts = " << p.experts << "\n";
  os << "  topk = " << p.topk << "\n";
  os << "  gate_up = " << toString(p.gateUp).str() << "\n";
  os << "  doweight = " << (p.doweightStage1 ? "stage1" : "stage2") << "\n";
  os << "  activation_dtype = " << toString(spec.formats.activation).str() << "\n";
  os << "  weight_dtype = " << toString(spec.formats.weight).str() << "\n";
  os << "  output_dtype = " << toString(spec.formats.output).str() << "\n";
  os << "  activation = " << printActivation(spec.activation) << "\n";
  printStage(os, "stage1", spec.stage1, StageId::Stage1);
  printStage(os, "stage2", spec.stage2, StageId::Stage2);
  os << "}\n";
  return os.str();
}

} // namespace moegen
