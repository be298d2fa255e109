//===- Lookup.cpp - From a problem to aiter's tuned choice ----------------===//

#include "runtime/dispatch/Lookup.h"

#include "runtime/dispatch/Tiers.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

namespace moegen::dispatch {

llvm::StringRef aiterDtypeName(DType t) {
  switch (t) {
  case DType::MXFP4:
    return "torch.float4_e2m1fn_x2";
  case DType::MXFP8:
    return "torch.float8_e4m3fn";
  case DType::BF16:
    return "torch.bfloat16";
  case DType::F32:
    return "torch.float32";
  }
  return "";
}

std::optional<std::string> aiterActivationName(llvm::StringRef name) {
  auto n = llvm::StringSwitch<std::optional<llvm::StringRef>>(name.lower())
               .Case("silu", llvm::StringRef("Silu"))
               .Case("gelu", llvm::StringRef("Gelu"))
               .Case("gelu_tanh", llvm::StringRef("Gelu"))
               .Case("gelu_erf", llvm::StringRef("Gelu"))
               .Case("swiglu", llvm::StringRef("Swiglu"))
               .Case("situv2", llvm::StringRef("Situv2"))
               .Case("no", llvm::StringRef("No"))
               .Default(std::nullopt);
  if (!n)
    return std::nullopt;
  return ("ActivationType." + *n).str();
}

std::string canonicalActType(llvm::StringRef s) {
  if (s.starts_with("ActivationType."))
    return s.str();
  if (auto n = aiterActivationName(s))
    return *n;
  return s.str();
}

std::string canonicalDtype(llvm::StringRef s) {
  if (s.starts_with("torch."))
    return s.str();
  std::string l = s.lower();
  if (l == "mxfp4" || l == "fp4" || l == "fp4x2")
    return aiterDtypeName(DType::MXFP4).str();
  if (l == "mxfp8" || l == "fp8")
    return aiterDtypeName(DType::MXFP8).str();
  if (l == "bf16")
    return aiterDtypeName(DType::BF16).str();
  return s.str();
}

llvm::Expected<TunedKey> aiterKeyFor(const MoeSpec &spec, llvm::StringRef gfx, int64_t cuNum) {
  TunedKey k;
  k.gfx = gfx.str();
  k.cuNum = cuNum;
  k.modelDim = spec.problem.modelDim;
  k.interDim = spec.problem.interDim;
  k.expert = spec.problem.experts;
  k.topk = spec.problem.topk;
  auto act = aiterActivationName(spec.activation.name);
  if (!act)
    return llvm::createStringError("activation '%s' has no aiter ActivationType; pass --act",
                                   spec.activation.name.c_str());
  k.actType = *act;
  k.dtype = aiterDtypeName(spec.formats.output).str();
  k.qDtypeA = aiterDtypeName(spec.formats.activation).str();
  k.qDtypeW = aiterDtypeName(spec.formats.weight).str();
  bool mx = spec.formats.activation == DType::MXFP4 || spec.formats.activation == DType::MXFP8 ||
            spec.formats.weight == DType::MXFP4 || spec.formats.weight == DType::MXFP8;
  k.qType = mx ? "QuantType.per_1x32" : "QuantType.No";
  k.useG1U1 = 1;
  k.doweightStage1 = spec.problem.doweightStage1 ? 1 : 0;
  return k;
}

std::optional<HeuristicChoice> aiterHeuristic(const TunedKey &key, int64_t tokens) {
  if (key.qType != "QuantType.per_1x32" || key.useG1U1 != 1 || key.doweightStage1 != 0)
    return std::nullopt;
  std::string a;
  if (key.qDtypeA == aiterDtypeName(DType::MXFP4))
    a = "fp4";
  else if (key.qDtypeA == aiterDtypeName(DType::MXFP8))
    a = "fp8";
  else if (key.qDtypeA == aiterDtypeName(DType::BF16) && key.actType == "ActivationType.Situv2")
    a = "bf16";
  else
    return std::nullopt;
  if (key.qDtypeW != aiterDtypeName(DType::MXFP4) && key.qDtypeW != aiterDtypeName(DType::MXFP8))
    return std::nullopt;
  std::string w = key.qDtypeW == aiterDtypeName(DType::MXFP4) ? "fp4" : "fp8";
  const int64_t t = paddedM(tokens);
  HeuristicChoice c;
  std::string s1, s2;
  if (t < 2048) {
    c.blockM = 32;
    s1 = "_w2";
    s2 = "_bnt2";
  } else if (t < 4096) {
    c.blockM = 64;
    s1 = "_w3_bnt0";
  } else if (t < 16384) {
    c.blockM = 128;
    s1 = "_w2_bnt0";
  } else {
    c.blockM = 64;
    s1 = "_w4_bnt0";
  }
  if (a == "fp8")
    s1 += "_gui";
  std::string m = std::to_string(c.blockM);
  std::string base = "a" + a + "_w" + w + "_bf16_t" + m + "x128x";
  c.kernelName1 = "flydsl_moe1_" + base + "256" + s1;
  c.kernelName2 =
      "flydsl_moe2_" + base + (key.interDim % 256 == 0 ? "256" : "128") + "_atomic" + s2;
  return c;
}

namespace {

void reportKernel(llvm::raw_ostream &os, llvm::StringRef label, llvm::StringRef name) {
  // 1-stage rows carry "Null" as their second kernel.
  if (name.empty() || name == "Null") {
    os << "  " << label << ": (none)\n";
    return;
  }
  os << "  " << label << ": " << name << "\n";
  auto m = kernelNameToSchedule(name);
  if (!m) {
    os << "    not mappable: " << llvm::toString(m.takeError()) << "\n";
    return;
  }
  os << "    moegen " << describe(*m) << "\n";
  for (const std::string &h : m->droppedHints)
    os << "    hint not carried: " << h << "\n";
}

} // namespace

std::string describeKey(const TunedKey &k) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << k.gfx << " cu_num=" << k.cuNum << " model_dim=" << k.modelDim << " inter_dim=" << k.interDim
     << " expert=" << k.expert << " topk=" << k.topk << " " << k.actType << " dtype=" << k.dtype
     << " q_dtype_a=" << k.qDtypeA << " q_dtype_w=" << k.qDtypeW << " " << k.qType
     << " use_g1u1=" << k.useG1U1 << " doweight_stage1=" << k.doweightStage1;
  return out;
}

std::string formatLookupReport(const TunedKey &query, const LookupResult &r) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "tokens " << r.tokens << " -> tier " << r.paddedM << "\n";
  for (const LookupStep &s : r.steps)
    os << "  try token=" << s.token << (s.actAgnostic ? " act_type=*" : " act_type=exact") << ": "
       << (s.hit ? "hit " + s.hit->location() : std::string("miss")) << "\n";
  if (r.row) {
    os << "row " << r.row->location();
    if (r.tokenKeyUsed() != r.paddedM)
      os << " (tier fallback " << r.paddedM << " -> " << r.tokenKeyUsed() << ")";
    if (r.viaActAgnostic())
      os << " (act_type-agnostic match: row has " << r.row->key.actType << ")";
    os << "\n  block_m=" << r.row->get("block_m") << " ksplit=" << r.row->get("ksplit")
       << " us=" << r.row->get("us") << "\n";
    reportKernel(os, "stage1", r.row->get("kernelName1"));
    reportKernel(os, "stage2", r.row->get("kernelName2"));
    return out;
  }
  os << "no tuned row: aiter falls back to its built-in heuristic\n";
  if (auto h = aiterHeuristic(query, r.tokens)) {
    os << "  heuristic block_m=" << h->blockM << " (stage 1 without fused quant)\n";
    reportKernel(os, "stage1", h->kernelName1);
    reportKernel(os, "stage2", h->kernelName2);
  } else {
    os << "  (a non-FlyDSL heuristic; moegen does not model it)\n";
  }
  return out;
}

} // namespace moegen::dispatch
