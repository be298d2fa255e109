//===- KernelName.cpp - aiter FlyDSL kernel names -------------------------===//

#include "runtime/dispatch/KernelName.h"

#include "compiler/spec/SpecLimits.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

namespace moegen::dispatch {

namespace {

struct Token {
  llvm::StringRef text;
  size_t offset;
};

llvm::SmallVector<Token> splitName(llvm::StringRef name) {
  llvm::SmallVector<Token> out;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('_', start);
    if (end == llvm::StringRef::npos)
      end = name.size();
    out.push_back({name.slice(start, end), start});
    start = end + 1;
  }
  return out;
}

llvm::Error nameError(llvm::StringRef name, size_t offset, const llvm::Twine &msg) {
  return llvm::createStringError("kernel name '%s', character %zu: %s", name.str().c_str(),
                                 offset + 1, msg.str().c_str());
}

/// "prefix<digits>" -> digits.
std::optional<int64_t> intAfter(llvm::StringRef tok, llvm::StringRef prefix) {
  if (!tok.consume_front(prefix) || tok.empty())
    return std::nullopt;
  int64_t v;
  if (tok.getAsInteger(10, v) || v < 0)
    return std::nullopt;
  return v;
}

/// "{M}x{N}x{K}" -> tile.
bool parseTile(llvm::StringRef t, KernelNameInfo &info) {
  llvm::SmallVector<llvm::StringRef, 3> parts;
  t.split(parts, 'x');
  if (parts.size() != 3)
    return false;
  return !parts[0].getAsInteger(10, info.tileM) && !parts[1].getAsInteger(10, info.tileN) &&
         !parts[2].getAsInteger(10, info.tileK) && info.tileM > 0 && info.tileN > 0 &&
         info.tileK > 0;
}

llvm::StringRef otherFamily(llvm::StringRef name) {
  if (name.starts_with("moe_ck2stages"))
    return "CK 2-stage";
  if (name.contains("cktile"))
    return "CK-Tile";
  if (name.starts_with("opus_"))
    return "Opus";
  if (name.starts_with("_ZN"))
    return "asm";
  return {};
}

std::optional<DType> dtypeOf(llvm::StringRef s) {
  if (s == "fp4")
    return DType::MXFP4;
  if (s == "fp8")
    return DType::MXFP8;
  if (s == "bf16")
    return DType::BF16;
  return std::nullopt;
}

} // namespace

llvm::Expected<KernelNameInfo> parseKernelName(llvm::StringRef name) {
  KernelNameInfo info;
  info.name = name.str();
  if (name.empty())
    return llvm::createStringError("empty kernel name");
  llvm::StringRef fam = otherFamily(name);
  if (!fam.empty())
    return llvm::createStringError("kernel name '%s' is a %s kernel, not a FlyDSL MoE kernel "
                                   "moegen can map",
                                   name.str().c_str(), fam.str().c_str());
  llvm::SmallVector<Token> toks = splitName(name);
  size_t i = 0;
  auto at = [&](size_t k) -> Token {
    return k < toks.size() ? toks[k] : Token{llvm::StringRef(), name.size()};
  };
  if (at(0).text != "flydsl")
    return nameError(name, 0, "expected the prefix 'flydsl_'");
  Token kind = at(1);
  i = 2;
  bool mx = false;
  if (kind.text == "moe1") {
    info.kind = AiterKernelKind::Moe1;
  } else if (kind.text == "moe2") {
    info.kind = AiterKernelKind::Moe2;
    info.stage = StageId::Stage2;
    if (at(2).text == "layout") {
      info.kind = AiterKernelKind::Moe2Layout;
      i = 3;
    }
  } else if (kind.text == "mxmoe") {
    mx = true;
    Token g = at(2);
    if (g.text != "g1" && g.text != "g2")
      return nameError(name, g.offset, "expected 'g1' or 'g2' after 'mxmoe', got '" + g.text + "'");
    info.kind = g.text == "g1" ? AiterKernelKind::MxMoeG1 : AiterKernelKind::MxMoeG2;
    info.stage = g.text == "g1" ? StageId::Stage1 : StageId::Stage2;
    i = 3;
  } else {
    return nameError(name, kind.offset,
                     "unknown FlyDSL kernel kind '" + kind.text +
                         "' (expected moe1, moe2 or mxmoe)");
  }

  if (mx) {
    Token dt = at(i++);
    if (dt.text != "a4w4")
      return nameError(name, dt.offset, "expected 'a4w4', got '" + dt.text + "'");
    info.aDtype = info.bDtype = "fp4";
    info.outDtype = "bf16";
    Token tile = at(i++);
    if (!parseTile(tile.text, info))
      return nameError(name, tile.offset, "expected a tile {M}x{N}x{K}, got '" + tile.text + "'");
  } else {
    Token a = at(i++), b = at(i++), out = at(i++), tile = at(i++);
    if (!a.text.starts_with("a") || a.text.size() < 2)
      return nameError(name, a.offset, "expected the A dtype a{dtype}, got '" + a.text + "'");
    if (!b.text.starts_with("w") || b.text.size() < 2)
      return nameError(name, b.offset, "expected the B dtype w{dtype}, got '" + b.text + "'");
    if (out.text.empty())
      return nameError(name, out.offset, "expected the output dtype");
    info.aDtype = a.text.drop_front().str();
    info.bDtype = b.text.drop_front().str();
    info.outDtype = out.text.str();
    if (!tile.text.starts_with("t") || !parseTile(tile.text.drop_front(), info))
      return nameError(name, tile.offset, "expected a tile t{M}x{N}x{K}, got '" + tile.text + "'");
    if (info.stage == StageId::Stage2) {
      Token mode = at(i++);
      if (mode.text == "atomic")
        info.reduce = ReduceMode::Atomic;
      else if (mode.text == "reduce")
        info.reduce = ReduceMode::Reduce;
      else
        return nameError(name, mode.offset,
                         "expected the stage-2 mode 'atomic' or 'reduce', got '" + mode.text + "'");
    }
  }

  llvm::SmallVector<llvm::StringRef> seen;
  for (; i < toks.size(); ++i) {
    Token t = toks[i];
    llvm::StringRef s = t.text;
    auto once = [&](llvm::StringRef key) -> llvm::Error {
      if (llvm::is_contained(seen, key))
        return nameError(name, t.offset, "token '" + key + "' appears twice");
      seen.push_back(key);
      return llvm::Error::success();
    };
    auto setInt = [&](llvm::StringRef prefix, std::optional<int64_t> &field) -> bool {
      if (auto v = intAfter(s, prefix)) {
        field = v;
        return true;
      }
      return false;
    };
    bool stage1 = info.stage == StageId::Stage1;
    bool ok = true;
    llvm::StringRef key = s;
    if (s == "go" && stage1 && !mx)
      info.mockGateOnly = true;
    else if (s == "gui" && stage1 && !mx)
      info.gateUpInterleave = true;
    else if ((s == "fp4" || s == "fp8") && stage1 && !mx) {
      key = "fused quant";
      info.fusedQuant = s == "fp4" ? FusedQuant::FP4 : FusedQuant::FP8;
    } else if (s == "atomic" && mx && !stage1) {
      key = "epilogue";
      info.reduce = ReduceMode::Atomic;
    } else if (s == "f4out" && mx && !stage1) {
      key = "epilogue";
      info.f4Out = true;
    } else if (s == "cshuffle" && mx && !stage1) {
      key = "epilogue";
      info.cshuffle = true;
    } else if (s == "f16in" && mx && stage1)
      info.f16In = true;
    else if (s == "persist" && !stage1)
      info.persist = true;
    else if (s == "async" && !stage1)
      info.async = true;
    else if (s == "nt")
      info.nonTemporal = true;
    else if (s == "bf16lds" && !stage1)
      info.bf16Lds = true;
    else if (s == "dqa" && !mx)
      info.arithmeticDecode = true;
    else if (s == "gridwait" && !stage1 && !mx)
      info.gridWait = true;
    else if (setInt("pf", info.prefetch) && !mx)
      key = "pf";
    else if (setInt("cumul", info.cuMul))
      key = "cumul";
    else if (setInt("bnt", info.bNt))
      key = "bnt";
    else if (setInt("sbm", info.sortBlockM))
      key = "sbm";
    else if (setInt("xcd", info.xcd))
      key = "xcd";
    else if (setInt("kw", info.kWave) && stage1 && !mx)
      key = "kw";
    else if (setInt("kb", info.kBatch) && stage1 && !mx)
      key = "kb";
    else if (setInt("sk", info.splitK) && mx)
      key = "sk";
    else if (setInt("sp", info.spatial) && !stage1)
      key = "sp";
    else if (setInt("w", info.wavesPerEU))
      key = "w";
    else
      ok = false;
    if (!ok)
      return nameError(name, t.offset,
                       "unknown token '" + s + "' for a " +
                           (stage1 ? llvm::Twine("stage-1") : llvm::Twine("stage-2")) + " kernel");
    if (auto err = once(key))
      return std::move(err);
  }
  return info;
}

llvm::Expected<MappedSchedule> mapToSchedule(const KernelNameInfo &info) {
  auto unmappable = [&](const llvm::Twine &why) {
    return llvm::createStringError("kernel name '%s' cannot be mapped to a moegen schedule: %s",
                                   info.name.c_str(), why.str().c_str());
  };
  MappedSchedule m;
  m.stage = info.stage;
  const bool stage1 = info.stage == StageId::Stage1;
  m.activation = dtypeOf(info.aDtype);
  m.weight = dtypeOf(info.bDtype);
  if (!m.activation)
    return unmappable("activation dtype '" + info.aDtype + "' is not bf16, fp8 or fp4");
  if (!m.weight)
    return unmappable("weight dtype '" + info.bDtype + "' is not bf16, fp8 or fp4");
  if (info.outDtype != "bf16")
    return unmappable("output dtype '" + info.outDtype + "' (moegen writes bf16 outputs)");
  if (info.mockGateOnly)
    return unmappable("'_go' (gate_mode=mock_gate_only) has no moegen equivalent");
  if (info.f16In)
    return unmappable("'_f16in' (in-kernel input quantization) has no moegen equivalent");
  if (info.f4Out)
    return unmappable("'_f4out' (fp4 stage-2 output) has no moegen equivalent");
  if (info.cshuffle)
    return unmappable("'_cshuffle' (non-atomic stage-2 epilogue) has no moegen equivalent");
  if (info.kind == AiterKernelKind::MxMoeG2 && !info.reduce)
    return unmappable("a g2 kernel without an epilogue token");

  m.sortBlockM = info.sortBlockM;
  StageSchedule &s = m.schedule;
  s.tileM = info.tileM;
  s.tileN = info.tileN;
  s.tileK = info.tileK;
  s.wavesPerEU = info.wavesPerEU.value_or(stage1 ? 1 : 0);
  s.kWave = info.kWave.value_or(1);
  s.kBatch = info.kBatch.value_or(info.splitK.value_or(1));
  if (s.kBatch == 0)
    s.kBatch = 1;
  s.kBatchMode = KBatchMode::Atomic; // aiter's split-K is always atomic
  if (info.arithmeticDecode)
    s.weightDecode = WeightDecode::Arithmetic;
  if (info.prefetch) {
    if (*info.prefetch < 1 || *info.prefetch > limits::kMaxPrefetch)
      return unmappable("pf" + llvm::Twine(*info.prefetch) +
                        ": steps of weights ahead must be in [1, " +
                        llvm::Twine(limits::kMaxPrefetch) + "]");
    s.prefetch = *info.prefetch;
  }
  if (info.xcd) {
    // xcd0 and xcd1 keep the dispatch order.
    if (*info.xcd > limits::kMaxXcdSwizzle)
      return unmappable("xcd" + llvm::Twine(*info.xcd) + ": gfx950 has " +
                        llvm::Twine(limits::kMaxXcdSwizzle) + " XCDs");
    s.xcdSwizzle = std::max<int64_t>(1, *info.xcd);
  }
  if (stage1) {
    s.fusedQuant = info.kind == AiterKernelKind::MxMoeG1 ? FusedQuant::FP4 : info.fusedQuant;
    m.gateUp = info.gateUpInterleave ? GateUpLayout::Interleaved : GateUpLayout::Separated;
  } else {
    s.reduce = *info.reduce;
    if (info.gridWait)
      s.wait = Stage2Wait::Grid;
  }

  auto hint = [&](bool present, const std::string &text) {
    if (present)
      m.droppedHints.push_back(text);
  };
  auto num = [](std::optional<int64_t> v) { return v ? std::to_string(*v) : std::string(); };
  hint(info.kind == AiterKernelKind::Moe2Layout,
       "layout: stage 2 reads stage-1 rows in sorted order (v2 layout)");
  hint(info.kind == AiterKernelKind::MxMoeG1 || info.kind == AiterKernelKind::MxMoeG2,
       "mxmoe: aiter's mxfp4 a4w4 port");
  hint(info.bNt.has_value(), "bnt" + num(info.bNt) + ": B-load cache policy");
  hint(info.spatial.has_value(), "sp" + num(info.spatial) + ": spatial partition");
  hint(info.cuMul.has_value(), "cumul" + num(info.cuMul) + ": persistent grid multiplier");
  hint(info.persist, "persist: persistent grid");
  hint(info.async, "async: async global->LDS copies");
  hint(info.nonTemporal, "nt: non-temporal accesses");
  hint(info.bf16Lds, "bf16lds: bf16 staging in LDS");
  return m;
}

llvm::Expected<MappedSchedule> kernelNameToSchedule(llvm::StringRef name) {
  auto info = parseKernelName(name);
  if (!info)
    return info.takeError();
  return mapToSchedule(*info);
}

llvm::Expected<std::string> kernelNameFor(const MoeSpec &spec, StageId stage) {
  const StageSchedule &s = spec.stage(stage);
  const bool stage1 = stage == StageId::Stage1;
  auto unnamable = [&](const llvm::Twine &why) {
    return llvm::createStringError("%s: %s has no FlyDSL kernel name", toString(stage).data(),
                                   why.str().c_str());
  };
  auto dtype = [](DType t) -> llvm::StringRef {
    switch (t) {
    case DType::MXFP4:
      return "fp4";
    case DType::MXFP8:
      return "fp8";
    case DType::BF16:
      return "bf16";
    case DType::F32:
      return "";
    }
    return "";
  };
  llvm::StringRef a = dtype(spec.formats.activation), w = dtype(spec.formats.weight);
  if (a.empty() || w.empty() || spec.formats.output != DType::BF16)
    return unnamable("the formats " + precisionTag(spec.formats) + " with output " +
                     toString(spec.formats.output));
  if (s.kBatch > 1 && s.kBatchMode != KBatchMode::Atomic)
    return unnamable("k_batch_mode=" + toString(s.kBatchMode));
  std::string name;
  llvm::raw_string_ostream os(name);
  os << (stage1 ? "flydsl_moe1" : "flydsl_moe2") << "_a" << a << "_w" << w << "_bf16_t" << s.tileM
     << "x" << s.tileN << "x" << s.tileK;
  if (stage1) {
    // An absent _w reads as 1 (aiter's default), so 0 cannot be spelled.
    if (s.wavesPerEU < 1)
      return unnamable("waves_per_eu=" + llvm::Twine(s.wavesPerEU) +
                       " (a moe1 name means 1 "
                       "without _w)");
    if (s.wavesPerEU != 1)
      os << "_w" << s.wavesPerEU;
    if (s.kBatch != 1)
      os << "_kb" << s.kBatch;
    if (spec.problem.gateUp == GateUpLayout::Interleaved)
      os << "_gui";
    if (s.xcdSwizzle != 1)
      os << "_xcd" << s.xcdSwizzle;
    if (s.kWave != 1)
      os << "_kw" << s.kWave;
    if (s.fusedQuant != FusedQuant::None)
      os << "_" << (s.fusedQuant == FusedQuant::FP4 ? "fp4" : "fp8");
    if (s.weightDecode == WeightDecode::Arithmetic)
      os << "_dqa";
    if (s.prefetch != 0)
      os << "_pf" << s.prefetch;
    return name;
  }
  if (s.kBatch != 1 || s.kWave != 1)
    return unnamable("k_batch=" + llvm::Twine(s.kBatch) + " k_wave=" + llvm::Twine(s.kWave) +
                     " (moe2 names carry no split)");
  os << "_" << toString(s.reduce);
  if (s.xcdSwizzle != 1)
    os << "_xcd" << s.xcdSwizzle;
  if (s.wavesPerEU != 0)
    os << "_w" << s.wavesPerEU;
  os << "_sbm" << spec.stage1.tileM;
  if (s.weightDecode == WeightDecode::Arithmetic)
    os << "_dqa";
  if (s.prefetch != 0)
    os << "_pf" << s.prefetch;
  if (s.wait == Stage2Wait::Grid)
    os << "_gridwait";
  return name;
}

std::string describe(const MappedSchedule &m) {
  std::string out;
  llvm::raw_string_ostream os(out);
  const StageSchedule &s = m.schedule;
  os << toString(m.stage) << ": tile=" << s.tileM << "x" << s.tileN << "x" << s.tileK
     << " k_batch=" << s.kBatch << " k_wave=" << s.kWave << " waves_per_eu=" << s.wavesPerEU;
  if (s.weightDecode != WeightDecode::Mixed)
    os << " weight_decode=" << toString(s.weightDecode);
  if (s.prefetch != 0)
    os << " prefetch=" << s.prefetch;
  if (s.xcdSwizzle != 1)
    os << " xcd_swizzle=" << s.xcdSwizzle;
  if (m.stage == StageId::Stage1) {
    os << " fused_quant=" << toString(s.fusedQuant);
    if (m.gateUp)
      os << " gate_up=" << toString(*m.gateUp);
  } else {
    os << " reduce=" << toString(s.reduce);
    if (m.sortBlockM)
      os << " sort_block=" << *m.sortBlockM;
    if (s.wait != Stage2Wait::Rows)
      os << " wait=" << toString(s.wait);
  }
  if (m.activation)
    os << " a=" << toString(*m.activation);
  if (m.weight)
    os << " w=" << toString(*m.weight);
  return out;
}

} // namespace moegen::dispatch
