//===- Isa.cpp - gfx950 ISA text as instructions the model can time -------===//

#include "bench/latency_model/Isa.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <map>

namespace moegen::latency {
namespace {

llvm::Error lineError(size_t line, const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "ISA line " + llvm::Twine(line + 1) + ": " + msg);
}

/// Splits at commas outside brackets/parentheses.
std::vector<std::string> splitOperands(llvm::StringRef s) {
  std::vector<std::string> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '[' || c == '(')
      ++depth;
    else if (c == ']' || c == ')')
      --depth;
    else if (c == ',' && depth == 0) {
      out.push_back(s.slice(start, i).trim().str());
      start = i + 1;
    }
  }
  if (!s.trim().empty())
    out.push_back(s.drop_front(start).trim().str());
  return out;
}

std::optional<RegRange> parseReg(llvm::StringRef op) {
  op = op.trim();
  while (!op.empty() && (op.front() == '-' || op.front() == '|'))
    op = op.drop_front();
  while (!op.empty() && op.back() == '|')
    op = op.drop_back();
  if (op == "vcc")
    return RegRange{'s', kVccLo, kVccLo + 1};
  if (op == "vcc_lo")
    return RegRange{'s', kVccLo, kVccLo};
  if (op == "vcc_hi")
    return RegRange{'s', kVccLo + 1, kVccLo + 1};
  if (op == "exec")
    return RegRange{'s', kExecLo, kExecLo + 1};
  if (op == "exec_lo")
    return RegRange{'s', kExecLo, kExecLo};
  if (op == "exec_hi")
    return RegRange{'s', kExecLo + 1, kExecLo + 1};
  if (op == "m0")
    return RegRange{'s', 124, 124};
  if (op.size() < 2 || (op[0] != 'v' && op[0] != 'a' && op[0] != 's'))
    return std::nullopt;
  char file = op[0];
  llvm::StringRef rest = op.drop_front();
  unsigned lo = 0, hi = 0;
  if (rest.consume_front("[")) {
    auto [a, b] = rest.split(':');
    if (!b.consume_back("]") || a.getAsInteger(10, lo) || b.getAsInteger(10, hi) || hi < lo)
      return std::nullopt;
  } else if (rest.getAsInteger(10, lo)) {
    return std::nullopt;
  } else {
    hi = lo;
  }
  return RegRange{file, static_cast<int>(lo), static_cast<int>(hi)};
}

InstClass classify(llvm::StringRef m) {
  if (m == "s_waitcnt")
    return InstClass::Waitcnt;
  if (m == "s_barrier")
    return InstClass::Barrier;
  if (m == "s_endpgm")
    return InstClass::EndPgm;
  if (m == "s_nop")
    return InstClass::Nop;
  if (m == "s_branch")
    return InstClass::Branch;
  if (m.starts_with("s_cbranch_"))
    return InstClass::CondBranch;
  for (const char *p : {"s_load_", "s_buffer_load_", "s_store_", "s_buffer_store_", "s_dcache_",
                        "s_memtime", "s_memrealtime", "s_scratch_", "s_atomic", "s_buffer_atomic"})
    if (m.starts_with(p))
      return InstClass::Smem;
  if (m.starts_with("s_"))
    return InstClass::Salu;
  if (m.starts_with("v_mfma") || m.starts_with("v_smfmac"))
    return InstClass::Mfma;
  for (const char *p : {"v_exp_", "v_log_", "v_rcp_", "v_rsq_", "v_sqrt_", "v_sin_", "v_cos_"})
    if (m.starts_with(p))
      return InstClass::ValuTrans;
  if (m.starts_with("v_"))
    return InstClass::Valu;
  if (m.starts_with("ds_"))
    return InstClass::Lds;
  for (const char *p : {"global_", "buffer_", "flat_", "scratch_"}) {
    if (!m.starts_with(p))
      continue;
    bool load = m.contains("_load") && !m.contains("atomic");
    return load ? InstClass::VmemLoad : InstClass::VmemStore;
  }
  return InstClass::Salu; // marked unknown by the caller
}

bool knownMnemonic(llvm::StringRef m) {
  return m.starts_with("s_") || m.starts_with("v_") || m.starts_with("ds_") ||
         m.starts_with("global_") || m.starts_with("buffer_") || m.starts_with("flat_") ||
         m.starts_with("scratch_");
}

bool writesFirstOperand(const Inst &in) {
  llvm::StringRef m = in.mnemonic;
  switch (in.cls) {
  case InstClass::Waitcnt:
  case InstClass::Barrier:
  case InstClass::Branch:
  case InstClass::CondBranch:
  case InstClass::EndPgm:
  case InstClass::Nop:
  case InstClass::VmemStore:
    return false;
  case InstClass::Lds:
    return m.starts_with("ds_read") || m.starts_with("ds_swizzle") || m.starts_with("ds_permute") ||
           m.starts_with("ds_bpermute") || m.contains("_rtn");
  case InstClass::Salu:
    return !(m.starts_with("s_cmp") || m.starts_with("s_bitcmp") || m.starts_with("s_set") ||
             m.starts_with("s_sleep") || m.starts_with("s_sendmsg") || m.starts_with("s_trap") ||
             m.starts_with("s_waitcnt") || m.starts_with("s_icache") || m.starts_with("s_ttrace"));
  default:
    return true;
  }
}

int64_t ldsBytesPerLane(llvm::StringRef m) {
  if (m.contains("b128"))
    return 16;
  if (m.contains("b96"))
    return 12;
  if (m.contains("read2") || m.contains("write2"))
    return m.contains("b64") ? 16 : 8;
  if (m.contains("b64"))
    return 8;
  if (m.contains("u8") || m.contains("i8") || m.contains("_b8"))
    return 1;
  if (m.contains("u16") || m.contains("i16") || m.contains("_b16"))
    return 2;
  return 4;
}

/// Decodes "vmcnt(N) expcnt(N) lgkmcnt(N)" or a raw gfx9 simm16.
void parseWaitcnt(llvm::StringRef ops, Inst &in) {
  auto field = [&](llvm::StringRef name) -> std::optional<int64_t> {
    size_t p = ops.find(name);
    if (p == llvm::StringRef::npos)
      return std::nullopt;
    llvm::StringRef v = ops.drop_front(p + name.size()).split(')').first;
    int64_t n;
    if (v.getAsInteger(10, n))
      return std::nullopt;
    return n;
  };
  if (ops.contains("cnt(")) {
    in.vmcnt = field("vmcnt(");
    in.expcnt = field("expcnt(");
    in.lgkmcnt = field("lgkmcnt(");
    return;
  }
  uint64_t imm;
  if (ops.trim().getAsInteger(0, imm))
    return;
  int64_t vm = (imm & 0xf) | ((imm >> 14) & 0x3) << 4, exp = (imm >> 4) & 0x7,
          lgkm = (imm >> 8) & 0xf;
  if (vm != 63)
    in.vmcnt = vm;
  if (exp != 7)
    in.expcnt = exp;
  if (lgkm != 15)
    in.lgkmcnt = lgkm;
}

} // namespace

std::string Inst::text() const {
  std::string s = mnemonic;
  for (size_t i = 0; i < operands.size(); ++i)
    s += (i ? ", " : " ") + operands[i];
  if (!modifiers.empty())
    s += " " + modifiers;
  return s;
}

int64_t mfmaCyclesOf(llvm::StringRef m, llvm::StringRef mods) {
  if (!m.starts_with("v_mfma") && !m.starts_with("v_smfmac"))
    return 0;
  if (m.contains("f8f6f4")) {
    // Formats: cbsz (A) and blgp (B); 0/1 fp8/bf8, 2/3 fp6/bf6, 4 fp4. Only
    // fp4/fp6 on both sides run at the full rate (facts 7.3).
    auto fmt = [&](llvm::StringRef key) {
      size_t p = mods.find(key);
      int64_t v = 0;
      if (p != llvm::StringRef::npos)
        mods.drop_front(p + key.size()).take_while(llvm::isDigit).getAsInteger(10, v);
      return v;
    };
    bool narrow = fmt("cbsz:") >= 2 && fmt("blgp:") >= 2;
    int64_t base = m.contains("32x32") ? 32 : 16;
    return narrow ? base : 2 * base;
  }
  // bf16 16x16x32 and 16x16x16 16 cycles, 32x32x16 32 (facts 7.3); other
  // shapes by their M x N (assumption).
  return m.contains("32x32") ? 32 : 16;
}

int Program::innermostLoop(size_t i) const {
  int best = -1;
  for (size_t l = 0; l < loops.size(); ++l)
    if (loops[l].contains(i) &&
        (best < 0 || loops[l].latch - loops[l].header < loops[best].latch - loops[best].header))
      best = static_cast<int>(l);
  return best;
}

llvm::Expected<Program> parseIsa(llvm::StringRef text) {
  Program p;
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  llvm::StringMap<size_t> labels; // label -> index of the next instruction
  std::vector<std::pair<size_t, std::string>> branchLabels; // (inst, label) to resolve
  std::vector<size_t> instLine;
  bool haveAddresses = true;
  for (size_t li = 0; li < lines.size(); ++li) {
    llvm::StringRef l = lines[li].trim();
    if (l.empty() || l.starts_with(";") || l.starts_with("#"))
      continue;
    if (l.ends_with(":") && !l.contains(' ')) {
      llvm::StringRef name = l.drop_back();
      labels[name] = p.insts.size();
      if (p.name.empty() && !name.starts_with("."))
        p.name = name.str();
      continue;
    }
    if (l.starts_with("."))
      continue; // assembler directive
    Inst in;
    auto [body, comment] = l.split("//");
    if (body.contains(';'))
      body = body.split(';').first;
    body = body.trim();
    uint64_t addr = 0;
    if (comment.trim().getAsInteger(16, addr)) {
      haveAddresses = false;
      addr = p.insts.size() * 4;
    }
    in.address = addr;
    auto [mn, rest] = body.split(' ');
    in.mnemonic = mn.str();
    if (!knownMnemonic(mn))
      return lineError(li, "unknown instruction '" + body + "'");
    in.cls = classify(mn);
    rest = rest.trim();
    if (in.cls == InstClass::Waitcnt) {
      parseWaitcnt(rest, in);
    } else {
      in.operands = splitOperands(rest);
      if (!in.operands.empty()) {
        // Modifiers follow the last operand after a space ("v79 cbsz:4").
        llvm::StringRef last = in.operands.back();
        if (size_t sp = last.find(' '); sp != llvm::StringRef::npos) {
          in.modifiers = last.drop_front(sp + 1).trim().str();
          in.operands.back() = last.take_front(sp).str();
        }
      }
      for (const std::string &op : in.operands)
        if (auto r = parseReg(op))
          in.regs.push_back(*r);
      in.hasDef = !in.regs.empty() && writesFirstOperand(in) && !in.operands.empty() &&
                  parseReg(in.operands.front()).has_value();
    }
    if (in.cls == InstClass::Mfma)
      in.mfmaCycles = mfmaCyclesOf(in.mnemonic, in.modifiers);
    if (in.cls == InstClass::Lds)
      in.ldsBytesPerLane = ldsBytesPerLane(in.mnemonic);
    if (in.cls == InstClass::Nop) {
      int64_t n = 0;
      if (!in.operands.empty())
        llvm::StringRef(in.operands[0]).getAsInteger(0, n);
      in.nopCycles = n + 1;
    }
    if ((in.cls == InstClass::Branch || in.cls == InstClass::CondBranch) && !in.operands.empty())
      branchLabels.push_back({p.insts.size(), in.operands[0]});
    instLine.push_back(li);
    p.insts.push_back(std::move(in));
  }
  if (p.insts.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "ISA text has no instructions");

  std::map<uint64_t, size_t> byAddress;
  for (size_t i = 0; i < p.insts.size(); ++i)
    byAddress[p.insts[i].address] = i;
  for (auto &[i, label] : branchLabels) {
    Inst &in = p.insts[i];
    if (auto it = labels.find(label); it != labels.end()) {
      in.target = static_cast<int64_t>(it->second);
    } else {
      int64_t imm;
      if (llvm::StringRef(label).getAsInteger(0, imm) || !haveAddresses)
        return lineError(instLine[i], "branch target '" + label + "' is not a label");
      int64_t simm = static_cast<int16_t>(static_cast<uint16_t>(imm));
      uint64_t to = in.address + 4 + 4 * simm;
      auto at = byAddress.find(to);
      if (at == byAddress.end())
        return lineError(instLine[i], "branch target address 0x" + llvm::utohexstr(to) +
                                          " is not an instruction");
      in.target = static_cast<int64_t>(at->second);
    }
    if (in.target >= static_cast<int64_t>(p.insts.size()))
      return lineError(instLine[i], "branch past the last instruction");
  }

  // Loops: one per header, up to its last backward branch.
  std::map<size_t, size_t> latchOf;
  for (size_t i = 0; i < p.insts.size(); ++i) {
    const Inst &in = p.insts[i];
    if (in.target >= 0 && static_cast<size_t>(in.target) <= i) {
      size_t &latch = latchOf[static_cast<size_t>(in.target)];
      latch = std::max(latch, i);
    }
  }
  for (auto [h, latch] : latchOf) {
    Loop L;
    L.header = h;
    L.latch = latch;
    for (size_t i = h; i <= latch; ++i) {
      const Inst &in = p.insts[i];
      L.hasMfma |= in.cls == InstClass::Mfma;
      L.hasVmem |= in.cls == InstClass::VmemLoad || in.cls == InstClass::VmemStore;
      bool control = in.cls == InstClass::CondBranch &&
                     (static_cast<size_t>(in.target) == h || !L.contains(in.target));
      if (control && (llvm::StringRef(in.mnemonic).contains("exec") ||
                      llvm::StringRef(in.mnemonic).contains("vcc")))
        L.vectorControlled = true;
    }
    p.loops.push_back(L);
  }
  std::sort(p.loops.begin(), p.loops.end(), [](const Loop &a, const Loop &b) {
    return a.header != b.header ? a.header < b.header : a.latch > b.latch;
  });
  for (Loop &L : p.loops)
    L.depth = static_cast<int>(llvm::count_if(p.loops, [&](const Loop &o) {
      return o.header <= L.header && o.latch >= L.latch;
    }));
  return p;
}

} // namespace moegen::latency
