//===- ScalarState.h - Wave-uniform values for branch decisions -*- C++ -*-===//
//
// Follows the values the wave's branches depend on: SGPRs, SCC, VCC, EXEC
// and VGPRs that hold the same known value in every lane. Kernel arguments
// the caller supplies (e.g. the token count) are read by s_load from the
// kernarg pointer; everything loaded from elsewhere is unknown. A branch
// whose condition is known goes where the hardware would; the others are
// decided by the simulator's policy (WaveSim.h).
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_BENCH_LATENCY_MODEL_SCALARSTATE_H
#define MOEGEN_BENCH_LATENCY_MODEL_SCALARSTATE_H

#include "bench/latency_model/Isa.h"

#include <array>
#include <map>
#include <optional>

namespace moegen::latency {

class ScalarState {
public:
  /// `lanes` active lanes at entry (EXEC); the kernarg pointer in s[k:k+1].
  ScalarState(int lanes, int kernargSgpr);

  void setSgpr(int index, uint32_t value);
  /// A dword of the kernel arguments, at its byte offset.
  void setKernarg(uint32_t offset, uint32_t value) { kernarg[offset] = value; }

  void execute(const Inst &in);
  /// Whether a conditional branch is taken, when its condition is known.
  std::optional<bool> taken(const Inst &in) const;

private:
  using Val = std::optional<uint64_t>;
  Val readOperand(const std::string &op, bool wide) const;
  Val readS(int lo, bool wide) const;
  void writeS(const RegRange &r, Val v);
  Val readV(const std::string &op, bool wide) const;
  void forget(const Inst &in);
  bool executeSalu(const Inst &in);
  bool executeValu(const Inst &in);
  void executeSmem(const Inst &in);

  std::array<std::optional<uint32_t>, 128> s;
  std::array<bool, 128> kernargPtr{}; // s[i:i+1] holds the kernarg pointer
  std::optional<bool> scc;
  std::map<int, uint32_t> vUniform; // VGPRs with one known value in all lanes
  std::map<uint32_t, uint32_t> kernarg;
};

} // namespace moegen::latency

#endif // MOEGEN_BENCH_LATENCY_MODEL_SCALARSTATE_H
