//===- ScalarState.cpp - Wave-uniform values for branch decisions ---------===//

#include "bench/latency_model/ScalarState.h"

#include "llvm/ADT/StringRef.h"

namespace moegen::latency {
namespace {

bool is64(llvm::StringRef m) {
  return m.ends_with("_b64") || m.ends_with("_u64") || m.ends_with("_i64");
}

std::optional<int64_t> literal(llvm::StringRef op) {
  int64_t v;
  if (!op.getAsInteger(0, v))
    return v;
  uint64_t u;
  if (!op.getAsInteger(0, u))
    return static_cast<int64_t>(u);
  return std::nullopt;
}

std::optional<bool> compare(llvm::StringRef cond, uint64_t a, uint64_t b, bool isSigned,
                            bool wide) {
  if (!wide) {
    a &= 0xffffffffu;
    b &= 0xffffffffu;
  }
  int64_t sa = wide ? static_cast<int64_t>(a) : static_cast<int32_t>(a);
  int64_t sb = wide ? static_cast<int64_t>(b) : static_cast<int32_t>(b);
  if (cond == "eq")
    return a == b;
  if (cond == "lg" || cond == "ne")
    return a != b;
  if (cond == "gt")
    return isSigned ? sa > sb : a > b;
  if (cond == "ge")
    return isSigned ? sa >= sb : a >= b;
  if (cond == "lt")
    return isSigned ? sa < sb : a < b;
  if (cond == "le")
    return isSigned ? sa <= sb : a <= b;
  return std::nullopt;
}

} // namespace

ScalarState::ScalarState(int lanes, int kernargSgpr) {
  uint64_t exec = lanes >= 64 ? ~0ull : ((1ull << lanes) - 1);
  s[kExecLo] = static_cast<uint32_t>(exec);
  s[kExecLo + 1] = static_cast<uint32_t>(exec >> 32);
  if (kernargSgpr >= 0 && kernargSgpr < 127)
    kernargPtr[kernargSgpr] = true;
}

void ScalarState::setSgpr(int index, uint32_t value) {
  if (index >= 0 && index < 128)
    s[index] = value;
}

ScalarState::Val ScalarState::readS(int lo, bool wide) const {
  if (lo < 0 || lo + (wide ? 1 : 0) >= 128 || !s[lo])
    return std::nullopt;
  if (!wide)
    return *s[lo];
  if (!s[lo + 1])
    return std::nullopt;
  return *s[lo] | (uint64_t(*s[lo + 1]) << 32);
}

void ScalarState::writeS(const RegRange &r, Val v) {
  if (r.file != 's')
    return;
  for (int i = r.lo; i <= r.hi && i < 128; ++i) {
    kernargPtr[i] = false;
    if (v)
      s[i] = static_cast<uint32_t>(*v >> (32 * (i - r.lo)));
    else
      s[i].reset();
  }
}

ScalarState::Val ScalarState::readOperand(const std::string &op, bool wide) const {
  if (auto lit = literal(op)) {
    uint64_t v = static_cast<uint64_t>(*lit);
    return wide ? v : (v & 0xffffffffu);
  }
  llvm::StringRef o(op);
  if (o == "scc")
    return scc ? Val(*scc ? 1 : 0) : std::nullopt;
  RegRange r;
  if (o == "vcc")
    r = {'s', kVccLo, kVccLo + 1};
  else if (o == "exec")
    r = {'s', kExecLo, kExecLo + 1};
  else if (o == "vcc_lo")
    r = {'s', kVccLo, kVccLo};
  else if (o == "exec_lo")
    r = {'s', kExecLo, kExecLo};
  else if (o.consume_front("s[")) {
    unsigned lo;
    if (o.split(':').first.getAsInteger(10, lo))
      return std::nullopt;
    r = {'s', static_cast<int>(lo), static_cast<int>(lo) + 1};
  } else if (o.consume_front("s")) {
    unsigned lo;
    if (o.getAsInteger(10, lo))
      return std::nullopt;
    r = {'s', static_cast<int>(lo), static_cast<int>(lo)};
  } else {
    return std::nullopt;
  }
  return readS(r.lo, wide);
}

ScalarState::Val ScalarState::readV(const std::string &op, bool wide) const {
  llvm::StringRef o(op);
  unsigned lo;
  if (o.consume_front("v[")) {
    if (o.split(':').first.getAsInteger(10, lo))
      return std::nullopt;
  } else if (o.consume_front("v")) {
    if (o.getAsInteger(10, lo))
      return std::nullopt;
  } else {
    return readOperand(op, wide); // an SGPR or a constant, the same in every lane
  }
  auto a = vUniform.find(static_cast<int>(lo));
  if (a == vUniform.end())
    return std::nullopt;
  if (!wide)
    return a->second;
  auto b = vUniform.find(static_cast<int>(lo) + 1);
  if (b == vUniform.end())
    return std::nullopt;
  return a->second | (uint64_t(b->second) << 32);
}

void ScalarState::forget(const Inst &in) {
  if (!in.hasDef)
    return;
  const RegRange &d = in.regs.front();
  if (d.file == 's')
    writeS(d, std::nullopt);
  else if (d.file == 'v')
    for (int i = d.lo; i <= d.hi; ++i)
      vUniform.erase(i);
}

void ScalarState::executeSmem(const Inst &in) {
  // s_load_dword{,xN} sdst, s[base:base+1], offset
  if (!in.hasDef)
    return;
  const RegRange &d = in.regs.front();
  writeS(d, std::nullopt);
  if (in.regs.size() < 2 || in.operands.size() < 3 || !kernargPtr[in.regs[1].lo] ||
      !llvm::StringRef(in.mnemonic).starts_with("s_load_dword"))
    return;
  auto off = literal(in.operands[2]);
  if (!off)
    return;
  for (int i = d.lo; i <= d.hi; ++i) {
    auto it = kernarg.find(static_cast<uint32_t>(*off + 4 * (i - d.lo)));
    if (it != kernarg.end())
      s[i] = it->second;
  }
}

bool ScalarState::executeSalu(const Inst &in) {
  llvm::StringRef m = in.mnemonic;
  const auto &ops = in.operands;
  bool wide = is64(m);
  auto src = [&](size_t i) -> Val { return i < ops.size() ? readOperand(ops[i], wide) : Val(); };
  auto result = [&](Val v) { writeS(in.regs.front(), v); };
  uint64_t mask = wide ? ~0ull : 0xffffffffull;

  if (m.starts_with("s_cmp_") || m.starts_with("s_cmpk_")) {
    llvm::StringRef rest = m.drop_front(m.starts_with("s_cmpk_") ? 7 : 6);
    auto [cond, type] = rest.split('_');
    Val a = src(0), b = src(1);
    if (m.starts_with("s_cmpk_") && b && type == "i32")
      b = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int16_t>(*b)));
    scc = a && b ? compare(cond, *a, *b, type.starts_with("i"), wide) : std::nullopt;
    return true;
  }
  if (!in.hasDef)
    return false;
  if (m == "s_mov_b32" || m == "s_mov_b64") {
    Val v = src(1);
    bool copyKernarg = in.regs.size() > 1 && in.regs[1].file == 's' && kernargPtr[in.regs[1].lo];
    result(v);
    if (copyKernarg && wide)
      kernargPtr[in.regs.front().lo] = true;
    return true;
  }
  if (m == "s_movk_i32") {
    Val v = src(1);
    result(v ? Val(static_cast<uint32_t>(static_cast<int16_t>(*v))) : Val());
    return true;
  }
  if (m == "s_cselect_b32" || m == "s_cselect_b64") {
    result(scc ? src(*scc ? 1 : 2) : Val());
    return true;
  }
  if (m == "s_cmov_b32" || m == "s_cmov_b64") {
    if (!scc)
      result(Val());
    else if (*scc)
      result(src(1));
    return true;
  }
  if (m.ends_with("_saveexec_b64")) {
    Val exec = readS(kExecLo, true), x = src(1);
    result(exec);
    Val e;
    if (exec && x) {
      if (m == "s_and_saveexec_b64")
        e = *x & *exec;
      else if (m == "s_or_saveexec_b64")
        e = *x | *exec;
      else if (m == "s_andn2_saveexec_b64")
        e = *x & ~*exec;
    }
    writeS({'s', kExecLo, kExecLo + 1}, e);
    scc = e ? std::optional<bool>(*e != 0) : std::nullopt;
    return true;
  }
  Val a = src(1), b = src(2);
  Val r;
  std::optional<bool> newScc;
  bool sccKnownKind = true; // the op defines SCC from its operands
  if (m == "s_not_b32" || m == "s_not_b64") {
    if (a)
      r = ~*a & mask;
    if (r)
      newScc = *r != 0;
  } else if ((m == "s_and_b32" || m == "s_and_b64") && ((a && *a == 0) || (b && *b == 0))) {
    r = 0; // a known zero decides the AND (an if-else's flow guard ANDed with EXEC)
    newScc = false;
  } else if (m == "s_addk_i32" || m == "s_mulk_i32") {
    Val d = readS(in.regs.front().lo, false);
    Val k = src(1);
    if (d && k) {
      int32_t kk = static_cast<int16_t>(*k);
      r = static_cast<uint32_t>(m == "s_addk_i32" ? int32_t(*d) + kk : int32_t(*d) * kk);
    }
    sccKnownKind = m == "s_mulk_i32";
  } else if (a && b) {
    uint64_t x = *a, y = *b;
    unsigned sh = static_cast<unsigned>(y & (wide ? 63 : 31));
    if (m == "s_add_u32") {
      uint64_t t = (x & 0xffffffffu) + (y & 0xffffffffu);
      r = t & 0xffffffffu;
      newScc = t >> 32;
    } else if (m == "s_addc_u32") {
      if (scc) {
        uint64_t t = (x & 0xffffffffu) + (y & 0xffffffffu) + (*scc ? 1 : 0);
        r = t & 0xffffffffu;
        newScc = t >> 32;
      }
    } else if (m == "s_sub_u32") {
      r = (x - y) & 0xffffffffu;
      newScc = (x & 0xffffffffu) < (y & 0xffffffffu);
    } else if (m == "s_subb_u32") {
      if (scc) {
        uint64_t c = *scc ? 1 : 0;
        r = (x - y - c) & 0xffffffffu;
        newScc = (x & 0xffffffffu) < (y & 0xffffffffu) + c;
      }
    } else if (m == "s_add_i32" || m == "s_sub_i32") {
      int64_t t = m == "s_add_i32" ? int64_t(int32_t(x)) + int32_t(y)
                                   : int64_t(int32_t(x)) - int32_t(y);
      r = static_cast<uint32_t>(t);
      newScc = t != int64_t(int32_t(t));
    } else if (m == "s_mul_i32") {
      r = static_cast<uint32_t>(uint32_t(x) * uint32_t(y));
      sccKnownKind = false;
    } else if (m == "s_mul_hi_u32") {
      r = (uint64_t(uint32_t(x)) * uint32_t(y)) >> 32;
      sccKnownKind = false;
    } else if (m.starts_with("s_and_")) {
      r = x & y;
    } else if (m.starts_with("s_or_")) {
      r = x | y;
    } else if (m.starts_with("s_xor_")) {
      r = x ^ y;
    } else if (m.starts_with("s_andn2_")) {
      r = x & ~y;
    } else if (m.starts_with("s_orn2_")) {
      r = (x | ~y) & mask;
    } else if (m.starts_with("s_lshl_")) {
      r = (x << sh) & mask;
    } else if (m.starts_with("s_lshr_")) {
      r = (x & mask) >> sh;
    } else if (m == "s_ashr_i32") {
      r = static_cast<uint32_t>(int32_t(x) >> sh);
    } else if (m == "s_ashr_i64") {
      r = static_cast<uint64_t>(int64_t(x) >> sh);
    } else if (m == "s_bfe_u32") {
      unsigned off = y & 31, width = (y >> 16) & 0x7f;
      r = width == 0 ? 0 : (uint32_t(x) >> off) & (width >= 32 ? ~0u : ((1u << width) - 1));
    } else if (m == "s_min_u32" || m == "s_max_u32") {
      bool first = m == "s_min_u32" ? uint32_t(x) <= uint32_t(y) : uint32_t(x) >= uint32_t(y);
      r = first ? x : y;
      newScc = first;
    } else if (m == "s_min_i32" || m == "s_max_i32") {
      bool first = m == "s_min_i32" ? int32_t(x) <= int32_t(y) : int32_t(x) >= int32_t(y);
      r = first ? x : y;
      newScc = first;
    } else {
      result(Val());
      scc.reset();
      return true;
    }
    if (r && !newScc && sccKnownKind && !m.starts_with("s_add") && !m.starts_with("s_sub"))
      newScc = *r != 0; // bitwise ops and shifts: SCC = result != 0
  } else {
    bool keepsScc = m.starts_with("s_mul_") || m.starts_with("s_mov") || m == "s_getpc_b64";
    result(Val());
    if (!keepsScc)
      scc.reset();
    return true;
  }
  result(r);
  if (sccKnownKind)
    scc = newScc;
  return true;
}

bool ScalarState::executeValu(const Inst &in) {
  llvm::StringRef m = in.mnemonic;
  const auto &ops = in.operands;
  if (m.starts_with("v_cmpx")) {
    writeS({'s', kExecLo, kExecLo + 1}, std::nullopt);
    return true;
  }
  if (m.starts_with("v_cmp_") && ops.size() >= 3) {
    // v_cmp_<cond>_<type>_e32 vcc, a, b  /  _e64 s[d:d+1], a, b
    auto [cond, rest] = m.drop_front(6).split('_');
    llvm::StringRef type = rest.split('_').first;
    bool wide = type.ends_with("64");
    Val a = readV(ops[1], wide), b = readV(ops[2], wide);
    Val exec = readS(kExecLo, true);
    Val mask;
    if (a && b && exec && (type.starts_with("u") || type.starts_with("i")))
      if (auto c = compare(cond, *a, *b, type.starts_with("i"), wide))
        mask = *c ? *exec : 0;
    if (in.hasDef)
      writeS(in.regs.front(), mask);
    return true;
  }
  auto setV = [&](Val v, bool wide) {
    const RegRange &d = in.regs.front();
    for (int i = d.lo; i <= d.hi; ++i)
      vUniform.erase(i);
    if (!v || d.file != 'v')
      return;
    vUniform[d.lo] = static_cast<uint32_t>(*v);
    if (wide && d.hi > d.lo)
      vUniform[d.lo + 1] = static_cast<uint32_t>(*v >> 32);
  };
  if (!in.hasDef)
    return false;
  if ((m == "v_mov_b32_e32" || m == "v_mov_b32_e64" || m == "v_mov_b64_e32") && ops.size() >= 2) {
    bool wide = m.starts_with("v_mov_b64");
    setV(readV(ops[1], wide), wide);
    return true;
  }
  if (m == "v_readfirstlane_b32" && ops.size() >= 2) {
    writeS(in.regs.front(), readV(ops[1], false));
    return true;
  }
  if (m == "v_cndmask_b32_e64" && ops.size() >= 4) {
    Val sel = readOperand(ops[3], true), exec = readS(kExecLo, true);
    Val v;
    if (sel && exec && ((*sel & *exec) == *exec || (*sel & *exec) == 0))
      v = readV(ops[(*sel & *exec) == 0 ? 1 : 2], false);
    setV(v, false);
    return true;
  }
  // Any other VALU: its results are unknown, including SGPR carry-outs.
  forget(in);
  for (size_t i = 1; i < in.regs.size() && i < 2; ++i)
    if (in.regs[i].file == 's' && (m.contains("_co_") || m.contains("mad_u64") ||
                                   m.contains("mad_i64") || m.contains("div_scale")))
      writeS(in.regs[i], std::nullopt);
  return true;
}

void ScalarState::execute(const Inst &in) {
  switch (in.cls) {
  case InstClass::Salu:
    if (!executeSalu(in))
      forget(in);
    return;
  case InstClass::Smem:
    executeSmem(in);
    return;
  case InstClass::Valu:
  case InstClass::ValuTrans:
    executeValu(in);
    return;
  default:
    forget(in);
    return;
  }
}

std::optional<bool> ScalarState::taken(const Inst &in) const {
  llvm::StringRef m = in.mnemonic;
  if (m == "s_cbranch_scc0" || m == "s_cbranch_scc1") {
    if (!scc)
      return std::nullopt;
    return m == "s_cbranch_scc1" ? *scc : !*scc;
  }
  auto zero = [&](int lo) -> std::optional<bool> {
    Val v = readS(lo, true);
    if (!v)
      return std::nullopt;
    return *v == 0;
  };
  std::optional<bool> z;
  if (m.starts_with("s_cbranch_vcc"))
    z = zero(kVccLo);
  else if (m.starts_with("s_cbranch_exec"))
    z = zero(kExecLo);
  else
    return std::nullopt;
  if (!z)
    return std::nullopt;
  return m.ends_with("nz") ? !*z : *z;
}

} // namespace moegen::latency
