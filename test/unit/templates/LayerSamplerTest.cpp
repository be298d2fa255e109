//===- LayerSamplerTest.cpp - Random layers reach every GEMM layout -------===//
//
// The schedule property is only as strong as the layers drawn for it: on
// sm_90a, where `moegen draw` writes them for a GPU, the accepted draws must
// reach every layout the GEMM plan has (warpgroup MMAs, swapped operands,
// stage 2's N loop, the arithmetic weight decoding, quantizing warp pairs,
// staged weights of other formats, split K, the reduce kernel).
//
//===----------------------------------------------------------------------===//

#include "runtime/check/LayerSampler.h"
#include "compiler/spec/DslParser.h"
#include "templates/LayerRules.h"
#include "templates/TargetSupport.h"
#include "templates/gemm/GemmPlan.h"

#include <gtest/gtest.h>

#include <map>

using namespace moegen;

namespace {

TEST(LayerSampler, ASeedGivesTheSameDraws) {
  LayerSampler a(7, true), b(7, true), c(8, true);
  bool differs = false;
  for (int i = 0; i < 20; ++i) {
    SampledLayer x = a.next(), y = b.next(), z = c.next();
    EXPECT_EQ(x.text, y.text);
    EXPECT_EQ(x.tokens, y.tokens);
    EXPECT_EQ(x.cuNum, y.cuNum);
    differs |= x.text != z.text;
  }
  EXPECT_TRUE(differs);
}

TEST(LayerSampler, OnlySm90aDrawsNameItsParameters) {
  LayerSampler gfx(3, false), sm90(3, true);
  int arithmetic = 0;
  for (int i = 0; i < 200; ++i) {
    SampledLayer g = gfx.next(), s = sm90.next();
    EXPECT_EQ(g.text.find("weight_decode"), std::string::npos) << g.text;
    EXPECT_EQ(g.text.find("prefetch"), std::string::npos) << g.text;
    EXPECT_EQ(g.text.find("wait"), std::string::npos) << g.text;
    EXPECT_NE(g.cuNum, 132);
    EXPECT_NE(s.cuNum, 256);
    arithmetic += s.text.find("weight_decode = arithmetic") != std::string::npos;
    ASSERT_TRUE(static_cast<bool>(parseMoeSpec(s.text, "draw.moe"))) << s.text;
  }
  EXPECT_GT(arithmetic, 0);
}

TEST(LayerSampler, AcceptedSm90aDrawsReachEveryGemmLayout) {
  const TargetInfo target = *TargetInfo::get("sm_90a");
  LayerSampler sampler(1, true);
  std::map<std::string, int> seen;
  int accepted = 0;
  for (int i = 0; i < 6000 && accepted < 400; ++i) {
    SampledLayer d = sampler.next();
    auto spec = parseMoeSpec(d.text, "draw.moe");
    ASSERT_TRUE(static_cast<bool>(spec)) << llvm::toString(spec.takeError());
    if (!checkLayer(*spec, target).empty())
      continue;
    ++accepted;
    for (StageId stage : {StageId::Stage1, StageId::Stage2}) {
      ScheduleIssues issues;
      GemmPlan p = planGemm(*spec, stage, target, issues);
      ASSERT_TRUE(issues.empty());
      const Sm90GemmLayout &l = p.sm90;
      seen["wgmma"] += l.wgmma;
      seen["wgmma in dynamic shared memory"] += l.wgmma && l.dynamicShared;
      seen["mma.sync, register weights"] += l.registerWeights && !l.wgmma;
      seen["staged weights (bf16, mxfp8)"] += !l.registerWeights;
      seen["swapped operands"] += l.swapAB && !l.wgmma;
      seen["weight_decode=arithmetic"] += l.allRowsArithmetic;
      seen["prefetch chosen"] +=
          (stage == StageId::Stage1 ? spec->stage1 : spec->stage2).prefetch > 0;
      seen["quantizing warp pairs"] += l.quantPairs;
      seen["stage 2 N loop"] += l.loopN;
      seen["carried weights"] += l.carryWeights;
      seen["k_wave reduction"] += l.reductionBytes > 0;
      seen["split K"] += (stage == StageId::Stage1 ? spec->stage1 : spec->stage2).kBatch > 1;
    }
    seen["reduce kernel"] += spec->stage2.reduce == ReduceMode::Reduce;
    // Stage 2 beside stage 1, a kernel between them or not, and after it.
    seen["stage 2 beside stage 1"] += stagesOverlap(*spec, target);
    seen["quant_inter counting down"] += interQuantCountsDown(*spec, target);
    seen["stage 2 waiting for the grid"] += spec->stage2.wait == Stage2Wait::Grid;
  }
  EXPECT_GE(accepted, 100);
  for (const char *layout :
       {"wgmma", "wgmma in dynamic shared memory", "mma.sync, register weights",
        "staged weights (bf16, mxfp8)", "swapped operands", "weight_decode=arithmetic",
        "prefetch chosen", "quantizing warp pairs", "stage 2 N loop", "carried weights",
        "k_wave reduction", "split K", "reduce kernel", "stage 2 beside stage 1",
        "quant_inter counting down", "stage 2 waiting for the grid"})
    EXPECT_GT(seen[layout], 0) << layout << " is never drawn";
}

} // namespace
