//===- WaveSim.cpp - Timing of one wave through a kernel's ISA ------------===//

#include "bench/latency_model/WaveSim.h"

#include "bench/latency_model/ScalarState.h"

#include <algorithm>

namespace moegen::latency {
namespace {

/// Outstanding operations of one counter, as completion cycles.
struct Counter {
  std::vector<int64_t> done;
  void retire(int64_t now) {
    done.erase(std::remove_if(done.begin(), done.end(), [&](int64_t c) { return c <= now; }),
               done.end());
  }
  /// The cycle at which at most n remain outstanding (>= now).
  int64_t until(int64_t now, int64_t n) {
    retire(now);
    if (static_cast<int64_t>(done.size()) <= n)
      return now;
    std::sort(done.begin(), done.end());
    return done[done.size() - static_cast<size_t>(n) - 1];
  }
  int64_t last() const { return done.empty() ? 0 : *std::max_element(done.begin(), done.end()); }
};

struct PendingMfma {
  RegRange dst;
  int64_t ready;
};

bool leadsToEnd(const Program &p, size_t i) {
  for (size_t k = i; k < p.insts.size() && k < i + 8; ++k) {
    InstClass c = p.insts[k].cls;
    if (c == InstClass::EndPgm)
      return true;
    if (c != InstClass::Nop && c != InstClass::Salu && c != InstClass::Waitcnt)
      return false;
  }
  return false;
}

} // namespace

llvm::Expected<WaveResult> simulateWave(const Program &p, const MachineModel &mm,
                                        const WaveConfig &cfg) {
  ScalarState state(cfg.lanes, cfg.kernargSgpr);
  for (auto [off, v] : cfg.kernarg)
    state.setKernarg(off, v);
  for (auto [i, v] : cfg.sgprs)
    state.setSgpr(i, v);
  const size_t nLoops = p.loops.size();
  std::vector<int64_t> iter(nLoops, 0), trips(nLoops, -1);
  std::vector<bool> inside(nLoops, false);
  auto tripsOf = [&](size_t l) {
    if (trips[l] < 0)
      trips[l] = std::max<int64_t>(1, cfg.tripHint ? cfg.tripHint(p, p.loops[l]) : 1);
    return trips[l];
  };
  auto loopWithHeader = [&](size_t h) -> int {
    for (size_t l = 0; l < nLoops; ++l)
      if (p.loops[l].header == h)
        return static_cast<int>(l);
    return -1;
  };

  WaveResult r;
  r.cyclesByInst.assign(p.insts.size(), 0);
  Counter vm, lgkm, exp;
  int64_t t = 0, mfmaFree = 0, lastVm = 0, lastLds = 0;
  std::vector<PendingMfma> pending;
  size_t pc = 0;
  for (;;) {
    if (pc >= p.insts.size())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "the wave ran past the last instruction");
    if (++r.instructions > cfg.maxInstructions)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "more than %lld instructions: a loop does not terminate",
                                     static_cast<long long>(cfg.maxInstructions));
    for (size_t l = 0; l < nLoops; ++l) {
      bool in = p.loops[l].contains(pc);
      if (in && !inside[l])
        iter[l] = 1;
      inside[l] = in;
    }
    const Inst &in = p.insts[pc];
    const int64_t issuedAt = t;

    // Results of MFMAs still in flight.
    if (!pending.empty()) {
      pending.erase(std::remove_if(pending.begin(), pending.end(),
                                   [&](const PendingMfma &m) { return m.ready <= t; }),
                    pending.end());
      int64_t ready = t;
      for (const PendingMfma &m : pending)
        for (size_t k = 0; k < in.regs.size(); ++k) {
          const RegRange &reg = in.regs[k];
          bool chain = in.cls == InstClass::Mfma && (k == 0 || k == 3) && reg.file == m.dst.file &&
                       reg.lo == m.dst.lo && reg.hi == m.dst.hi;
          if (!chain && reg.overlaps(m.dst))
            ready = std::max(ready, m.ready);
        }
      r.stallMfma += ready - t;
      t = ready;
    }

    size_t next = pc + 1;
    switch (in.cls) {
    case InstClass::Salu:
      state.execute(in);
      t += mm.saluCycles;
      r.saluBusy += mm.saluCycles;
      break;
    case InstClass::Smem:
      state.execute(in);
      lgkm.done.push_back(t + mm.smemLatency);
      ++r.smemLoads;
      t += mm.saluCycles;
      r.saluBusy += mm.saluCycles;
      break;
    case InstClass::Valu:
    case InstClass::ValuTrans: {
      state.execute(in);
      int64_t c = in.cls == InstClass::Valu ? mm.valuCycles : mm.transCycles;
      t += c;
      r.valuBusy += c;
      break;
    }
    case InstClass::Mfma: {
      state.execute(in);
      int64_t start = std::max(t, mfmaFree);
      r.stallMfma += start - t;
      mfmaFree = start + in.mfmaCycles;
      if (in.hasDef)
        pending.push_back({in.regs.front(), mfmaFree});
      t = start + mm.mfmaIssueCycles;
      r.valuBusy += mm.mfmaIssueCycles;
      r.mfmaBusy += in.mfmaCycles;
      ++r.mfmas;
      break;
    }
    case InstClass::VmemLoad:
    case InstClass::VmemStore: {
      state.execute(in);
      bool load = in.cls == InstClass::VmemLoad;
      lastVm = std::max(t + (load ? mm.vmemLatency : mm.vmemStoreLatency), lastVm);
      vm.done.push_back(lastVm);
      if (!load)
        exp.done.push_back(t + mm.expLatency);
      ++(load ? r.vmemLoads : r.vmemStores);
      t += mm.vmemIssueCycles;
      r.valuBusy += mm.vmemIssueCycles;
      break;
    }
    case InstClass::Lds: {
      state.execute(in);
      int64_t bytes = in.ldsBytesPerLane * cfg.lanes;
      lastLds = std::max(t + mm.ldsLatency + (bytes + mm.ldsBytesPerCycle - 1) / mm.ldsBytesPerCycle,
                         lastLds);
      lgkm.done.push_back(lastLds);
      ++r.ldsOps;
      t += mm.ldsIssueCycles;
      r.valuBusy += mm.ldsIssueCycles;
      break;
    }
    case InstClass::Waitcnt: {
      auto wait = [&](Counter &c, std::optional<int64_t> n, int64_t &stall) {
        if (!n)
          return;
        int64_t u = c.until(t, *n);
        stall += u - t;
        t = u;
        c.retire(t);
      };
      wait(vm, in.vmcnt, r.stallVm);
      wait(lgkm, in.lgkmcnt, r.stallLgkm);
      int64_t ignored = 0;
      wait(exp, in.expcnt, ignored);
      t += mm.saluCycles;
      break;
    }
    case InstClass::Barrier:
      t += mm.barrierCycles;
      break;
    case InstClass::Nop:
      t += in.nopCycles;
      break;
    case InstClass::Branch:
    case InstClass::CondBranch: {
      t += mm.saluCycles;
      r.saluBusy += mm.saluCycles;
      size_t target = static_cast<size_t>(in.target);
      bool take = in.cls == InstClass::Branch;
      if (in.cls == InstClass::CondBranch) {
        if (auto known = state.taken(in)) {
          take = *known;
        } else {
          ++r.undecidedBranches;
          int inner = p.innermostLoop(pc);
          if (target <= pc) {
            int l = loopWithHeader(target);
            take = l >= 0 && iter[l] < tripsOf(static_cast<size_t>(l));
          } else if (inner >= 0 && !p.loops[inner].contains(target)) {
            take = iter[inner] >= tripsOf(static_cast<size_t>(inner));
          } else {
            take = cfg.exitEarly && leadsToEnd(p, target);
          }
        }
      }
      if (take) {
        t += mm.takenBranchCycles;
        if (target <= pc)
          if (int l = loopWithHeader(target); l >= 0)
            ++iter[l];
        next = target;
      }
      break;
    }
    case InstClass::EndPgm:
      r.cycles = std::max({t, mfmaFree, vm.last(), lgkm.last()});
      r.cyclesByInst[pc] += r.cycles - issuedAt;
      return r;
    }
    r.cyclesByInst[pc] += t - issuedAt;
    pc = next;
  }
}

} // namespace moegen::latency
