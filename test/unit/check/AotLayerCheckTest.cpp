//===- AotLayerCheckTest.cpp - The layer check on a prefilled cache -------===//
//
// What moegen-layer-check does on a GPU machine, without MLIR in this
// program: the kernels come from a cache that the JIT filled in another
// process (moegen-test-prefill), MoeLayer::run launches them, every stage is
// compared with the reference; timing rotates over input copies between
// device events (the stand-in libcuda's clock), and the emu backend refuses
// to time.
//
//===----------------------------------------------------------------------===//

#include "compiler/spec/DslParser.h"
#include "runtime/api/Backends.h"
#include "runtime/check/LayerCheck.h"
#include "runtime/cuda/CudaBackend.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace moegen;

namespace {

std::string sourceDir() {
  const char *src = std::getenv("MOEGEN_SOURCE_DIR");
  return src ? src : ".";
}

std::string smallSpecPath() { return sourceDir() + "/test/lit/Inputs/small.moe"; }

/// A fresh private directory, removed at the end.
struct TempDir {
  std::string path;
  TempDir() {
    llvm::SmallString<128> p;
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("moegen-aot-check", p));
    path = std::string(p);
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
};

/// Fills `dir` with the JIT in another process.
void prefill(const std::string &dir, llvm::ArrayRef<std::string> extra) {
  std::string spec = smallSpecPath();
  std::vector<llvm::StringRef> args = {MOEGEN_TEST_PREFILL, spec, dir};
  for (const std::string &a : extra)
    args.push_back(a);
  std::string err;
  int rc = llvm::sys::ExecuteAndWait(MOEGEN_TEST_PREFILL, args, std::nullopt, {}, 0, 0, &err);
  ASSERT_EQ(rc, 0) << err;
}

MoeSpec smallSpec(llvm::ArrayRef<std::string> sets = {}) {
  auto spec = loadMoeSpec(smallSpecPath(), sets);
  EXPECT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  return *spec;
}

LayerCheckOptions fromCache(const std::string &dir) {
  LayerCheckOptions o;
  runtime::KernelSourceOptions k;
  k.cacheDir = dir;
  o.kernels = std::make_shared<runtime::KernelSource>(k);
  o.tokens = 5;
  o.seed = 3;
  return o;
}

std::unique_ptr<runtime::Backend> emuBackend() {
  auto b = runtime::createBackend("emu");
  EXPECT_TRUE(bool(b)) << llvm::toString(b.takeError());
  return std::move(*b);
}

TEST(AotLayerCheck, NeedsAKernelSource) {
  auto emu = emuBackend();
  LayerCheckOptions o;
  o.tokens = 2;
  auto r = runLayerCheck(smallSpec(), *emu, o);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("no kernel source"), std::string::npos);
}

TEST(AotLayerCheck, ALayerMissingFromTheCacheNamesItsKeyAndTheDirectory) {
  TempDir dir;
  auto emu = emuBackend();
  auto r = runLayerCheck(smallSpec(), *emu, fromCache(dir.path));
  ASSERT_FALSE(bool(r));
  std::string msg = llvm::toString(r.takeError());
  EXPECT_NE(
      msg.find("layer 'small' for amdgcn-amd-amdhsa--gfx950;cov6 is not in the kernel cache '" +
               dir.path),
      std::string::npos)
      << msg;
  EXPECT_NE(msg.find("(key "), std::string::npos) << msg;
}

TEST(AotLayerCheck, APrefilledCacheRunsOnEmuAndMatchesTheReference) {
  TempDir dir;
  prefill(dir.path, {});
  auto emu = emuBackend();
  auto r = runLayerCheck(smallSpec(), *emu, fromCache(dir.path));
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_TRUE(r->passed()) << r->table();
  std::vector<std::string> stages;
  for (const StageCheck &s : r->stages)
    stages.push_back(s.stage);
  EXPECT_EQ(llvm::join(stages, ","), "sort,quant1,stage1,stage2,layer");
  EXPECT_TRUE(r->notRun.empty());
  EXPECT_FALSE(r->timing);
}

TEST(AotLayerCheck, SomeFamiliesCheckTheirStagesAndListTheRest) {
  // Without fused quantization the layer has quant_inter; run only the
  // quantizations: quant2 quantizes the reference's stage-1 output.
  TempDir dir;
  std::vector<std::string> sets = {"stage1.fused_quant=none"};
  prefill(dir.path, {"gfx950", "quant_input,quant_inter", "--set", sets[0]});
  auto emu = emuBackend();
  LayerCheckOptions o = fromCache(dir.path);
  o.families = {KernelFamily::QuantInput, KernelFamily::QuantInter};
  auto r = runLayerCheck(smallSpec(sets), *emu, o);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_TRUE(r->passed()) << r->table();
  std::vector<std::string> stages;
  for (const StageCheck &s : r->stages)
    stages.push_back(s.stage);
  EXPECT_EQ(llvm::join(stages, ","), "quant1,quant2");
  EXPECT_EQ(llvm::join(r->notRun, ","), "sort,stage1,stage2,layer");
  // The whole layer is another cache entry: not there.
  o.families.clear();
  auto whole = runLayerCheck(smallSpec(sets), *emu, o);
  ASSERT_FALSE(bool(whole));
  EXPECT_NE(llvm::toString(whole.takeError()).find("is not in the kernel cache"),
            std::string::npos);
}

TEST(AotLayerCheck, EmuRefusesToTimeBeforeRunning) {
  auto emu = emuBackend();
  LayerCheckOptions o = fromCache("/nonexistent-moegen-cache");
  o.timedRuns = 3;
  auto r = runLayerCheck(smallSpec(), *emu, o);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("emu backend: cannot time kernels"),
            std::string::npos);
}

TEST(AotLayerCheck, TimedRunsRotateOverCopiesBetweenEvents) {
  // The sm_90a input quantization, from the cache, on the stand-in libcuda
  // (whose clock advances 1.5 ms per launch and which runs no kernel).
  TempDir dir;
  prefill(dir.path, {"sm_90a", "quant_input"});
  ::setenv("MOEGEN_CUDA_LIB", MOEGEN_FAKE_CUDA, 1);
  auto cuda = runtime::createCudaBackend();
  ASSERT_TRUE(bool(cuda)) << llvm::toString(cuda.takeError());
  LayerCheckOptions o = fromCache(dir.path);
  o.target.chip = "sm_90a";
  o.families = {KernelFamily::QuantInput};
  o.timedRuns = 5;
  o.warmupRuns = 2;
  o.rotateBytes = 4 << 20;
  auto r = runLayerCheck(smallSpec(), **cuda, o);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  ASSERT_TRUE(r->timing);
  const LayerTiming &t = *r->timing;
  EXPECT_EQ(t.runsMs, std::vector<float>(5, 1.5f)); // one launch per run
  EXPECT_EQ(t.medianMs(), 1.5f);
  EXPECT_EQ(t.minMs(), 1.5f);
  ASSERT_GT(t.copyBytes, 0u);
  // Enough copies to exceed the bytes to rotate over, never fewer than two.
  EXPECT_GE(size_t(t.copies) * t.copyBytes, o.rotateBytes);
  EXPECT_GE(t.copies, 2);
  EXPECT_LE(size_t(t.copies - 1) * t.copyBytes, o.rotateBytes);
  EXPECT_EQ(llvm::join(r->notRun, ","), "sort,stage1,stage2,layer");
}

TEST(LayerTiming, MedianAndMinimum) {
  LayerTiming t;
  t.runsMs = {3, 1, 2, 10};
  EXPECT_EQ(t.medianMs(), 2.5f);
  EXPECT_EQ(t.minMs(), 1.0f);
  t.runsMs = {4, 2, 9};
  EXPECT_EQ(t.medianMs(), 4.0f);
}

} // namespace
