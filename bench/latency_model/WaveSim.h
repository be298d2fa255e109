//===- WaveSim.h - Timing of one wave through a kernel's ISA ----*- C++ -*-===//
//
// Runs one wave through the instruction list in program order and counts
// cycles:
//  * every instruction costs its issue cycles (MachineModel.h);
//  * an MFMA starts when the matrix core is free and keeps it busy for its
//    cycles while the wave issues on; a later instruction that touches its
//    result registers waits for it (a dependent MFMA reading them as its
//    accumulator does not: the hardware forwards it);
//  * loads, stores and LDS operations complete after their latency and are
//    counted in vmcnt (in order), lgkmcnt (LDS in order, scalar loads in any
//    order) and expcnt; `s_waitcnt vmcnt(N)` stalls until at most N remain;
//  * branches follow ScalarState when their condition is known. An undecided
//    loop branch runs the loop `tripHint` times (default 1); an undecided
//    forward branch inside a loop that leaves it is taken once the loop has
//    run its trips; any other undecided forward branch falls through (the
//    guarded code runs), except that with `exitEarly` a branch to s_endpgm
//    is taken (a workgroup without rows).
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_BENCH_LATENCY_MODEL_WAVESIM_H
#define MOEGEN_BENCH_LATENCY_MODEL_WAVESIM_H

#include "bench/latency_model/Isa.h"
#include "bench/latency_model/MachineModel.h"

#include <functional>
#include <map>
#include <vector>

namespace moegen::latency {

struct WaveConfig {
  int lanes = 64;
  int kernargSgpr = 0; // s[0:1] holds the kernarg pointer
  std::map<uint32_t, uint32_t> kernarg; // known argument dwords by byte offset
  std::map<int, uint32_t> sgprs;        // other known SGPRs at entry
  std::function<int64_t(const Program &, const Loop &)> tripHint;
  bool exitEarly = false;
  int64_t maxInstructions = 400'000'000;
};

struct WaveResult {
  int64_t cycles = 0;   // first issue to the completion of the last operation
  int64_t valuBusy = 0; // cycles of the SIMD's vector issue (VALU, memory, MFMA issue)
  int64_t saluBusy = 0; // scalar unit cycles
  int64_t mfmaBusy = 0; // matrix core cycles
  int64_t instructions = 0, mfmas = 0, vmemLoads = 0, vmemStores = 0, ldsOps = 0, smemLoads = 0;
  int64_t stallVm = 0, stallLgkm = 0, stallMfma = 0; // cycles spent waiting on each
  int64_t undecidedBranches = 0; // conditional branches decided by the policy
  /// Per instruction of the program: the cycles the wave's clock advanced
  /// while issuing it, its stalls included (where a wave's time goes).
  std::vector<int64_t> cyclesByInst;
};

llvm::Expected<WaveResult> simulateWave(const Program &program, const MachineModel &machine,
                                        const WaveConfig &config);

} // namespace moegen::latency

#endif // MOEGEN_BENCH_LATENCY_MODEL_WAVESIM_H
