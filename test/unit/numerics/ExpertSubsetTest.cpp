//===- ExpertSubsetTest.cpp - the routed experts' weights alone -----------===//

#include "TestSpecs.h"

#include "runtime/numerics/ExpertSubset.h"
#include "runtime/numerics/InputGen.h"
#include "runtime/numerics/Preshuffle.h"
#include "runtime/numerics/Reference.h"

#include <gtest/gtest.h>

using namespace moegen;
using namespace moegen::num;
using moegen::test::unwrap;

namespace {

MoeSpec subsetSpec(DType weight, GateUpLayout gateUp) {
  MoeSpec spec = test::smallSpec(DType::MXFP4, weight, FusedQuant::FP4);
  spec.problem.experts = 9;
  spec.problem.topk = 2;
  spec.problem.gateUp = gateUp;
  return spec;
}

TEST(ExpertSubset, CompactGenerationMatchesTheFullTensors) {
  MoeSpec spec = subsetSpec(DType::MXFP4, GateUpLayout::Separated);
  GenOptions gen{7};
  gen.onlyRoutedExperts = true;
  LayerInputs full = unwrap(generateInputs(spec, 2, gen));
  gen.compactExperts = true;
  LayerInputs compact = unwrap(generateInputs(spec, 2, gen));
  std::vector<int32_t> ids = routedExperts(full.topkIds, spec.problem.experts);
  ASSERT_FALSE(ids.empty());
  ASSERT_LT(ids.size(), 9u); // 2 tokens x top-2 leave experts out
  EXPECT_EQ(compact.experts, ids);
  EXPECT_TRUE(full.experts.empty());
  for (auto [f, c] : {std::pair{&full.w1, &compact.w1}, std::pair{&full.w2, &compact.w2}}) {
    HostTensor kept = unwrap(selectExperts(*f, ids));
    EXPECT_EQ(c->shape, kept.shape);
    EXPECT_EQ(c->data, kept.data);
    EXPECT_EQ(c->scales, kept.scales);
  }
}

TEST(ExpertSubset, PackedExpertsLandWherePackWeightsPutsThem) {
  for (DType weight : {DType::MXFP4, DType::BF16})
    for (GateUpLayout gu : {GateUpLayout::Separated, GateUpLayout::Interleaved}) {
      MoeSpec spec = subsetSpec(weight, gu);
      GenOptions gen{11};
      gen.onlyRoutedExperts = true;
      LayerInputs in = unwrap(generateInputs(spec, 3, gen));
      PackedWeights want = unwrap(packWeights(spec, in.w1, in.w2));
      std::vector<int32_t> ids = routedExperts(in.topkIds, spec.problem.experts);
      HostTensor w1 = unwrap(selectExperts(in.w1, ids)), w2 = unwrap(selectExperts(in.w2, ids));
      PackedSizes sizes = packedSizes(spec);
      PackedWeights got;
      got.w1.assign(sizes.w1, 0);
      got.w1Scale.assign(sizes.w1Scale, 0);
      got.w2.assign(sizes.w2, 0);
      got.w2Scale.assign(sizes.w2Scale, 0);
      auto sink = [&](PackedBuffer which, int64_t offset,
                      llvm::ArrayRef<uint8_t> bytes) -> llvm::Error {
        std::vector<uint8_t> &dst = which == PackedBuffer::W1        ? got.w1
                                    : which == PackedBuffer::W1Scale ? got.w1Scale
                                    : which == PackedBuffer::W2      ? got.w2
                                                                     : got.w2Scale;
        if (offset < 0 || offset + static_cast<int64_t>(bytes.size()) > int64_t(dst.size()))
          return llvm::createStringError("write outside the buffer");
        std::copy(bytes.begin(), bytes.end(), dst.begin() + offset);
        return llvm::Error::success();
      };
      // Chunks of 2 experts: packing across chunk boundaries must not matter.
      llvm::Error e = packExperts(spec, w1, w2, ids, sink, /*chunk=*/2);
      ASSERT_FALSE(!!e) << llvm::toString(std::move(e));
      EXPECT_EQ(got.w1, want.w1);
      EXPECT_EQ(got.w1Scale, want.w1Scale);
      EXPECT_EQ(got.w2, want.w2);
      EXPECT_EQ(got.w2Scale, want.w2Scale);
    }
}

TEST(ExpertSubset, ReferenceOnKeptExpertsIsTheFullReference) {
  MoeSpec spec = subsetSpec(DType::MXFP4, GateUpLayout::Separated);
  GenOptions gen{5};
  gen.onlyRoutedExperts = true;
  LayerInputs in = unwrap(generateInputs(spec, 3, gen));
  LayerResult full = unwrap(referenceLayer(spec, in.a1, in.topkIds, in.topkWeights, in.w1, in.w2));
  std::vector<int32_t> ids = routedExperts(in.topkIds, spec.problem.experts);
  MoeSorting kept = unwrap(renumberExperts(full.sorting, ids));
  EXPECT_EQ(kept.experts, static_cast<int64_t>(ids.size()));
  for (int64_t b = 0; b < full.sorting.usedBlocks(); ++b)
    EXPECT_EQ(ids[kept.sortedExpertIds[b]], full.sorting.sortedExpertIds[b]);
  MoeSpec keptSpec = spec;
  keptSpec.problem.experts = static_cast<int64_t>(ids.size());
  HostTensor w1 = unwrap(selectExperts(in.w1, ids)), w2 = unwrap(selectExperts(in.w2, ids));
  Stage1Result s1 = unwrap(referenceStage1(keptSpec, in.a1, kept, w1));
  EXPECT_EQ(s1.out.data, full.stage1.out.data);
  EXPECT_EQ(s1.out.scales, full.stage1.out.scales);
  Stage2Result s2 = unwrap(referenceStage2(keptSpec, full.a2, kept, w2));
  EXPECT_EQ(s2.out.data, full.stage2.out.data);
  // An expert that is not kept is refused.
  std::vector<int32_t> fewer(ids.begin() + 1, ids.end());
  auto refused = renumberExperts(full.sorting, fewer);
  EXPECT_FALSE(!!refused);
  if (!refused)
    llvm::consumeError(refused.takeError());
}

} // namespace
