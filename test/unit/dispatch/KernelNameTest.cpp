//===- KernelNameTest.cpp - FlyDSL kernel names to schedules --------------===//

#include "runtime/dispatch/KernelName.h"
#include "runtime/dispatch/TunedTable.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace moegen;
using namespace moegen::dispatch;

namespace {

MappedSchedule mapOk(llvm::StringRef name) {
  auto m = kernelNameToSchedule(name);
  if (!m) {
    ADD_FAILURE() << llvm::toString(m.takeError());
    return {};
  }
  return *m;
}

TEST(KernelName, Stage1Fused) {
  MappedSchedule m = mapOk("flydsl_moe1_afp4_wfp4_bf16_t32x32x256_w4_kw2_fp4");
  EXPECT_EQ(m.stage, StageId::Stage1);
  EXPECT_EQ(m.schedule.tileM, 32);
  EXPECT_EQ(m.schedule.tileN, 32);
  EXPECT_EQ(m.schedule.tileK, 256);
  EXPECT_EQ(m.schedule.wavesPerEU, 4);
  EXPECT_EQ(m.schedule.kWave, 2);
  EXPECT_EQ(m.schedule.kBatch, 1);
  EXPECT_EQ(m.schedule.fusedQuant, FusedQuant::FP4);
  EXPECT_EQ(m.activation, DType::MXFP4);
  EXPECT_EQ(m.gateUp, GateUpLayout::Separated);
  EXPECT_TRUE(m.droppedHints.empty());
}

TEST(KernelName, Stage1Defaults) {
  // No _w: aiter's default waves_per_eu is 1; k_batch and k_wave 1.
  MappedSchedule m = mapOk("flydsl_moe1_abf16_wfp4_bf16_t32x128x256");
  EXPECT_EQ(m.schedule.wavesPerEU, 1);
  EXPECT_EQ(m.schedule.kWave, 1);
  EXPECT_EQ(m.schedule.fusedQuant, FusedQuant::None);
  EXPECT_EQ(m.activation, DType::BF16);
  MappedSchedule g = mapOk("flydsl_moe1_afp8_wfp4_bf16_t32x64x256_w3_kb2_bnt0_gui_xcd4_kw2_fp8");
  EXPECT_EQ(g.gateUp, GateUpLayout::Interleaved);
  EXPECT_EQ(g.schedule.kBatch, 2);
  EXPECT_EQ(g.schedule.kBatchMode, KBatchMode::Atomic);
  EXPECT_EQ(g.schedule.fusedQuant, FusedQuant::FP8);
  EXPECT_EQ(g.schedule.xcdSwizzle, 4);
  EXPECT_EQ(g.droppedHints.size(), 1u); // bnt0
}

TEST(KernelName, Stage2) {
  MappedSchedule a = mapOk("flydsl_moe2_afp4_wfp4_bf16_t32x128x128_reduce");
  EXPECT_EQ(a.stage, StageId::Stage2);
  EXPECT_EQ(a.schedule.reduce, ReduceMode::Reduce);
  EXPECT_EQ(a.schedule.tileN, 128);
  MappedSchedule b = mapOk("flydsl_moe2_layout_afp4_wfp4_bf16_t64x256x128_reduce_sbm64_sp1601");
  EXPECT_EQ(b.schedule.tileM, 64);
  EXPECT_EQ(b.schedule.reduce, ReduceMode::Reduce);
  EXPECT_EQ(b.droppedHints.size(), 2u); // layout, sp1601
  EXPECT_EQ(b.sortBlockM, 64);
  MappedSchedule c = mapOk("flydsl_moe2_afp4_wfp4_bf16_t64x128x256_atomic_persist_async_w4_cumul3");
  EXPECT_EQ(c.schedule.reduce, ReduceMode::Atomic);
  EXPECT_EQ(c.schedule.wavesPerEU, 4);
  MappedSchedule d = mapOk("flydsl_mxmoe_g1_a4w4_16x256x256_nt");
  EXPECT_EQ(d.schedule.fusedQuant, FusedQuant::FP4);
  EXPECT_EQ(d.schedule.tileM, 16);
  MappedSchedule e = mapOk("flydsl_mxmoe_g2_a4w4_16x256x256_atomic_nt");
  EXPECT_EQ(e.schedule.reduce, ReduceMode::Atomic);
}

// `_dqa` (moegen's sm_90a tables): weight_decode = arithmetic, on either
// stage, in any position; not on the mxmoe kernels, and not twice.
TEST(KernelName, ArithmeticWeightDecode) {
  MappedSchedule a = mapOk("flydsl_moe1_abf16_wfp4_bf16_t32x64x256_w3_kw2_dqa");
  EXPECT_EQ(a.schedule.weightDecode, WeightDecode::Arithmetic);
  EXPECT_EQ(a.schedule.kWave, 2);
  MappedSchedule b = mapOk("flydsl_moe2_abf16_wfp4_bf16_t32x256x128_atomic_dqa_sbm32");
  EXPECT_EQ(b.schedule.weightDecode, WeightDecode::Arithmetic);
  EXPECT_EQ(b.sortBlockM, 32);
  EXPECT_EQ(mapOk("flydsl_moe1_abf16_wfp4_bf16_t32x64x256_w3").schedule.weightDecode,
            WeightDecode::Mixed);
  EXPECT_NE(describe(a).find(" weight_decode=arithmetic"), std::string::npos) << describe(a);
  EXPECT_EQ(describe(mapOk("flydsl_moe1_abf16_wfp4_bf16_t32x64x256_w3")).find("weight_decode"),
            std::string::npos);
  for (llvm::StringRef bad :
       {"flydsl_mxmoe_g1_a4w4_16x256x256_dqa", "flydsl_moe1_abf16_wfp4_bf16_t32x64x256_dqa_dqa"}) {
    auto m = kernelNameToSchedule(bad);
    ASSERT_FALSE(!!m) << bad.str();
    std::string msg = llvm::toString(m.takeError());
    EXPECT_NE(msg.find("dqa"), std::string::npos) << msg;
  }
}

// `_pf{p}` (moegen's sm_90a tables): prefetch = p on either stage, printed
// back last; out of range or on the mxmoe kernels it is refused.
TEST(KernelName, Prefetch) {
  MappedSchedule a = mapOk("flydsl_moe1_abf16_wfp4_bf16_t80x128x256_w3_pf2");
  EXPECT_EQ(a.schedule.prefetch, 2);
  EXPECT_NE(describe(a).find(" prefetch=2"), std::string::npos) << describe(a);
  MappedSchedule b = mapOk("flydsl_moe2_abf16_wfp4_bf16_t32x256x128_atomic_pf3_sbm32_dqa");
  EXPECT_EQ(b.schedule.prefetch, 3);
  EXPECT_EQ(b.schedule.weightDecode, WeightDecode::Arithmetic);
  EXPECT_EQ(mapOk("flydsl_moe1_abf16_wfp4_bf16_t32x64x256_w3").schedule.prefetch, 0);
  MoeSpec spec;
  spec.formats.activation = DType::BF16;
  spec.stage1 = a.schedule;
  spec.stage2 = b.schedule;
  auto n1 = kernelNameFor(spec, StageId::Stage1);
  auto n2 = kernelNameFor(spec, StageId::Stage2);
  ASSERT_TRUE(!!n1 && !!n2);
  EXPECT_EQ(*n1, "flydsl_moe1_abf16_wfp4_bf16_t80x128x256_w3_pf2");
  EXPECT_TRUE(llvm::StringRef(*n2).ends_with("_dqa_pf3")) << *n2;
  for (llvm::StringRef bad :
       {"flydsl_moe1_abf16_wfp4_bf16_t32x64x256_pf0", "flydsl_moe1_abf16_wfp4_bf16_t32x64x256_pf17",
        "flydsl_moe1_abf16_wfp4_bf16_t32x64x256_pf1_pf2", "flydsl_mxmoe_g1_a4w4_16x256x256_pf2"}) {
    auto m = kernelNameToSchedule(bad);
    ASSERT_FALSE(!!m) << bad.str();
    std::string msg = llvm::toString(m.takeError());
    EXPECT_NE(msg.find("pf"), std::string::npos) << msg;
  }
}

// `_gridwait` (moegen's sm_90a tables): stage 2's wait = grid, printed back
// last; not a stage-1 token.
TEST(KernelName, GridWait) {
  MappedSchedule b = mapOk("flydsl_moe2_afp8_wfp4_bf16_t32x128x128_atomic_sbm32_dqa_gridwait");
  EXPECT_EQ(b.schedule.wait, Stage2Wait::Grid);
  EXPECT_NE(describe(b).find(" wait=grid"), std::string::npos) << describe(b);
  EXPECT_EQ(mapOk("flydsl_moe2_afp8_wfp4_bf16_t32x128x128_atomic_sbm32").schedule.wait,
            Stage2Wait::Rows);
  MoeSpec spec;
  spec.formats.activation = DType::MXFP8;
  spec.stage2 = b.schedule;
  auto n2 = kernelNameFor(spec, StageId::Stage2);
  ASSERT_TRUE(!!n2);
  EXPECT_TRUE(llvm::StringRef(*n2).ends_with("_dqa_gridwait")) << *n2;
  auto m = kernelNameToSchedule("flydsl_moe1_afp8_wfp4_bf16_t32x64x256_gridwait");
  ASSERT_FALSE(!!m);
  std::string msg = llvm::toString(m.takeError());
  EXPECT_NE(msg.find("gridwait"), std::string::npos) << msg;
}

TEST(KernelName, XcdSwizzle) {
  EXPECT_EQ(mapOk("flydsl_moe2_afp4_wfp4_bf16_t64x256x256_reduce_xcd4_sbm128").schedule.xcdSwizzle,
            4);
  EXPECT_EQ(mapOk("flydsl_mxmoe_g1_a4w4_16x256x256_nt_xcd8").schedule.xcdSwizzle, 8);
  // xcd1 (and xcd0) keep the dispatch order, as no token does.
  EXPECT_EQ(mapOk("flydsl_moe1_afp4_wfp4_bf16_t32x32x256_w3_xcd1_kw2_fp4").schedule.xcdSwizzle, 1);
  EXPECT_EQ(mapOk("flydsl_moe1_afp4_wfp4_bf16_t32x32x256_w3_xcd0").schedule.xcdSwizzle, 1);
  EXPECT_EQ(mapOk("flydsl_moe1_afp4_wfp4_bf16_t32x32x256_w3").schedule.xcdSwizzle, 1);
  MappedSchedule m = mapOk("flydsl_moe1_afp4_wfp4_bf16_t32x32x256_w3_xcd4_kw2_fp4");
  EXPECT_NE(describe(m).find(" xcd_swizzle=4"), std::string::npos) << describe(m);
  EXPECT_EQ(describe(mapOk("flydsl_moe1_afp4_wfp4_bf16_t32x32x256_w3")).find("xcd"),
            std::string::npos);
  auto over = kernelNameToSchedule("flydsl_moe1_afp4_wfp4_bf16_t32x32x256_w3_xcd16");
  ASSERT_FALSE(!!over);
  EXPECT_NE(llvm::toString(over.takeError()).find("xcd16: gfx950 has 8 XCDs"), std::string::npos);
}

TEST(KernelName, UnmappableNamesAreReported) {
  auto expectError = [](llvm::StringRef name, llvm::StringRef fragment) {
    auto m = kernelNameToSchedule(name);
    ASSERT_FALSE(!!m) << name.str();
    std::string msg = llvm::toString(m.takeError());
    EXPECT_NE(msg.find(fragment.str()), std::string::npos) << msg;
  };
  expectError("moe_ck2stages_gemm2_256x32x128x128_1x4_MulABScaleExpertWeightShuffled_v3",
              "CK 2-stage kernel");
  expectError("opus_moe1_afp8_wfp4_bf16_t128x256_gs_qgb2_fp8", "Opus kernel");
  expectError("swiglu_mxfp4_bf16_cktile", "CK-Tile kernel");
  expectError("_ZN5aiter47fmoe_stage1_bf16_pertokenFp8_g1u1_32x64_4tg_pf3E", "asm kernel");
  expectError("flydsl_moe1_afp4_wfp4_bf16_t32x32x256_kb2_go", "mock_gate_only");
  expectError("flydsl_moe1_afp4_wfp4_bf16_t32x32x256_zz3", "character 39: unknown token 'zz3'");
  expectError("flydsl_moe1_afp4_wfp4_bf16_t32x32", "expected a tile");
  expectError("flydsl_moe2_afp4_wfp4_bf16_t32x128x128", "'atomic' or 'reduce'");
  expectError("flydsl_moe1_afp4_wint4_bf16_t32x32x256", "weight dtype 'int4'");
  expectError("flydsl_moe1_afp4_wfp4_bf16_t32x32x256_w3_w4", "appears twice");
  expectError("flydsl_mxmoe_g2_a4w4_16x256x256_f4out", "_f4out");
}

TEST(KernelName, KimiTablesMap) {
  // Every FlyDSL kernel of the Kimi-K3 tables maps to a moegen schedule.
  const char *src = std::getenv("MOEGEN_SOURCE_DIR");
  int mapped = 0;
  for (const char *file :
       {"kimik3_a4w4_tuned_fmoe.csv", "kimik3_fp4_tuned_fmoe.csv", "kimik3_a8w4_tuned_fmoe.csv"}) {
    llvm::SmallString<256> p(src ? src : ".");
    llvm::sys::path::append(p, "data", "aiter-configs", file);
    auto t = TunedTable::load(p);
    ASSERT_TRUE(!!t) << llvm::toString(t.takeError());
    for (const auto &row : t->rows())
      for (const char *col : {"kernelName1", "kernelName2"}) {
        std::string name = row->get(col);
        if (!llvm::StringRef(name).starts_with("flydsl_"))
          continue;
        auto m = kernelNameToSchedule(name);
        EXPECT_TRUE(!!m) << row->location() << ": " << llvm::toString(m.takeError());
        ++mapped;
      }
  }
  EXPECT_GT(mapped, 100);
}

} // namespace
