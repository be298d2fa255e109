//===- KernelTime.cpp - From one wave's timing to a kernel's time ---------===//

#include "bench/latency_model/KernelTime.h"

#include <algorithm>

namespace moegen::latency {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : 0; }

/// Cycles one SIMD needs for `waves` waves, `k` at a time.
int64_t simdCycles(int64_t waves, int64_t k, const WaveResult &w) {
  int64_t cycles = 0;
  for (int64_t left = waves; left > 0; left -= k) {
    int64_t n = std::min(left, k);
    cycles += std::max({w.cycles, n * w.valuBusy, n * w.saluBusy, n * w.mfmaBusy});
  }
  return cycles;
}

} // namespace

int64_t concurrentWavesPerSimd(const MachineModel &m, const KernelLaunch &l) {
  int64_t k = std::min(m.maxWavesPerSimd, std::max<int64_t>(1, l.wavesPerSimdByRegisters));
  if (l.ldsBytes > 0) {
    // Workgroups per CU that fit in LDS, each putting its waves on the SIMDs.
    int64_t groups = std::max<int64_t>(1, m.ldsBytesPerCu / l.ldsBytes);
    int64_t waves = std::max<int64_t>(1, groups * l.wavesPerWorkgroup / m.simdsPerCu);
    k = std::min(k, waves);
  }
  return k;
}

KernelTime kernelTime(const MachineModel &m, const KernelLaunch &l, const WaveResult &wave,
                      const std::optional<WaveResult> &idle) {
  KernelTime t;
  t.concurrentWavesPerSimd = concurrentWavesPerSimd(m, l);
  auto perSimd = [&](int64_t workgroups) {
    int64_t perCu = ceilDiv(workgroups, m.cus);
    return ceilDiv(perCu * l.wavesPerWorkgroup, m.simdsPerCu);
  };
  t.wavesPerSimd = perSimd(l.workgroups);
  t.idleWavesPerSimd = idle ? perSimd(l.idleWorkgroups) : 0;
  int64_t cycles = simdCycles(t.wavesPerSimd, t.concurrentWavesPerSimd, wave);
  if (idle)
    cycles += simdCycles(t.idleWavesPerSimd, t.concurrentWavesPerSimd, *idle);
  double cyclesPerUs = m.clockGHz * 1e3;
  t.latencyUs = cycles / cyclesPerUs;
  t.bandwidthUs = l.bytes / m.hbmBytesPerSecond * 1e6;
  double mfmaCycles = double(wave.mfmaBusy) * l.workgroups * l.wavesPerWorkgroup;
  t.mfmaUs = mfmaCycles / double(m.cus * m.simdsPerCu) / cyclesPerUs;
  t.launchUs = m.launchUs;
  double body = std::max({t.latencyUs, t.bandwidthUs, t.mfmaUs});
  t.bound = body == t.latencyUs ? "latency" : body == t.bandwidthUs ? "bandwidth" : "mfma";
  t.totalUs = body + t.launchUs;
  return t;
}

} // namespace moegen::latency
