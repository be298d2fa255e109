//===- KernelFamilyTest.cpp - The kernel family registry ------------------===//

#include "compiler/spec/KernelFamily.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace moegen;

namespace {

TEST(KernelFamily, NamesAreUniqueAndRoundTrip) {
  std::set<std::string> names;
  for (KernelFamily f : allKernelFamilies()) {
    EXPECT_TRUE(names.insert(toString(f).str()).second) << toString(f).str();
    EXPECT_EQ(parseKernelFamily(toString(f)), f);
  }
  EXPECT_EQ(names.size(), kNumKernelFamilies);
  EXPECT_EQ(parseKernelFamily("stage3"), std::nullopt);
  EXPECT_EQ(parseKernelFamily(""), std::nullopt);
  EXPECT_EQ(parseKernelFamily("Sort"), std::nullopt); // names are exact
}

TEST(KernelFamily, LaunchOrderIsTheLayersOrder) {
  std::vector<std::string> order;
  for (KernelFamily f : allKernelFamilies())
    order.push_back(toString(f).str());
  EXPECT_EQ(order,
            (std::vector<std::string>{"sort_count", "sort_scan", "sort", "quant_input", "stage1",
                                      "finish", "quant_inter", "stage2", "reduce"}));
}

TEST(KernelFamily, EachServesAStage) {
  EXPECT_EQ(servedStage(KernelFamily::SortCount), StageId::Stage1);
  EXPECT_EQ(servedStage(KernelFamily::SortScan), StageId::Stage1);
  EXPECT_EQ(servedStage(KernelFamily::Sort), StageId::Stage1);
  EXPECT_EQ(servedStage(KernelFamily::QuantInput), StageId::Stage1);
  EXPECT_EQ(servedStage(KernelFamily::Finish), StageId::Stage1);
  EXPECT_EQ(servedStage(KernelFamily::QuantInter), StageId::Stage2);
  EXPECT_EQ(servedStage(KernelFamily::Reduce), StageId::Stage2);
  for (StageId s : {StageId::Stage1, StageId::Stage2})
    EXPECT_EQ(servedStage(gemmFamily(s)), s);
}

} // namespace
