//===- KernelTime.h - From one wave's timing to a kernel's time -*- C++ -*-===//
//
// Workgroups are spread evenly over the CUs and their waves over the 4
// SIMDs. A SIMD runs its waves in rounds of at most `concurrent` (occupancy
// by registers, LDS and the 8-wave limit); a round lasts as long as the
// slowest of: one wave's latency-bound time, the shared vector issue, the
// shared scalar unit, the shared matrix core (each the wave's busy cycles
// times the waves in the round). Waves of workgroups without work (their
// early exit simulated separately) run in rounds of their own.
//
// time = max(latency-bound SIMD time, bytes / HBM bandwidth,
//            all MFMA cycles / all matrix cores) + launch overhead.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_BENCH_LATENCY_MODEL_KERNELTIME_H
#define MOEGEN_BENCH_LATENCY_MODEL_KERNELTIME_H

#include "bench/latency_model/MachineModel.h"
#include "bench/latency_model/WaveSim.h"

#include <optional>

namespace moegen::latency {

struct KernelLaunch {
  int64_t workgroups = 0;     // with work
  int64_t idleWorkgroups = 0; // that exit early
  int64_t wavesPerWorkgroup = 1;
  int64_t wavesPerSimdByRegisters = 8; // occupancy from VGPRs/AGPRs
  int64_t ldsBytes = 0;                // per workgroup
  double bytes = 0;                    // memory the kernel must move (HBM)
};

struct KernelTime {
  int64_t concurrentWavesPerSimd = 0;
  int64_t wavesPerSimd = 0, idleWavesPerSimd = 0;
  double latencyUs = 0, bandwidthUs = 0, mfmaUs = 0, launchUs = 0;
  double totalUs = 0;
  const char *bound = ""; // "latency", "bandwidth" or "mfma"
};

/// Waves of one workgroup that may share a SIMD at once.
int64_t concurrentWavesPerSimd(const MachineModel &m, const KernelLaunch &l);

/// `idle` is the early-exit wave's timing (needed when idleWorkgroups > 0).
KernelTime kernelTime(const MachineModel &m, const KernelLaunch &l, const WaveResult &wave,
                      const std::optional<WaveResult> &idle);

} // namespace moegen::latency

#endif // MOEGEN_BENCH_LATENCY_MODEL_KERNELTIME_H
