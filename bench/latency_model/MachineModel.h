//===- MachineModel.h - The assumed gfx950 costs of the latency model -*- C++ -*-===//
//
// Every number the model uses, in one place, with where it comes from.
// Sourced facts cite docs/gfx950-facts.md; the rest are assumptions of this
// model (marked so), chosen as round figures and documented in bench/README.md.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_BENCH_LATENCY_MODEL_MACHINEMODEL_H
#define MOEGEN_BENCH_LATENCY_MODEL_MACHINEMODEL_H

#include <cstdint>

namespace moegen::latency {

struct MachineModel {
  // MI355X (docs/gfx950-facts.md 7.2): 256 CUs of 4 SIMDs, 2.4 GHz peak
  // engine clock, 8 TB/s HBM3E; 7.1: at most 8 waves per SIMD; 6.1: 160 KiB
  // of LDS per CU.
  int64_t cus = 256;
  int64_t simdsPerCu = 4;
  double clockGHz = 2.4;
  double hbmBytesPerSecond = 8e12;
  int64_t maxWavesPerSimd = 8;
  int64_t ldsBytesPerCu = 160 * 1024;

  // Issue costs in cycles of one wave. A wave64 VALU instruction runs four
  // passes on the 16-lane SIMD (7.1: wave64 only, 4 SIMDs; the 16-lane SIMD
  // is the GCN/CDNA organisation). SALU 1 (assumption: the GCN issue cadence
  // can make it up to 4 for a lone wave). Transcendentals (v_exp, v_log,
  // v_rcp, v_rsq, v_sqrt, v_sin, v_cos) at quarter rate (assumption).
  int64_t valuCycles = 4;
  int64_t saluCycles = 1;
  int64_t transCycles = 16;
  /// Cycles a wave spends issuing an MFMA (its operands' read); the matrix
  /// core is then busy for the instruction's cycles (facts 7.3) while the
  /// wave goes on issuing independent instructions.
  int64_t mfmaIssueCycles = 4;
  /// Vector memory and LDS instructions take one VALU-like issue.
  int64_t vmemIssueCycles = 4;
  int64_t ldsIssueCycles = 4;
  int64_t barrierCycles = 4;
  /// Extra cycles of a taken branch (instruction buffer refill; assumption).
  int64_t takenBranchCycles = 4;

  // Latencies in cycles (assumptions, see bench/README.md): a vector memory
  // load or store is acknowledged after vmemLatency (between an L2 hit and an
  // HBM miss); LDS after ldsLatency plus its bytes at ldsBytesPerCycle; a
  // scalar load after smemLatency. Stores and atomics count in vmcnt on gfx9.
  int64_t vmemLatency = 500;
  int64_t vmemStoreLatency = 500;
  int64_t ldsLatency = 64;
  int64_t ldsBytesPerCycle = 128;
  int64_t smemLatency = 200;
  int64_t expLatency = 16;

  /// Fixed time per kernel launch added to every kernel estimate (us;
  /// assumption: dispatch and drain that a device-time measurement includes).
  double launchUs = 2.0;
};

} // namespace moegen::latency

#endif // MOEGEN_BENCH_LATENCY_MODEL_MACHINEMODEL_H
