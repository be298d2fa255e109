//===- SpecLookupTest.cpp - the example specs agree with their rows -------===//

#include "compiler/spec/DslParser.h"
#include "runtime/dispatch/Lookup.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace moegen;
using namespace moegen::dispatch;

namespace {

std::string sourcePath(llvm::StringRef a, llvm::StringRef b, llvm::StringRef c = "") {
  const char *src = std::getenv("MOEGEN_SOURCE_DIR");
  llvm::SmallString<256> p(src ? src : ".");
  llvm::sys::path::append(p, a, b);
  if (!c.empty())
    llvm::sys::path::append(p, c);
  return std::string(p);
}

void expectSame(const StageSchedule &want, const StageSchedule &got, llvm::StringRef what) {
  EXPECT_EQ(want.tileM, got.tileM) << what.str();
  EXPECT_EQ(want.tileN, got.tileN) << what.str();
  EXPECT_EQ(want.tileK, got.tileK) << what.str();
  EXPECT_EQ(want.kBatch, got.kBatch) << what.str();
  EXPECT_EQ(want.kWave, got.kWave) << what.str();
  EXPECT_EQ(want.wavesPerEU, got.wavesPerEU) << what.str();
  EXPECT_EQ(want.fusedQuant, got.fusedQuant) << what.str();
  EXPECT_EQ(want.reduce, got.reduce) << what.str();
}

TEST(SpecLookup, KimiA4W4ExampleIsTheTokenOneRow) {
  auto spec = parseMoeSpecFile(sourcePath("examples", "kimi_k3_tp8_a4w4.moe"));
  ASSERT_TRUE(!!spec) << llvm::toString(spec.takeError());
  auto key = aiterKeyFor(*spec, "gfx950", 256);
  ASSERT_TRUE(!!key) << llvm::toString(key.takeError());
  EXPECT_EQ(key->actType, "ActivationType.Situv2");
  EXPECT_EQ(key->qDtypeA, "torch.float4_e2m1fn_x2");
  EXPECT_EQ(key->qType, "QuantType.per_1x32");
  auto table = TunedTable::load(sourcePath("data", "aiter-configs", "kimik3_a4w4_tuned_fmoe.csv"));
  ASSERT_TRUE(!!table);
  LookupResult r = table->lookup(*key, 1);
  ASSERT_NE(r.row, nullptr);
  EXPECT_EQ(r.row->line, 2u);
  auto s1 = kernelNameToSchedule(r.row->get("kernelName1"));
  auto s2 = kernelNameToSchedule(r.row->get("kernelName2"));
  ASSERT_TRUE(s1 && s2);
  // Stage 2's name gives no waves_per_eu; the spec leaves it to the compiler too.
  expectSame(spec->stage1, s1->schedule, "stage1");
  expectSame(spec->stage2, s2->schedule, "stage2");
  EXPECT_EQ(s1->gateUp, spec->problem.gateUp);
  EXPECT_EQ(r.row->getInt("block_m"), spec->stage1.tileM);
}

} // namespace
