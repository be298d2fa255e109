//===- KernelLayoutsTest.cpp - kernel stage-1 buffers round trip ----------===//

#include "TestSpecs.h"

#include "runtime/numerics/Compare.h"
#include "runtime/numerics/InputGen.h"
#include "runtime/numerics/KernelLayouts.h"
#include "runtime/numerics/Preshuffle.h"

#include <gtest/gtest.h>

using namespace moegen;
using namespace moegen::num;

namespace {

TEST(KernelLayouts, Stage1RoundTrip) {
  for (FusedQuant fq : {FusedQuant::FP4, FusedQuant::FP8})
    for (bool sorted : {false, true}) {
      MoeSpec spec =
          test::smallSpec(fq == FusedQuant::FP4 ? DType::MXFP4 : DType::MXFP8, DType::MXFP4, fq);
      auto in = generateInputs(spec, 7, GenOptions{21});
      ASSERT_TRUE(!!in);
      auto layer = referenceLayer(spec, in->a1, in->topkIds, in->topkWeights, in->w1, in->w2);
      ASSERT_TRUE(!!layer);
      auto bufs = stage1ToKernelLayout(spec, layer->sorting, layer->stage1, sorted);
      ASSERT_TRUE(!!bufs) << llvm::toString(bufs.takeError());
      EXPECT_EQ(bufs->scales.size(),
                static_cast<size_t>(e8m0ShuffledRows(layer->sorting.sortedTokenIds.size()) * 8));
      auto back = stage1FromKernelLayout(spec, layer->sorting, bufs->rows, bufs->scales, sorted);
      ASSERT_TRUE(!!back) << llvm::toString(back.takeError());
      EXPECT_EQ(back->data, layer->stage1.out.data);
      EXPECT_EQ(back->scales, layer->stage1.out.scales);
      auto cmp = compareTensors(layer->stage1.out, *back, {}, CompareOptions{});
      ASSERT_TRUE(!!cmp);
      EXPECT_TRUE(cmp->passed) << cmp->summary();
    }
}

TEST(KernelLayouts, Errors) {
  MoeSpec spec = test::smallSpec(DType::BF16, DType::MXFP4, FusedQuant::None);
  auto s = sortMoe({0, 1}, {0.5f, 0.5f}, 1, 2, 4, 32);
  ASSERT_TRUE(!!s);
  auto r = stage1FromKernelLayout(spec, *s, {}, {}, false);
  ASSERT_FALSE(!!r);
  EXPECT_NE(llvm::toString(r.takeError()).find("no fused quantization"), std::string::npos);
  spec.stage1.fusedQuant = FusedQuant::FP4;
  auto r2 = stage1FromKernelLayout(spec, *s, std::vector<uint8_t>(10), {}, false);
  ASSERT_FALSE(!!r2);
  EXPECT_NE(llvm::toString(r2.takeError()).find("10 bytes, need 64"), std::string::npos);
}

} // namespace
