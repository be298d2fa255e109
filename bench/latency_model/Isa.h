//===- Isa.h - gfx950 ISA text as instructions the model can time -*- C++ -*-===//
//
// Parses the ISA text of one kernel: the disassembly of a code object
// (compiler/target/Disassembler.h: "  mnemonic operands  // address") or the
// assembly LLVM prints (".LBB0_3:" labels as branch targets). Each
// instruction gets its timing class, register operands, s_waitcnt fields and
// branch target; loops are found from backward branches.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_BENCH_LATENCY_MODEL_ISA_H
#define MOEGEN_BENCH_LATENCY_MODEL_ISA_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace moegen::latency {

enum class InstClass : uint8_t {
  Salu,       // scalar ALU (also s_and_saveexec, s_cmp, ...)
  Smem,       // s_load_*, s_buffer_load_*: lgkmcnt, out of order
  Valu,       // vector ALU, v_readfirstlane, v_accvgpr_*
  ValuTrans,  // v_exp/v_log/v_rcp/v_rsq/v_sqrt/v_sin/v_cos
  Mfma,       // v_mfma_*: the matrix core
  VmemLoad,   // global_/buffer_/flat_ loads (also to LDS): vmcnt, in order
  VmemStore,  // global_/buffer_/flat_ stores and atomics: vmcnt
  Lds,        // ds_*: lgkmcnt
  Waitcnt,    // s_waitcnt
  Barrier,    // s_barrier
  Branch,     // s_branch
  CondBranch, // s_cbranch_*
  EndPgm,     // s_endpgm
  Nop,        // s_nop N: N+1 cycles
};

/// A register range v[lo:hi], a[lo:hi] or s[lo:hi] (single registers have
/// lo == hi). Scalar special registers use their encodings: vcc 106/107,
/// exec 126/127.
struct RegRange {
  char file = 's'; // 's', 'v' or 'a'
  int lo = 0, hi = 0;
  bool overlaps(const RegRange &o) const { return file == o.file && lo <= o.hi && o.lo <= hi; }
};

constexpr int kVccLo = 106, kExecLo = 126;

struct Inst {
  uint64_t address = 0;
  std::string mnemonic;
  std::vector<std::string> operands; // comma-separated operands, trimmed
  std::string modifiers;             // the text after the operands (offen, cbsz:4, ...)
  InstClass cls = InstClass::Salu;
  std::vector<RegRange> regs; // register operands in order
  bool hasDef = false;        // regs[0] is written
  int64_t mfmaCycles = 0;     // Mfma: matrix core cycles (docs/gfx950-facts.md 7.3)
  int64_t ldsBytesPerLane = 0;
  std::optional<int64_t> vmcnt, lgkmcnt, expcnt; // Waitcnt
  int64_t nopCycles = 0;
  int64_t target = -1; // Branch/CondBranch: index of the target instruction
  std::string text() const;
};

/// A loop: the instructions [header, latch], latch being the last backward
/// branch to header. `exits` are conditional branches from inside to outside.
struct Loop {
  size_t header = 0, latch = 0;
  int depth = 1; // 1 = outermost
  bool hasMfma = false, hasVmem = false;
  /// The loop's back edge or an exit is an exec (execz/execnz) or vcc branch:
  /// a per-lane loop whose trip count is the largest over the lanes.
  bool vectorControlled = false;
  bool contains(size_t i) const { return i >= header && i <= latch; }
};

struct Program {
  std::string name; // the first label, when it is not a .L label
  std::vector<Inst> insts;
  std::vector<Loop> loops; // outer loops before inner ones
  /// The innermost loop holding instruction i, or -1.
  int innermostLoop(size_t i) const;
};

/// Matrix core cycles of an MFMA line (0 when it is not one).
int64_t mfmaCyclesOf(llvm::StringRef mnemonic, llvm::StringRef modifiers);

/// Parses the ISA text of one kernel. Errors name the line.
llvm::Expected<Program> parseIsa(llvm::StringRef text);

} // namespace moegen::latency

#endif // MOEGEN_BENCH_LATENCY_MODEL_ISA_H
