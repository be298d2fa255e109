//===- H200BenchPartsTest.cpp - moegen-bench-h200's parts without a GPU ---===//
//
// The published peer times, the mxfp4 floor (against the floors the peers'
// document lists), the torch baseline's CSV, the rotated inputs and the
// table.
//
//===----------------------------------------------------------------------===//

#include "bench/h200/Baseline.h"
#include "bench/h200/Floor.h"
#include "bench/h200/LayerBench.h"
#include "bench/h200/Peers.h"
#include "bench/h200/Plan.h"
#include "bench/h200/Report.h"
#include "bench/h200/RotatedInputs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

using namespace moegen;
using namespace moegen::bench;

namespace {

Problem shapeA() {
  Problem p;
  p.modelDim = 3584;
  p.interDim = 384;
  p.experts = 896;
  p.topk = 16;
  return p;
}

Problem shapeB() {
  Problem p;
  p.modelDim = 7168;
  p.interDim = 256;
  p.experts = 256;
  p.topk = 8;
  return p;
}

TEST(H200Peers, ShapesAndTheFastestPeerPerTokenCount) {
  auto a = peerShapeOf(shapeA());
  ASSERT_TRUE(a);
  EXPECT_EQ(a->name, "A");
  auto b = peerShapeOf(shapeB());
  ASSERT_TRUE(b);
  EXPECT_EQ(b->name, "B");
  Problem other = shapeB();
  other.experts = 257; // examples/deepseek_v3_tp8_a4w4.moe: not a measured shape
  EXPECT_FALSE(peerShapeOf(other));

  auto a1 = peerTimesAt(*a, 1);
  ASSERT_TRUE(a1);
  EXPECT_EQ(a1->of(Peer::TkMxfp4), 42.8);
  EXPECT_EQ(a1->best(), Peer::TkMxfp4);
  auto a1024 = peerTimesAt(*a, 1024);
  ASSERT_TRUE(a1024);
  EXPECT_EQ(a1024->best(), Peer::VllmFp8Block); // 1302 us, tk_mxfp4 1369
  auto b1 = peerTimesAt(*b, 1);
  ASSERT_TRUE(b1);
  EXPECT_EQ(b1->best(), Peer::VllmBf16Tuned); // 39.7 us
  EXPECT_EQ(toString(b1->best()), "vllm_bf16_tun");
  EXPECT_FALSE(peerTimesAt(*b, 3));
  for (int64_t t : defaultTokenCounts()) {
    EXPECT_TRUE(peerTimesAt(*a, t)) << t;
    EXPECT_TRUE(peerTimesAt(*b, t)) << t;
  }
}

TEST(H200Floor, MatchesThePeersDocument) {
  // PEERS-H200.md's mxfp4 floors: shape A at M=1 hits 16 experts, 8.2 us
  // (bandwidth); at M=4096 all 896, 681 us (compute: 541.2 GFLOP); shape B
  // at M=1, 8 experts, 5.5 us.
  Floor a1 = mxfp4Floor(shapeA(), 1, 16);
  EXPECT_NEAR(a1.us(), 8.2, 0.05);
  EXPECT_FALSE(a1.computeBound());
  Floor a4096 = mxfp4Floor(shapeA(), 4096, 896);
  EXPECT_NEAR(a4096.flops, 541.2e9, 0.1e9);
  EXPECT_NEAR(a4096.us(), 681, 1);
  EXPECT_TRUE(a4096.computeBound());
  EXPECT_NEAR(mxfp4Floor(shapeB(), 1, 8).us(), 5.5, 0.05);
  EXPECT_NEAR(mxfp4Floor(shapeB(), 64, 224).us(), 154, 1);
}

TEST(H200Baseline, ReadsTheTorchRowsAndNamesTheLineOfAnError) {
  std::string csv = std::string(kBaselineHeader) + "\nA,3584,384,896,16,1,8,98.70,4.6e-03\n"
                                                   "B,7168,256,256,8,1024,2,,\n";
  auto b = Baseline::parse(csv, "t.csv");
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  EXPECT_EQ(b->size(), 2u);
  const BaselineRow *a1 = b->find(shapeA(), 1);
  ASSERT_NE(a1, nullptr);
  EXPECT_EQ(a1->shape, "A");
  EXPECT_EQ(a1->sets, 8);
  EXPECT_EQ(*a1->us, 98.7);
  EXPECT_EQ(*a1->relErr, 4.6e-3);
  const BaselineRow *planned = b->find(shapeB(), 1024);
  ASSERT_NE(planned, nullptr);
  EXPECT_FALSE(planned->us);
  EXPECT_EQ(b->find(shapeB(), 1), nullptr);

  auto error = [](const std::string &text) {
    auto r = Baseline::parse(text, "t.csv");
    return r ? std::string("parsed") : llvm::toString(r.takeError());
  };
  std::string h = std::string(kBaselineHeader) + "\n";
  EXPECT_EQ(error(""),
            "t.csv:1: empty; expected the header '" + std::string(kBaselineHeader) + "'");
  EXPECT_EQ(error("shape,tokens\n"),
            "t.csv:1: expected the header '" + std::string(kBaselineHeader) + "'");
  EXPECT_EQ(error(h + "A,3584,384,896,16,1,8,98.7\n"), "t.csv:2: 8 fields, expected 9");
  EXPECT_EQ(error(h + "A,3584,384,896,16,x,8,98.7,\n"),
            "t.csv:2: tokens 'x' is not a positive integer");
  EXPECT_EQ(error(h + "A,3584,384,896,16,1,8,-3,\n"),
            "t.csv:2: torch_us '-3' is not a non-negative number");
  EXPECT_EQ(error(h + "A,3584,384,896,16,1,8,1,\nA,3584,384,896,16,1,8,2,\n"),
            "t.csv:3: a second row for this shape and token count");
  auto missing = Baseline::read("/nonexistent/torch.csv");
  ASSERT_FALSE(bool(missing));
  EXPECT_NE(llvm::toString(missing.takeError()).find("cannot read the baseline '/nonexistent"),
            std::string::npos);
}

TEST(H200RotatedInputs, RoutingIsTopKOfDistinctExpertsAndSetsDiffer) {
  Problem p = shapeB();
  RotatedInputs s0 = makeRotatedInputs(p, 100, 0), s1 = makeRotatedInputs(p, 100, 1);
  ASSERT_EQ(s0.hidden.size(), size_t(100 * p.modelDim));
  ASSERT_EQ(s0.topkIds.size(), size_t(100 * p.topk));
  for (int64_t t = 0; t < 100; ++t) {
    std::set<int32_t> ids;
    double sum = 0;
    for (int64_t k = 0; k < p.topk; ++k) {
      int32_t id = s0.topkIds[t * p.topk + k];
      EXPECT_TRUE(id >= 0 && id < p.experts) << id;
      ids.insert(id);
      sum += s0.topkWeights[t * p.topk + k];
    }
    EXPECT_EQ(ids.size(), size_t(p.topk)) << "token " << t;
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
  EXPECT_NE(s0.topkIds, s1.topkIds);
  EXPECT_NE(s0.hidden, s1.hidden);
  // 100 tokens x 8 of 256 experts hit most of them, never more.
  EXPECT_GT(s0.expertsHit(), 200);
  EXPECT_LE(s0.expertsHit(), 256);
  // A token's values do not depend on the count (one stream per token).
  RotatedInputs few = makeRotatedInputs(p, 3, 0);
  EXPECT_TRUE(std::equal(few.hidden.begin(), few.hidden.end(), s0.hidden.begin()));
  EXPECT_TRUE(std::equal(few.topkIds.begin(), few.topkIds.end(), s0.topkIds.begin()));
  EXPECT_EQ(makeRotatedInputs(p, 100, 0).hidden, s0.hidden);
  EXPECT_EQ(rotatedSets(64), 8);
  EXPECT_EQ(rotatedSets(65), 2);
}

TEST(H200RotatedInputs, TheCheckedTokensRowsInTheActivationFormat) {
  MoeSpec spec;
  spec.problem = shapeB();
  spec.formats.activation = DType::MXFP4;
  RotatedInputs in = makeRotatedInputs(spec.problem, 10, 0);
  auto a1 = stage1Input(spec, in, {2, 9});
  ASSERT_TRUE(bool(a1)) << llvm::toString(a1.takeError());
  EXPECT_EQ(a1->format, num::ElemFormat::MXFP4);
  EXPECT_EQ(a1->shape, (std::vector<int64_t>{2, spec.problem.modelDim}));
  spec.formats.activation = DType::BF16;
  auto bf16 = stage1Input(spec, in, {9});
  ASSERT_TRUE(bool(bf16));
  ASSERT_EQ(bf16->data.size(), size_t(spec.problem.modelDim * 2));
  EXPECT_EQ(0, std::memcmp(bf16->data.data(), &in.hidden[9 * spec.problem.modelDim],
                           bf16->data.size())); // token 9's bf16 row, as uploaded
  auto outside = stage1Input(spec, in, {10});
  ASSERT_FALSE(bool(outside));
  EXPECT_EQ(llvm::toString(outside.takeError()), "stage1Input: token 10 of 10");
}

// The schedules column names each stage's tile and what is not the default,
// the weight decoding included.
TEST(H200LayerBench, SchedulesNameTheWeightDecoding) {
  MoeSpec spec;
  spec.problem = shapeA();
  spec.stage1 = {32, 64, 256, 1, 2, 3};
  spec.stage2 = {32, 256, 128, 1, 1, 0};
  EXPECT_EQ(describeSchedules(spec), "bm32 t32x64x256 kw2 w3 / t32x256x128");
  spec.stage2.weightDecode = WeightDecode::Arithmetic;
  EXPECT_EQ(describeSchedules(spec), "bm32 t32x64x256 kw2 w3 / t32x256x128 dqa");
  spec.stage1.weightDecode = WeightDecode::Arithmetic;
  EXPECT_EQ(describeSchedules(spec), "bm32 t32x64x256 kw2 w3 dqa / t32x256x128 dqa");
}

TEST(H200Report, RowsAgainstPeersTorchAndTheFloor) {
  MoeSpec spec;
  spec.name = "kimi_k3_tp8_a16w4";
  spec.problem = shapeA();
  spec.formats.activation = DType::BF16;
  spec.formats.weight = DType::MXFP4;
  BenchRow ok;
  ok.tokens = 1;
  ok.sets = 8;
  ok.expertsHit = 16;
  ok.callMs = {0.2f, 0.1f, 0.1f}; // median 100 us
  ok.schedules = "tuned: bm32 t32x64x256 w3 / t32x128x128";
  ok.check = LayerCheckResult();
  ok.check->checkedTokens = 1;
  StageCheck layer;
  layer.stage = "layer";
  layer.result.passed = true;
  ok.check->stages.push_back(layer);
  BenchRow failed = ok;
  failed.tokens = 4;
  failed.check->stages[0].result.passed = false;
  BenchRow broken;
  broken.tokens = 16;
  broken.sets = 8;
  broken.error = "cuda backend: launch of 'moe_stage1' failed";
  auto baseline =
      Baseline::parse(std::string(kBaselineHeader) + "\nA,3584,384,896,16,1,8,250,\n", "t.csv");
  ASSERT_TRUE(bool(baseline));
  std::string out;
  llvm::raw_string_ostream os(out);
  printLayerTable(os, spec, {ok, failed, broken}, &*baseline);
  EXPECT_NE(out.find("### Shape A (Kimi-K3 TP8): kimi_k3_tp8_a16w4 (model_dim 3584, inter_dim "
                     "384, 896 experts, top-16; bf16 x mxfp4)"),
            std::string::npos)
      << out;
  // 100 us against tk_mxfp4's 42.8 (the best at M=1): 2.34x; the floor
  // (16 experts) 8.2 us: 8%.
  EXPECT_NE(out.find("| 1 | 8 | 16.0 | 100 | PASS | 250 | 42.8 | 42.8 (tk_mxfp4) | 2.34 | 8.2 (bw) "
                     "| 8% | tuned: bm32 t32x64x256 w3 / t32x128x128 |"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("| 4 | 8 | 16.0 | 100 | FAIL (layer) | - | 78.8 | 78.8 (tk_mxfp4) | 1.27 |"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("| 16 | 8 | - | - | ERROR | - | 211 | 211 (tk_mxfp4) | - | - | - | - |"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("M=16: cuda backend: launch of 'moe_stage1' failed"), std::string::npos);
  EXPECT_NE(out.find("M=4: check of 1 of 4 tokens:"), std::string::npos) << out;
}

TEST(H200Report, ASummaryPerShapePutsItsLayersSideBySide) {
  auto layer = [](const char *name, Problem p, std::vector<BenchRow> rows) {
    LayerRows l;
    l.spec.name = name;
    l.spec.problem = p;
    l.rows = std::move(rows);
    return l;
  };
  BenchRow fast;
  fast.tokens = 1;
  fast.callMs = {0.0856f}; // 85.6 us: 2.00x tk_mxfp4's 42.8
  BenchRow failing = fast;
  failing.check = LayerCheckResult(); // no stage passed: a failed check
  BenchRow broken;
  broken.tokens = 1;
  broken.error = "no";
  BenchRow b1;
  b1.tokens = 4;
  b1.callMs = {0.1446f}; // 2.00x vllm_fp8_blk's 72.3
  Problem other = shapeB();
  other.experts = 257;
  std::vector<LayerRows> layers = {layer("a16w4", shapeA(), {fast}), layer("dsv3", shapeB(), {b1}),
                                   layer("a4w4", shapeA(), {failing}), layer("e257", other, {b1}),
                                   layer("a8w4", shapeA(), {broken})};
  std::string out;
  llvm::raw_string_ostream os(out);
  printShapeSummaries(os, layers, nullptr);
  EXPECT_EQ(out, "### Shape A (Kimi-K3 TP8): us per call (x the best peer)\n\n"
                 "| M | a16w4 | a4w4 | a8w4 | torch | tk_mxfp4 | best peer |\n"
                 "|--:|--:|--:|--:|--:|--:|--:|\n"
                 "| 1 | 85.6 (2.00x) | 85.6 (2.00x) FAIL | ERROR | - | 42.8 | 42.8 (tk_mxfp4) |\n\n"
                 "### Shape B (DeepSeek-V3 TP8): us per call (x the best peer)\n\n"
                 "| M | dsv3 | torch | tk_mxfp4 | best peer |\n"
                 "|--:|--:|--:|--:|--:|\n"
                 "| 4 | 145 (2.00x) | - | 73.4 | 72.3 (vllm_fp8_blk) |\n\n");
}

} // namespace
