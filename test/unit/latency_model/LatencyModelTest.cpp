//===- LatencyModelTest.cpp - The wave-level latency model ----------------===//

#include "bench/latency_model/Isa.h"
#include "bench/latency_model/KernelTime.h"
#include "bench/latency_model/WaveSim.h"

#include <gtest/gtest.h>

using namespace moegen::latency;

namespace {

Program parse(llvm::StringRef text) {
  auto p = parseIsa(text);
  EXPECT_TRUE(static_cast<bool>(p)) << (p ? "" : llvm::toString(p.takeError()));
  return p ? std::move(*p) : Program();
}

WaveResult run(llvm::StringRef text, const MachineModel &m = MachineModel(),
               const WaveConfig &cfg = WaveConfig()) {
  Program p = parse(text);
  auto r = simulateWave(p, m, cfg);
  EXPECT_TRUE(static_cast<bool>(r)) << (r ? "" : llvm::toString(r.takeError()));
  return r ? *r : WaveResult();
}

/// A load, a wait for it and an add that uses it.
const char *kLoadWaitAdd = R"(k:
  global_load_dword v1, v0, s[2:3]
  s_waitcnt vmcnt(0)
  v_add_u32_e32 v2, v1, v1
  s_endpgm)";

TEST(LatencyModel, WaitcntAfterLoadStallsForTheLatency) {
  MachineModel m;
  WaveResult r = run(kLoadWaitAdd, m);
  // The load completes at vmemLatency; the wait ends there, then the wait
  // itself and the add issue.
  EXPECT_EQ(r.cycles, m.vmemLatency + m.saluCycles + m.valuCycles);
  EXPECT_EQ(r.stallVm, m.vmemLatency - m.vmemIssueCycles);
  EXPECT_EQ(r.vmemLoads, 1);
}

TEST(LatencyModel, NoWaitMeansNoStall) {
  MachineModel m;
  WaveResult r = run(R"(k:
  global_load_dword v1, v0, s[2:3]
  v_add_u32_e32 v2, v3, v3
  v_add_u32_e32 v4, v3, v3
  s_endpgm)",
                     m);
  EXPECT_EQ(r.stallVm, 0);
  // The wave still ends only when its load has completed.
  EXPECT_EQ(r.cycles, m.vmemLatency);
}

TEST(LatencyModel, VmcntCompletesInOrder) {
  MachineModel m;
  m.vmemLatency = 500;
  m.vmemStoreLatency = 100;
  // vmcnt(1): everything but the youngest must be done. The store alone
  // would be done at 104, but it completes in order behind the first load
  // (500), so the wait ends at 500, not at 104.
  WaveResult r = run(R"(k:
  global_load_dword v1, v0, s[2:3]
  global_store_dword v0, v5, s[2:3]
  global_load_dword v2, v0, s[2:3]
  s_waitcnt vmcnt(1)
  s_endpgm)",
                     m);
  EXPECT_EQ(r.stallVm, 500 - 3 * m.vmemIssueCycles);
  EXPECT_EQ(r.cycles, 8 + 500); // the second load issued at 8

  // vmcnt(2) only needs the first load.
  WaveResult r2 = run(R"(k:
  global_load_dword v1, v0, s[2:3]
  global_store_dword v0, v5, s[2:3]
  global_load_dword v2, v0, s[2:3]
  s_waitcnt vmcnt(2)
  v_mov_b32_e32 v9, v1
  s_endpgm)",
                      m);
  EXPECT_EQ(r2.stallVm, 500 - 3 * m.vmemIssueCycles);
}

TEST(LatencyModel, ScalarLoadsCompleteInAnyOrderUnderLgkmcnt) {
  MachineModel m;
  WaveResult r = run(R"(k:
  s_load_dword s4, s[0:1], 0x0
  ds_read_b32 v1, v0
  s_waitcnt lgkmcnt(1)
  s_endpgm)",
                     m);
  // The LDS read (issued at 1, done at 1 + 64 + 2) finishes long before the
  // scalar load (200): lgkmcnt(1) waits only for the earlier completion.
  EXPECT_EQ(r.stallLgkm, 1 + m.ldsLatency + 2 - (1 + m.ldsIssueCycles));
}

TEST(LatencyModel, IndependentMfmasIssueBackToBack) {
  MachineModel m;
  WaveResult fp4 = run(R"(k:
  v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[16:19], v[20:23], v[0:3], v24, v25 op_sel_hi:[0,0,0] cbsz:4 blgp:4
  v_mfma_scale_f32_16x16x128_f8f6f4 v[4:7], v[16:19], v[20:23], v[4:7], v24, v25 op_sel_hi:[0,0,0] cbsz:4 blgp:4
  v_mfma_scale_f32_16x16x128_f8f6f4 v[8:11], v[16:19], v[20:23], v[8:11], v24, v25 op_sel_hi:[0,0,0] cbsz:4 blgp:4
  v_mfma_scale_f32_16x16x128_f8f6f4 v[12:15], v[16:19], v[20:23], v[12:15], v24, v25 op_sel_hi:[0,0,0] cbsz:4 blgp:4
  s_endpgm)",
                       m);
  EXPECT_EQ(fp4.mfmas, 4);
  EXPECT_EQ(fp4.mfmaBusy, 4 * 16);
  EXPECT_EQ(fp4.cycles, 4 * 16); // the matrix core is the bottleneck, never idle
  // fp8 A (cbsz absent = 0) runs at half rate (docs/gfx950-facts.md 7.3).
  WaveResult fp8 = run(R"(k:
  v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[16:23], v[24:31], v[0:3], v32, v33 op_sel_hi:[0,0,0]
  v_mfma_scale_f32_16x16x128_f8f6f4 v[4:7], v[16:23], v[24:31], v[4:7], v32, v33 op_sel_hi:[0,0,0]
  s_endpgm)",
                       m);
  EXPECT_EQ(fp8.cycles, 2 * 32);
  // A chain on one accumulator is forwarded: no extra latency either.
  WaveResult chain = run(R"(k:
  v_mfma_f32_16x16x32_bf16 a[0:3], v[16:19], v[20:23], a[0:3]
  v_mfma_f32_16x16x32_bf16 a[0:3], v[16:19], v[20:23], a[0:3]
  v_mfma_f32_16x16x32_bf16 a[0:3], v[16:19], v[20:23], a[0:3]
  s_endpgm)",
                         m);
  EXPECT_EQ(chain.cycles, 3 * 16);
}

TEST(LatencyModel, ReadingAnMfmaResultWaitsForIt) {
  MachineModel m;
  WaveResult r = run(R"(k:
  v_mfma_f32_16x16x32_bf16 a[0:3], v[16:19], v[20:23], a[0:3]
  v_add_u32_e32 v30, v31, v31
  v_accvgpr_read_b32 v40, a2
  s_endpgm)",
                     m);
  // The independent add overlaps the MFMA; the read of a2 waits until 16.
  EXPECT_EQ(r.cycles, 16 + m.valuCycles);
  EXPECT_EQ(r.stallMfma, 16 - (m.mfmaIssueCycles + m.valuCycles));
}

const char *kCountedLoop = R"(k:
  s_load_dword s5, s[0:1], 0x0
  s_mov_b32 s4, 0
  s_waitcnt lgkmcnt(0)
.LBB0_1:
  v_add_u32_e32 v1, v1, v1
  s_add_i32 s4, s4, 1
  s_cmp_lg_u32 s4, s5
  s_cbranch_scc1 .LBB0_1
  s_endpgm)";

TEST(LatencyModel, CyclesByInstructionAddUpToTheWave) {
  MachineModel m;
  WaveResult r = run(kLoadWaitAdd, m);
  ASSERT_EQ(r.cyclesByInst.size(), 4u);
  // The stall is charged to the wait that takes it, the issue to each
  // instruction; together they are the wave's time.
  EXPECT_EQ(r.cyclesByInst[0], m.vmemIssueCycles);
  EXPECT_EQ(r.cyclesByInst[1], m.vmemLatency - m.vmemIssueCycles + m.saluCycles);
  EXPECT_EQ(r.cyclesByInst[2], m.valuCycles);
  EXPECT_EQ(r.cyclesByInst[3], 0);
  int64_t sum = 0;
  for (int64_t c : r.cyclesByInst)
    sum += c;
  EXPECT_EQ(sum, r.cycles);

  // A loop's instructions add up over its trips.
  WaveConfig cfg;
  cfg.kernarg[0] = 10;
  WaveResult loop = run(kCountedLoop, m, cfg);
  sum = 0;
  for (int64_t c : loop.cyclesByInst)
    sum += c;
  EXPECT_EQ(sum, loop.cycles);
}

TEST(LatencyModel, LoopCostsTripsTimesBody) {
  MachineModel m;
  auto withTrips = [&](uint32_t n) {
    WaveConfig cfg;
    cfg.kernarg[0] = n; // the loop bound is a kernel argument
    return run(kCountedLoop, m, cfg);
  };
  WaveResult r10 = withTrips(10), r30 = withTrips(30);
  int64_t body = m.valuCycles + 3 * m.saluCycles + m.takenBranchCycles;
  EXPECT_EQ(r30.cycles - r10.cycles, 20 * body);
  EXPECT_EQ(r30.instructions - r10.instructions, 20 * 4);
  EXPECT_EQ(r10.undecidedBranches, 0);
  // The first wait covers the scalar load; then 9 taken and 1 final trip.
  EXPECT_EQ(r10.cycles, m.smemLatency + m.saluCycles + 10 * body - m.takenBranchCycles);

  // Without the argument the bound is unknown and the hint decides.
  WaveConfig hinted;
  hinted.tripHint = [](const Program &, const Loop &) { return 10; };
  WaveResult h = run(kCountedLoop, m, hinted);
  EXPECT_EQ(h.cycles, r10.cycles);
  EXPECT_EQ(h.undecidedBranches, 10);
}

TEST(LatencyModel, DisassemblyBranchOffsetsAndLoops) {
  // The disassembler's form: numeric branch offsets (in dwords from the
  // next instruction) and addresses in comments.
  Program p = parse(R"(k:
  s_mov_b32 s4, 0  // 000000001000
  s_add_i32 s4, s4, 1  // 000000001004
  s_cmp_lg_u32 s4, 3  // 000000001008
  s_cbranch_scc1 65533  // 00000000100c
  s_cbranch_execz 1  // 000000001010
  v_mov_b32_e32 v0, 0  // 000000001014
  s_endpgm  // 000000001018
)");
  ASSERT_EQ(p.insts.size(), 7u);
  EXPECT_EQ(p.insts[3].target, 1);
  EXPECT_EQ(p.insts[4].target, 6);
  ASSERT_EQ(p.loops.size(), 1u);
  EXPECT_EQ(p.loops[0].header, 1u);
  EXPECT_EQ(p.loops[0].latch, 3u);
  auto r = simulateWave(p, MachineModel(), WaveConfig());
  ASSERT_TRUE(static_cast<bool>(r));
  EXPECT_EQ(r->instructions, 1 + 3 * 3 + 3); // exec is full: execz falls through
}

TEST(LatencyModel, WaitcntImmediateAndErrors) {
  Program p = parse("k:\n  s_waitcnt 0\n  s_waitcnt vmcnt(3) lgkmcnt(1)\n  s_endpgm\n");
  ASSERT_EQ(p.insts.size(), 3u);
  EXPECT_EQ(p.insts[0].vmcnt, 0);
  EXPECT_EQ(p.insts[0].lgkmcnt, 0);
  EXPECT_EQ(p.insts[1].vmcnt, 3);
  EXPECT_EQ(p.insts[1].lgkmcnt, 1);
  EXPECT_FALSE(p.insts[1].expcnt.has_value());
  auto bad = parseIsa("k:\n  frobnicate v0\n  s_endpgm\n");
  EXPECT_FALSE(static_cast<bool>(bad));
  llvm::consumeError(bad.takeError());
  auto noTarget = parseIsa("k:\n  s_branch .LBB9_9\n  s_endpgm\n");
  EXPECT_FALSE(static_cast<bool>(noTarget));
  llvm::consumeError(noTarget.takeError());
}

TEST(LatencyModel, EarlyExitTakesTheBranchToTheEnd) {
  const char *text = R"(k:
  s_load_dword s4, s[2:3], 0x0
  s_waitcnt lgkmcnt(0)
  s_cmp_gt_u32 s4, 5
  s_cbranch_scc1 .LBB0_2
  global_load_dword v1, v0, s[2:3]
  s_waitcnt vmcnt(0)
.LBB0_2:
  s_endpgm)";
  MachineModel m;
  WaveResult work = run(text, m);
  WaveConfig exit;
  exit.exitEarly = true;
  WaveResult idle = run(text, m, exit);
  EXPECT_GT(work.cycles, m.vmemLatency);
  EXPECT_LT(idle.cycles, m.smemLatency + 20);
}

TEST(LatencyModel, AKnownZeroDecidesAnIfElseGuard) {
  // The flow guard of an if-else as LLVM lays it out: the guard is set to 0
  // on the first arm's way, then ANDed with an EXEC the model no longer
  // knows (here: after a compare of unknown lanes). AND with a known zero is
  // zero, so the second arm is skipped and no branch is left to the policy.
  const char *text = R"(k:
  s_mov_b64 s[4:5], 0
  v_cmp_gt_u32_e32 vcc, v1, v2
  s_and_saveexec_b64 s[6:7], vcc
  s_or_b64 exec, exec, s[6:7]
  s_and_b64 vcc, exec, s[4:5]
  s_cbranch_vccz .LBB0_2
  global_load_dword v1, v0, s[2:3]
  s_waitcnt vmcnt(0)
.LBB0_2:
  s_endpgm)";
  MachineModel m;
  WaveResult r = run(text, m);
  EXPECT_EQ(r.undecidedBranches, 0);
  EXPECT_EQ(r.vmemLoads, 0);
}

TEST(LatencyModel, KernelTimeRoundsAndFloors) {
  MachineModel m;
  WaveResult w;
  w.cycles = 2400; // 1 us
  w.valuBusy = 100;
  KernelLaunch l;
  l.workgroups = 256 * 16; // 16 per CU, one wave each: 4 per SIMD
  l.wavesPerWorkgroup = 1;
  l.wavesPerSimdByRegisters = 2; // two rounds of two
  KernelTime t = kernelTime(m, l, w, std::nullopt);
  EXPECT_EQ(t.wavesPerSimd, 4);
  EXPECT_EQ(t.concurrentWavesPerSimd, 2);
  EXPECT_DOUBLE_EQ(t.latencyUs, 2.0);
  EXPECT_DOUBLE_EQ(t.totalUs, 2.0 + m.launchUs);
  // When issue is the bottleneck, the round takes n * busy.
  w.valuBusy = 2000;
  EXPECT_DOUBLE_EQ(kernelTime(m, l, w, std::nullopt).latencyUs, 2 * 2 * 2000 / 2400.0);
  // 80 MB at 8 TB/s is 10 us: the bandwidth floor wins.
  l.bytes = 80e6;
  KernelTime b = kernelTime(m, l, w, std::nullopt);
  EXPECT_DOUBLE_EQ(b.bandwidthUs, 10.0);
  EXPECT_STREQ(b.bound, "bandwidth");
  // LDS: 100 KiB per workgroup leaves one workgroup per CU.
  l.ldsBytes = 100 * 1024;
  l.wavesPerWorkgroup = 4;
  EXPECT_EQ(concurrentWavesPerSimd(m, l), 1);
}

} // namespace
