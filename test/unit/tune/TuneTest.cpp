//===- TuneTest.cpp - moegen tune's candidates, journal and rows ----------===//

#include "compiler/spec/DslParser.h"
#include "runtime/dispatch/KernelName.h"
#include "runtime/numerics/Compare.h"
#include "runtime/numerics/MxQuant.h"
#include "tune/Journal.h"
#include "tune/Pool.h"
#include "tune/Space.h"
#include "tune/TunedRows.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <set>

using namespace moegen;

namespace {

MoeSpec example(const char *name) {
  const char *src = std::getenv("MOEGEN_SOURCE_DIR");
  EXPECT_NE(src, nullptr);
  auto spec = parseMoeSpecFile(std::string(src ? src : ".") + "/examples/" + name);
  EXPECT_TRUE(!!spec) << llvm::toString(spec.takeError());
  return spec ? *spec : MoeSpec();
}

std::string tempPath(const char *name) {
  llvm::SmallString<128> path;
  llvm::sys::fs::createUniquePath(std::string("moegen-tune-%%%%%%-") + name, path, true);
  return path.str().str();
}

// Every kept candidate of the examples' layers is spelled by an aiter name
// that reads back to the schedule (what `moegen lookup` and MoeLayer read).
TEST(TuneSpace, KernelNamesReadBackToTheSchedule) {
  for (const char *name :
       {"kimi_k3_tp8_a4w4.moe", "kimi_k3_tp8_a8w4.moe", "kimi_k3_tp8_a16w4.moe"}) {
    MoeSpec spec = example(name);
    tune::SearchSpace space;
    space.kBatch1 = {1, 2};
    tune::SpaceReport report;
    auto candidates =
        tune::enumerateCandidates(spec, space, TargetInfo::defaultTarget(), report);
    ASSERT_FALSE(candidates.empty()) << name;
    EXPECT_EQ(report.generated, report.kept + report.rejectedTotal());
    std::set<std::string> ids;
    for (const tune::Candidate &c : candidates) {
      EXPECT_TRUE(ids.insert(c.id).second) << "duplicate id " << c.id;
      auto mapped = dispatch::kernelNameToSchedule(c.kernelName);
      ASSERT_TRUE(!!mapped) << c.kernelName << ": " << llvm::toString(mapped.takeError());
      const StageSchedule &s = c.layer.stage(c.stage), &r = mapped->schedule;
      EXPECT_EQ(mapped->stage, c.stage);
      EXPECT_EQ(r.tileM, s.tileM);
      EXPECT_EQ(r.tileN, s.tileN);
      EXPECT_EQ(r.tileK, s.tileK);
      EXPECT_EQ(r.kBatch, s.kBatch);
      EXPECT_EQ(r.kWave, s.kWave);
      EXPECT_EQ(r.wavesPerEU, s.wavesPerEU) << c.kernelName;
      EXPECT_EQ(r.fusedQuant, s.fusedQuant);
      EXPECT_EQ(mapped->activation, spec.formats.activation);
      if (c.stage == StageId::Stage2) {
        EXPECT_EQ(r.reduce, s.reduce);
        EXPECT_EQ(mapped->sortBlockM, c.layer.stage1.tileM);
      }
    }
  }
}

// The aiter names of the tables moegen was seeded from are what
// kernelNameFor writes for their schedules.
TEST(TuneSpace, KernelNameForMatchesAiter) {
  MoeSpec spec = example("kimi_k3_tp8_a4w4.moe");
  auto n1 = dispatch::kernelNameFor(spec, StageId::Stage1);
  ASSERT_TRUE(!!n1) << llvm::toString(n1.takeError());
  EXPECT_EQ(*n1, "flydsl_moe1_afp4_wfp4_bf16_t32x32x256_w4_kw2_fp4");
  auto n2 = dispatch::kernelNameFor(spec, StageId::Stage2);
  ASSERT_TRUE(!!n2) << llvm::toString(n2.takeError());
  EXPECT_EQ(*n2, "flydsl_moe2_afp4_wfp4_bf16_t32x128x128_atomic_sbm32");
  // weight_decode = arithmetic (sm_90a) is moegen's own _dqa, read back.
  MoeSpec arith = spec;
  arith.stage1.weightDecode = arith.stage2.weightDecode = WeightDecode::Arithmetic;
  for (StageId stage : {StageId::Stage1, StageId::Stage2}) {
    auto name = dispatch::kernelNameFor(arith, stage);
    ASSERT_TRUE(!!name) << llvm::toString(name.takeError());
    EXPECT_EQ(*name, (stage == StageId::Stage1 ? *n1 : *n2) + "_dqa");
    auto back = dispatch::kernelNameToSchedule(*name);
    ASSERT_TRUE(!!back) << llvm::toString(back.takeError());
    EXPECT_EQ(back->schedule.weightDecode, WeightDecode::Arithmetic);
  }
  // xcd_swizzle (gfx950) is aiter's _xcd{n}, at its place in either grammar.
  MoeSpec xcd = spec;
  xcd.stage1.xcdSwizzle = 4;
  xcd.stage2.xcdSwizzle = 8;
  auto x1 = dispatch::kernelNameFor(xcd, StageId::Stage1);
  auto x2 = dispatch::kernelNameFor(xcd, StageId::Stage2);
  ASSERT_TRUE(x1 && x2);
  EXPECT_EQ(*x1, "flydsl_moe1_afp4_wfp4_bf16_t32x32x256_w4_xcd4_kw2_fp4");
  EXPECT_EQ(*x2, "flydsl_moe2_afp4_wfp4_bf16_t32x128x128_atomic_xcd8_sbm32");
  for (const std::string &name : {*x1, *x2}) {
    auto back = dispatch::kernelNameToSchedule(name);
    ASSERT_TRUE(!!back) << llvm::toString(back.takeError());
    EXPECT_EQ(back->schedule.xcdSwizzle, name == *x1 ? 4 : 8);
  }
  // What the grammar cannot spell is an error naming the parameter.
  spec.stage2.kBatch = 2;
  auto bad = dispatch::kernelNameFor(spec, StageId::Stage2);
  ASSERT_FALSE(!!bad);
  EXPECT_NE(llvm::toString(bad.takeError()).find("k_batch=2"), std::string::npos);
}

/// A space of one value per axis but block_m (tile_n as given): the tests
/// widen the axis they are about.
tune::SearchSpace singleValued(int64_t tileN1, int64_t tileN2) {
  tune::SearchSpace space;
  space.tileN1 = {tileN1};
  space.tileK1 = {256};
  space.kBatch1 = {1};
  space.kWave1 = {1};
  space.wavesPerEU1 = {4};
  space.tileN2 = {tileN2};
  space.tileK2 = {128};
  space.wavesPerEU2 = {0};
  space.reduce2 = {ReduceMode::Atomic};
  return space;
}

// On sm_90a the default sorting blocks include 48 and 80 rows (the H200
// tables take them from 1024 tokens); gfx950 keeps aiter's.
TEST(TuneSpace, DefaultSortingBlocksPerTarget) {
  EXPECT_EQ(tune::SearchSpace::defaultsFor(TargetInfo::defaultTarget()).blockM,
            (std::vector<int64_t>{32, 64, 128}));
  tune::SearchSpace sm90 = tune::SearchSpace::defaultsFor(*TargetInfo::forChip("sm_90a"));
  EXPECT_EQ(sm90.blockM, (std::vector<int64_t>{32, 48, 64, 80, 128}));
  // Their candidates are named and read back like the others: the 80-row
  // block's stage-1 and stage-2 schedules of the Kimi-K3 a16w4 example.
  MoeSpec spec = example("kimi_k3_tp8_a16w4.moe");
  spec.stage1.kWave = 1;
  tune::SearchSpace space = singleValued(64, 256);
  space.blockM = {80};
  tune::SpaceReport report;
  std::vector<tune::Candidate> candidates =
      tune::enumerateCandidates(spec, space, *TargetInfo::forChip("sm_90a"), report);
  ASSERT_EQ(candidates.size(), 2u) << report.summary();
  for (const tune::Candidate &c : candidates) {
    EXPECT_EQ(c.blockM, 80);
    EXPECT_EQ(c.layer.stage1.tileM, 80);
    EXPECT_NE(c.kernelName.find(c.stage == StageId::Stage1 ? "_t80x64x256_" : "_t80x256x128_"),
              std::string::npos)
        << c.kernelName;
  }
}

// On sm_90a both weight decodings are searched by default; the arithmetic
// one only where the tile runs on mma.sync (128-row tiles with tile_n a
// multiple of 64 run on warpgroup MMAs: rejected by rule). gfx950 searches
// the default only, and refuses the other by rule.
TEST(TuneSpace, WeightDecodeAxis) {
  const TargetInfo sm90 = *TargetInfo::forChip("sm_90a");
  EXPECT_EQ(tune::SearchSpace::defaultsFor(TargetInfo::defaultTarget()).weightDecode1,
            (std::vector<WeightDecode>{WeightDecode::Mixed}));
  tune::SearchSpace defaults = tune::SearchSpace::defaultsFor(sm90);
  EXPECT_EQ(defaults.weightDecode1,
            (std::vector<WeightDecode>{WeightDecode::Mixed, WeightDecode::Arithmetic}));
  EXPECT_EQ(defaults.weightDecode2, defaults.weightDecode1);
  MoeSpec spec = example("kimi_k3_tp8_a16w4.moe");
  spec.stage1.kWave = 1;
  tune::SearchSpace space = singleValued(64, 256);
  space.blockM = {32, 128};
  space.weightDecode1 = space.weightDecode2 = defaults.weightDecode1;
  tune::SpaceReport report;
  std::vector<tune::Candidate> candidates = tune::enumerateCandidates(spec, space, sm90, report);
  // Per block and stage both decodings, but at 128 rows (both stages on wgmma).
  EXPECT_EQ(candidates.size(), 6u) << report.summary();
  EXPECT_EQ(report.rejected["stage1 weight_decode"], 1) << report.summary();
  EXPECT_EQ(report.rejected["stage2 weight_decode"], 1) << report.summary();
  for (const tune::Candidate &c : candidates) {
    const StageSchedule &s = c.layer.stage(c.stage);
    bool arith = s.weightDecode == WeightDecode::Arithmetic;
    EXPECT_EQ(llvm::StringRef(c.kernelName).ends_with("_dqa"), arith) << c.kernelName;
    EXPECT_EQ(llvm::StringRef(c.id).ends_with(" arithmetic"), arith) << c.id;
    // The partner stage keeps the spec's decoding.
    StageId partner = c.stage == StageId::Stage1 ? StageId::Stage2 : StageId::Stage1;
    EXPECT_EQ(c.layer.stage(partner).weightDecode, WeightDecode::Mixed) << c.id;
  }
  // A spec whose stage 2 decodes arithmetically is its own partner where the
  // tile allows it; on 128-row tiles (wgmma) the mixed decoding stands in.
  MoeSpec arith = spec;
  arith.stage2.weightDecode = WeightDecode::Arithmetic;
  tune::SpaceReport partners;
  for (const tune::Candidate &c : tune::enumerateCandidates(arith, space, sm90, partners))
    if (c.stage == StageId::Stage1)
      EXPECT_EQ(c.layer.stage2.weightDecode,
                c.blockM == 128 ? WeightDecode::Mixed : WeightDecode::Arithmetic)
          << c.id;
  EXPECT_TRUE(partners.skipped.empty());
  ASSERT_EQ(partners.partners.size(), 1u) << partners.summary();
  EXPECT_NE(partners.partners[0].find("block_m=128: stage1 with the partner s2 bm128"),
            std::string::npos)
      << partners.partners[0];
  tune::SpaceReport gfx;
  for (const tune::Candidate &c :
       tune::enumerateCandidates(spec, space, TargetInfo::defaultTarget(), gfx))
    EXPECT_EQ(c.layer.stage(c.stage).weightDecode, WeightDecode::Mixed) << c.id;
  EXPECT_EQ(gfx.rejected["stage1 weight_decode"], 2) << gfx.summary();
  tune::SearchSpace parsed;
  ASSERT_FALSE(!!parsed.setAxis("stage2.weight_decode=arithmetic,mixed"));
  EXPECT_EQ(parsed.weightDecode2,
            (std::vector<WeightDecode>{WeightDecode::Arithmetic, WeightDecode::Mixed}));
  llvm::Error bad = parsed.setAxis("stage1.weight_decode=tables");
  ASSERT_TRUE(!!bad);
  EXPECT_NE(llvm::toString(std::move(bad)).find("'tables' is not a value"), std::string::npos);
}

// sm_90a's steps of register weights ahead: searched where asked for (stage 1
// at 0, the plan's, and 2 by default on sm_90a; stage 2 and gfx950 at 0), named
// _pf{p} and read back; a depth beyond the K-group's steps, and gfx950, refuse
// it by rule.
TEST(TuneSpace, PrefetchAxis) {
  const TargetInfo sm90 = *TargetInfo::forChip("sm_90a");
  EXPECT_EQ(tune::SearchSpace::defaultsFor(sm90).prefetch1, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(tune::SearchSpace::defaultsFor(sm90).prefetch2, (std::vector<int64_t>{0}));
  EXPECT_EQ(tune::SearchSpace::defaultsFor(TargetInfo::defaultTarget()).prefetch1,
            (std::vector<int64_t>{0}));
  MoeSpec spec = example("kimi_k3_tp8_a16w4.moe"); // K = 3584 and 384: 28 and 3 steps of 128
  spec.stage1.kWave = 1;
  tune::SearchSpace space = singleValued(64, 256);
  space.blockM = {32};
  ASSERT_FALSE(!!space.setAxis("stage1.prefetch=0,2"));
  ASSERT_FALSE(!!space.setAxis("stage2.prefetch=3,4"));
  tune::SpaceReport report;
  std::vector<tune::Candidate> candidates = tune::enumerateCandidates(spec, space, sm90, report);
  EXPECT_EQ(candidates.size(), 3u) << report.summary();
  EXPECT_EQ(report.rejected["stage2 prefetch"], 1) << report.summary();
  for (const tune::Candidate &c : candidates) {
    int64_t pf = c.layer.stage(c.stage).prefetch;
    EXPECT_EQ(llvm::StringRef(c.kernelName).ends_with("_pf" + std::to_string(pf)), pf != 0)
        << c.kernelName;
    EXPECT_EQ(llvm::StringRef(c.id).ends_with(" pf" + std::to_string(pf)), pf != 0) << c.id;
  }
  tune::SpaceReport gfx;
  tune::enumerateCandidates(spec, space, TargetInfo::defaultTarget(), gfx);
  EXPECT_EQ(gfx.rejected["stage1 prefetch"], 1) << gfx.summary();
  llvm::Error bad = space.setAxis("stage1.prefetch=-1");
  ASSERT_TRUE(!!bad);
  llvm::consumeError(std::move(bad));
}

// gfx950's workgroup regrouping: searched only where asked for (the model
// cannot rank it), named _xcd{n} and read back; sm_90a refuses it.
TEST(TuneSpace, XcdSwizzleAxis) {
  EXPECT_EQ(tune::SearchSpace::defaultsFor(TargetInfo::defaultTarget()).xcdSwizzle1,
            (std::vector<int64_t>{1}));
  MoeSpec spec = example("kimi_k3_tp8_a4w4.moe");
  tune::SearchSpace space = singleValued(32, 128);
  space.blockM = {32};
  ASSERT_FALSE(!!space.setAxis("stage2.xcd_swizzle=1,8"));
  EXPECT_EQ(space.xcdSwizzle2, (std::vector<int64_t>{1, 8}));
  tune::SpaceReport report;
  std::vector<tune::Candidate> candidates =
      tune::enumerateCandidates(spec, space, TargetInfo::defaultTarget(), report);
  int swizzled = 0;
  for (const tune::Candidate &c : candidates) {
    const StageSchedule &s = c.layer.stage(c.stage);
    bool xcd = s.xcdSwizzle == 8;
    swizzled += xcd;
    EXPECT_EQ(llvm::StringRef(c.kernelName).contains("_xcd8_"), xcd) << c.kernelName;
    EXPECT_EQ(llvm::StringRef(c.id).ends_with(" xcd8"), xcd) << c.id;
    if (c.stage == StageId::Stage1)
      EXPECT_EQ(s.xcdSwizzle, 1) << c.id;
  }
  EXPECT_EQ(swizzled, 1) << report.summary();
  tune::SpaceReport nv;
  tune::enumerateCandidates(spec, space, *TargetInfo::forChip("sm_90a"), nv);
  EXPECT_GE(nv.rejected["stage2 xcd_swizzle"], 1) << nv.summary();
  llvm::Error zero = space.setAxis("stage1.xcd_swizzle=0");
  ASSERT_TRUE(!!zero);
  llvm::consumeError(std::move(zero));
}

// Stage 2 after stage 1's grid instead of beside its last round: searched
// only where asked for, named _gridwait and read back.
TEST(TuneSpace, Stage2WaitAxis) {
  const TargetInfo sm90a = *TargetInfo::forChip("sm_90a");
  EXPECT_EQ(tune::SearchSpace::defaultsFor(sm90a).wait2,
            (std::vector<Stage2Wait>{Stage2Wait::Rows}));
  MoeSpec spec = example("kimi_k3_tp8_a4w4.moe");
  tune::SearchSpace space = singleValued(32, 128);
  space.blockM = {32};
  ASSERT_FALSE(!!space.setAxis("stage2.wait=rows,grid"));
  EXPECT_EQ(space.wait2, (std::vector<Stage2Wait>{Stage2Wait::Rows, Stage2Wait::Grid}));
  tune::SpaceReport report;
  std::vector<tune::Candidate> candidates = tune::enumerateCandidates(spec, space, sm90a, report);
  int grid = 0, stage2 = 0;
  for (const tune::Candidate &c : candidates) {
    if (c.stage != StageId::Stage2) {
      EXPECT_EQ(c.layer.stage2.wait, spec.stage2.wait) << c.id;
      continue;
    }
    ++stage2;
    bool g = c.layer.stage2.wait == Stage2Wait::Grid;
    grid += g;
    EXPECT_EQ(llvm::StringRef(c.kernelName).ends_with("_gridwait"), g) << c.kernelName;
    EXPECT_EQ(llvm::StringRef(c.id).ends_with(" gridwait"), g) << c.id;
  }
  EXPECT_EQ(2 * grid, stage2) << report.summary();
  llvm::Error bad = space.setAxis("stage2.wait=tile");
  ASSERT_TRUE(!!bad);
  llvm::consumeError(std::move(bad));
}

// A spec whose stage 1 breaks a rule on another block size (k_wave 4 at
// block_m 64 on sm_90a: its K-group reduction exceeds the static shared
// memory) does not cost the search that block: the first stage-1 schedule of
// the axis values that keeps the rules is the stage-2 candidates' partner
// there, and the report says so; the spec's own stays the partner where it
// keeps them.
TEST(TuneSpace, PartnerFromTheAxesWhereTheSpecsBreaksARule) {
  MoeSpec spec = example("kimi_k3_tp8_a4w4.moe");
  spec.stage1.kWave = 4;
  spec.stage1.tileK = 128;
  tune::SearchSpace space = singleValued(32, 128);
  space.blockM = {32, 64};
  space.kWave1 = {4, 1};
  const TargetInfo sm90 = *TargetInfo::forChip("sm_90a");
  tune::SpaceReport report;
  auto candidates = tune::enumerateCandidates(spec, space, sm90, report);
  EXPECT_TRUE(report.skipped.empty());
  ASSERT_EQ(report.partners.size(), 1u);
  EXPECT_NE(report.partners[0].find("block_m=64: stage2 with the partner s1 bm64 t64x32x256 kb1 "
                                    "kw1 w4 fp4 (the spec's stage1: needs"),
            std::string::npos)
      << report.partners[0];
  int64_t stage2At64 = 0, stage2At32 = 0;
  for (const tune::Candidate &c : candidates) {
    if (c.stage != StageId::Stage2)
      continue;
    if (c.blockM == 64) {
      ++stage2At64;
      EXPECT_EQ(c.layer.stage1.kWave, 1) << c.id;
    } else {
      ++stage2At32;
      EXPECT_EQ(c.layer.stage1.kWave, 4) << c.id; // the spec's own
    }
  }
  EXPECT_EQ(stage2At64, 1);
  EXPECT_EQ(stage2At32, 1);
  // With no axis value that keeps the rules either, the block is skipped.
  space.kWave1 = {4};
  tune::SpaceReport none;
  tune::enumerateCandidates(spec, space, sm90, none);
  ASSERT_EQ(none.skipped.size(), 1u);
  EXPECT_NE(none.skipped[0].find("block_m=64: the partner stage1: needs"), std::string::npos)
      << none.skipped[0];
  EXPECT_TRUE(none.partners.empty());
}

// stage2.tile_m: stage 2 on M tiles smaller than the sorting block, named
// with the block (sbm) so that the row reads back; a tile that does not
// divide block_m is rejected by the rules.
TEST(TuneSpace, Stage2TilesUnderALargerSortingBlock) {
  MoeSpec spec = example("kimi_k3_tp8_a16w4.moe");
  tune::SearchSpace space = singleValued(128, 256);
  ASSERT_FALSE(!!space.setAxis("stage2.tile_m=64,128,48"));
  space.blockM = {128};
  const TargetInfo sm90 = *TargetInfo::forChip("sm_90a");
  tune::SpaceReport report;
  auto candidates = tune::enumerateCandidates(spec, space, sm90, report);
  std::set<int64_t> stage2Tiles;
  for (const tune::Candidate &c : candidates) {
    EXPECT_EQ(c.layer.stage1.tileM, 128) << c.id;
    if (c.stage != StageId::Stage2)
      continue;
    stage2Tiles.insert(c.layer.stage2.tileM);
    EXPECT_NE(c.kernelName.find("_sbm128"), std::string::npos) << c.kernelName;
    auto back = dispatch::kernelNameToSchedule(c.kernelName);
    ASSERT_TRUE(!!back) << llvm::toString(back.takeError());
    EXPECT_EQ(back->schedule.tileM, c.layer.stage2.tileM) << c.kernelName;
  }
  EXPECT_EQ(stage2Tiles, (std::set<int64_t>{64, 128}));
  EXPECT_EQ(report.rejected["stage2 tile_m"], 1);
}

// A split that does not divide K is rejected by the rules, never kept (so
// never compiled); the report counts it under its rule.
TEST(TuneSpace, NonDividingSplitNeverKept) {
  MoeSpec spec = example("kimi_k3_tp8_a4w4.moe"); // K = 3584 = 2^9 * 7
  tune::SearchSpace space;
  space.blockM = {32};
  space.kBatch1 = {1, 3, 5, 7};
  space.tileK1 = {256};
  tune::SpaceReport report;
  auto candidates = tune::enumerateCandidates(spec, space, TargetInfo::defaultTarget(), report);
  int64_t stage1 = 0;
  for (const tune::Candidate &c : candidates) {
    if (c.stage != StageId::Stage1)
      continue;
    ++stage1;
    EXPECT_EQ(spec.problem.modelDim % c.layer.stage1.kBatch, 0) << c.id;
    EXPECT_NE(c.layer.stage1.kBatch, 3);
    EXPECT_NE(c.layer.stage1.kBatch, 5);
  }
  EXPECT_GT(stage1, 0);
  // 3 and 5 of the 4 k_batch values fail for every other combination (some
  // first for another rule: a candidate counts under its first).
  int64_t perKBatch = int64_t(space.tileN1.size() * space.kWave1.size() *
                              space.wavesPerEU1.size() * 2 /* fused: none, fp4 */);
  EXPECT_GE(report.rejectedTotal(), 2 * perKBatch);
  EXPECT_GT(report.rejected["stage1 k_batch"], 0);
  EXPECT_NE(report.summary().find("stage1 k_batch"), std::string::npos);
}

TEST(TuneSpace, AxisErrors) {
  tune::SearchSpace space;
  EXPECT_FALSE(!!space.setAxis("stage1.k_batch=1,2"));
  EXPECT_EQ(space.kBatch1, (std::vector<int64_t>{1, 2}));
  llvm::Error e = space.setAxis("stage1.k_batch=0");
  ASSERT_TRUE(!!e);
  EXPECT_NE(llvm::toString(std::move(e)).find("'0' is not a value"), std::string::npos);
  llvm::Error u = space.setAxis("stage3.tile_n=64");
  ASSERT_TRUE(!!u);
  EXPECT_NE(llvm::toString(std::move(u)).find("unknown axis 'stage3.tile_n'"), std::string::npos);
  EXPECT_FALSE(!!space.setAxis("stage2.reduce=reduce"));
  EXPECT_EQ(space.reduce2, (std::vector<ReduceMode>{ReduceMode::Reduce}));
}

TEST(TuneJournal, RecordsSurviveAReopenAndATornLine) {
  std::string path = tempPath("journal");
  {
    auto j = tune::Journal::open(path, "run-a");
    ASSERT_TRUE(!!j) << llvm::toString(j.takeError());
    tune::CompileRecord ok;
    ok.ok = true;
    ok.times[4].charge(KernelFamily::Stage1, 2.5);
    ok.times[4].charge(KernelFamily::QuantInter, 0.5);
    ok.times[4].charge(KernelFamily::Stage2, 1.25);
    ok.times[4].charge(KernelFamily::Sort, 7);
    ASSERT_FALSE(!!(*j)->recordCompile("s1 a", ok));
    tune::CompileRecord bad;
    bad.reason = "exit status 1: error:\tx";
    ASSERT_FALSE(!!(*j)->recordCompile("s1 b", bad));
    tune::CheckRecord c;
    c.err1 = 0.25;
    c.detail = "stage1 (3 of 12 out of tolerance)";
    ASSERT_FALSE(!!(*j)->recordCheck(4, "s1 a", c));
  }
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Append);
    os << "check\t4\ts1"; // killed while writing
  }
  auto j = tune::Journal::open(path, "run-a");
  ASSERT_TRUE(!!j) << llvm::toString(j.takeError());
  EXPECT_EQ((*j)->resumedRecords(), 3u);
  const tune::CompileRecord *a = (*j)->compiled("s1 a");
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(a->ok);
  EXPECT_DOUBLE_EQ(a->times.at(4).us1, 3.0); // stage 1 and the inter-stage quantization
  EXPECT_DOUBLE_EQ(a->times.at(4).us2, 1.25);
  EXPECT_DOUBLE_EQ(a->times.at(4).common, 7);
  const tune::CompileRecord *b = (*j)->compiled("s1 b");
  ASSERT_NE(b, nullptr);
  EXPECT_FALSE(b->ok);
  EXPECT_EQ(b->reason, "exit status 1: error: x");
  const tune::CheckRecord *c = (*j)->checked(4, "s1 a");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->passed);
  EXPECT_DOUBLE_EQ(c->err1, 0.25);
  EXPECT_EQ((*j)->checked(1, "s1 a"), nullptr);
  // Appending after the torn record starts a new line.
  tune::CheckRecord pass;
  pass.passed = true;
  ASSERT_FALSE(!!(*j)->recordCheck(1, "s1 a", pass));
  // Step times and graph times, read back by token count and id.
  tune::StageTimes steps;
  steps.us1 = 30.5;
  steps.us2 = 9;
  ASSERT_FALSE(!!(*j)->recordTiming(1, "s1 a", steps));
  ASSERT_FALSE(!!(*j)->recordGraph(1, "s1 a", 25.25));
  auto again = tune::Journal::open(path, "run-a");
  ASSERT_TRUE(!!again) << llvm::toString(again.takeError());
  EXPECT_EQ((*again)->resumedRecords(), 6u);
  const tune::StageTimes *t = (*again)->timed(1, "s1 a");
  ASSERT_NE(t, nullptr);
  EXPECT_DOUBLE_EQ(t->us1, 30.5);
  EXPECT_DOUBLE_EQ(t->us2, 9);
  const double *g = (*again)->graphed(1, "s1 a");
  ASSERT_NE(g, nullptr);
  EXPECT_DOUBLE_EQ(*g, 25.25);
  EXPECT_EQ((*again)->graphed(4, "s1 a"), nullptr);
  // Another run's journal is refused.
  auto other = tune::Journal::open(path, "run-b");
  ASSERT_FALSE(!!other);
  EXPECT_NE(llvm::toString(other.takeError()).find("belongs to another run"), std::string::npos);
  llvm::sys::fs::remove(path);
}

// Records are read back only with the values the tuner can have written: a
// NaN or negative time (which would break the ranking), an error fraction
// outside [0, 1] or a token count of 0 is a malformed record at its line.
TEST(TuneJournal, OutOfRangeValuesAreMalformed) {
  std::string path = tempPath("journal-range");
  {
    auto j = tune::Journal::open(path, "run-a");
    ASSERT_TRUE(!!j) << llvm::toString(j.takeError());
  }
  std::string header;
  {
    auto buf = llvm::MemoryBuffer::getFile(path);
    ASSERT_TRUE(bool(buf));
    header = (*buf)->getBuffer().str();
  }
  for (const char *record :
       {"compile\tx\tok\t4,nan,1,1\n", "compile\tx\tok\t4,1,-2,1\n", "compile\tx\tok\t4,1,1,inf\n",
        "compile\tx\tok\t0,1,1,1\n", "check\t4\tx\tpass\t1.5\t0\t-\n",
        "check\t-3\tx\tpass\t0\t0\t-\n", "check\t4\tx\tpass\t0\tnan\t-\n", "graphed\t4\tx\t-1\n",
        "graphed\t4\tx\tnan\n", "graphed\t0\tx\t1\n", "graphed\t4\tx\n"}) {
    {
      std::error_code ec;
      llvm::raw_fd_ostream os(path, ec);
      os << header << record;
    }
    auto j = tune::Journal::open(path, "run-a");
    ASSERT_FALSE(!!j) << record;
    EXPECT_NE(llvm::toString(j.takeError()).find(":2: malformed journal record"),
              std::string::npos)
        << record;
  }
  llvm::sys::fs::remove(path);
}

TEST(TuneRows, MergedOnlyWhenFaster) {
  auto table = dispatch::TunedTable::parse(
      "gfx,cu_num,token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,"
      "q_type,use_g1u1,doweight_stage1,block_m,ksplit,us1,kernelName1,err1,us2,kernelName2,err2,"
      "us,run_1stage,xbf16,flat,tflops,bw,_tag\n"
      "gfx950,256,1,256,128,8,2,ActivationType.Situv2,torch.bfloat16,torch.float4_e2m1fn_x2,"
      "torch.float4_e2m1fn_x2,QuantType.per_1x32,1,0,32,0,1,old1,0.0%,1,old2,0.0%,2,0,0,0,1,1,\n"
      "gfx950,256,2,256,128,8,2,ActivationType.Situv2,torch.bfloat16,torch.float4_e2m1fn_x2,"
      "torch.float4_e2m1fn_x2,QuantType.per_1x32,1,0,32,0,9,old1,0.0%,9,old2,0.0%,18,0,0,0,1,1,\n",
      "t.csv");
  ASSERT_TRUE(!!table) << llvm::toString(table.takeError());
  std::vector<tune::TunedResult> results(3);
  for (size_t i = 0; i < 3; ++i) {
    dispatch::TunedKey &k = results[i].key;
    k = table->rows()[0]->key;
    k.token = int64_t(i) + 1;
    results[i].us1 = results[i].us2 = 2.5; // us 5: slower than token 1, faster than 2
    results[i].kernelName1 = "new1";
    results[i].kernelName2 = "new2";
    results[i].blockM = 64;
    results[i].err1 = 0.001;
  }
  tune::MergeReport report;
  std::string csv = tune::mergeTunedRows(&*table, results, report);
  EXPECT_EQ(report.added, 1);
  EXPECT_EQ(report.replaced, 1);
  EXPECT_EQ(report.keptFaster, 1);
  auto merged = dispatch::TunedTable::parse(csv, "merged.csv");
  ASSERT_TRUE(!!merged) << llvm::toString(merged.takeError());
  ASSERT_EQ(merged->rows().size(), 3u);
  EXPECT_EQ(merged->rows()[0]->get("kernelName1"), "old1");
  EXPECT_EQ(merged->rows()[1]->get("kernelName1"), "new1");
  EXPECT_EQ(merged->rows()[1]->get("us"), "5.0000");
  EXPECT_EQ(merged->rows()[1]->get("err1"), "0.1%");
  EXPECT_EQ(merged->rows()[2]->get("token"), "3");
  EXPECT_EQ(merged->rows()[2]->get("block_m"), "64");

  // Ranked by graph replays, a result replaces the row of its key even where
  // that row's step times are lower.
  for (tune::TunedResult &r : results)
    r.replacesRow = true;
  tune::MergeReport graphed;
  auto regraphed =
      dispatch::TunedTable::parse(tune::mergeTunedRows(&*table, results, graphed), "graphed.csv");
  ASSERT_TRUE(!!regraphed) << llvm::toString(regraphed.takeError());
  EXPECT_EQ(graphed.added, 1);
  EXPECT_EQ(graphed.replaced, 2);
  EXPECT_EQ(graphed.keptFaster, 0);
  EXPECT_EQ(regraphed->rows()[0]->get("kernelName1"), "new1");
  EXPECT_EQ(regraphed->rows()[0]->get("us"), "5.0000");
}

// The checks compare fp4 outputs by decoded value (aiter compared the
// packed bytes, where one code in the high nibble moves a byte by 16).
TEST(TuneCheck, Fp4ComparedByValue) {
  std::vector<float> v(64);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = std::sin(0.7f * float(i) + 0.3f);
  auto ref = num::quantizeMx(v, {2, 32}, num::ElemFormat::MXFP4, num::ScaleRounding::RoundUp);
  ASSERT_TRUE(!!ref);
  num::CompareOptions exact;
  exact.rtol = exact.atol = exact.maxMismatch = 0;
  exact.maxCosineDiff = 1;
  // -0 and +0 differ in their bits, not in value: no mismatch.
  num::HostTensor zeros = *ref;
  for (uint8_t &b : zeros.data)
    b = 0x00;
  num::HostTensor negZeros = zeros;
  for (uint8_t &b : negZeros.data)
    b = 0x88;
  auto same = num::compareTensors(zeros, negZeros, {}, exact);
  ASSERT_TRUE(!!same);
  EXPECT_EQ(same->mismatches, 0);
  EXPECT_TRUE(same->passed);
  // One code off in a low nibble and one in a high nibble: one element
  // each, whatever the byte moved by.
  num::HostTensor low = *ref, high = *ref;
  low.data[3] ^= 0x01;
  high.data[3] ^= 0x10;
  auto l = num::compareTensors(*ref, low, {}, exact);
  auto h = num::compareTensors(*ref, high, {}, exact);
  ASSERT_TRUE(!!l);
  ASSERT_TRUE(!!h);
  EXPECT_EQ(l->mismatches, 1);
  EXPECT_EQ(h->mismatches, 1);
  // A NaN scale (0xff, what the checks poison unwritten scales with) fails.
  num::HostTensor poisoned = *ref;
  poisoned.scales[1] = 0xff;
  auto p = num::compareTensors(*ref, poisoned, {}, exact);
  ASSERT_TRUE(!!p);
  EXPECT_GT(p->nonFinite, 0);
  EXPECT_FALSE(p->passed);
}

// Children that fail, crash or hang are each their own job's failure.
TEST(TunePool, CrashAndTimeoutIsolation) {
  std::string out = tempPath("out"), err = tempPath("err");
  std::vector<tune::ChildJob> jobs = {
      {{"sh", "-c", "echo fine"}, out, err},
      {{"sh", "-c", "exit 3"}, out + "1", err},
      {{"sh", "-c", "kill -SEGV $$"}, out + "2", err},
      {{"sh", "-c", "sleep 30"}, out + "3", err},
  };
  std::vector<tune::ChildResult> results(jobs.size());
  std::vector<int> calls(jobs.size(), 0);
  auto start = std::chrono::steady_clock::now();
  tune::runChildren("/bin/sh", jobs, 4, /*timeoutSeconds=*/1,
                    [&](size_t i, const tune::ChildResult &r) {
                      results[i] = r;
                      ++calls[i];
                    });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_EQ(calls, (std::vector<int>{1, 1, 1, 1}));
  EXPECT_TRUE(results[0].exited);
  EXPECT_EQ(results[0].exitCode, 0);
  auto text = llvm::MemoryBuffer::getFile(out);
  ASSERT_TRUE(!!text);
  EXPECT_EQ((*text)->getBuffer(), "fine\n");
  EXPECT_TRUE(results[1].exited);
  EXPECT_EQ(results[1].exitCode, 3);
  EXPECT_FALSE(results[2].exited);
  EXPECT_FALSE(results[2].timedOut);
  EXPECT_FALSE(results[2].error.empty());
  EXPECT_FALSE(results[3].exited);
  EXPECT_TRUE(results[3].timedOut);
  for (const std::string &p : {out, out + "1", out + "2", out + "3", err})
    llvm::sys::fs::remove(p);
}

} // namespace
