//===- CompilerTest.cpp - The JIT compiler handle -------------------------===//

#include "runtime/jit/Compiler.h"

#include "CacheTestUtil.h"

#include "compiler/spec/DslParser.h"

#include <thread>

using namespace moegen;
using namespace moegen::runtime;

namespace {

MoeSpec kimi() {
  const char *src = std::getenv("MOEGEN_SOURCE_DIR");
  auto spec = parseMoeSpecFile(std::string(src ? src : ".") + "/examples/kimi_k3_tp8_a4w4.moe");
  EXPECT_TRUE(bool(spec));
  return spec ? *spec : MoeSpec();
}

TEST(RuntimeCompiler, CompilesOnFirstUseThenHitsMemory) {
  test::TempDir dir;
  CompilerOptions o;
  o.cacheDir = dir.path;
  Compiler jit(o);
  MoeSpec spec = kimi();
  auto k = jit.getKernel(spec, Target(), KernelFamily::Sort);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  EXPECT_EQ((*k)->meta.family, KernelFamily::Sort);
  EXPECT_EQ((*k)->meta.symbol, "moe_sort_e896_k16_bm32");
  EXPECT_EQ((*k)->meta.blockSize, 512); // the sort runs 8 waves
  ASSERT_EQ((*k)->meta.args.size(), 9u);
  EXPECT_EQ((*k)->meta.args[0].name, "topk_ids");
  EXPECT_EQ((*k)->meta.args[2].name, "chunk_counts");
  EXPECT_EQ((*k)->meta.args[8].kind, cache::ArgKind::I32);
  ASSERT_GT((*k)->hsaco.size(), 4u);
  EXPECT_EQ(std::memcmp((*k)->hsaco.data(),
                        "\x7f"
                        "ELF",
                        4),
            0);
  EXPECT_FALSE((*k)->bitcode.empty());
  EXPECT_GT((*k)->meta.ldsBytes, 0);
  EXPECT_EQ((*k)->meta.description, "kimi_k3_tp8_a4w4 for amdgcn-amd-amdhsa--gfx950;cov6");

  auto again = jit.getKernel(spec, Target(), KernelFamily::Sort);
  ASSERT_TRUE(bool(again));
  EXPECT_EQ(again->get(), k->get());
  EXPECT_EQ(jit.stats().compiles, 1u);
  EXPECT_EQ(jit.stats().memoryHits, 1u);

  auto missing = jit.getKernel(spec, Target(), KernelFamily::Finish);
  ASSERT_FALSE(bool(missing));
  EXPECT_NE(llvm::toString(missing.takeError()).find("has no 'finish' kernel (it has: sort"),
            std::string::npos);
}

TEST(RuntimeCompiler, TheKeyCoversSpecTargetAndOptions) {
  CompilerOptions o;
  o.diskCache = false;
  Compiler jit(o);
  MoeSpec a = kimi(), b = kimi();
  EXPECT_EQ(jit.unitKey(a, Target()), jit.unitKey(b, Target()));
  b.stage2.kBatch = 2;
  EXPECT_NE(jit.unitKey(a, Target()), jit.unitKey(b, Target()));
  Target t5;
  t5.codeObjectVersion = 5;
  EXPECT_NE(jit.unitKey(a, Target()), jit.unitKey(a, t5));
  Target feat;
  feat.features = "sramecc+:xnack-";
  EXPECT_NE(jit.unitKey(a, Target()), jit.unitKey(a, feat));
  EXPECT_EQ(feat.id(), "amdgcn-amd-amdhsa--gfx950:sramecc+:xnack-;cov6");
  Target hopper;
  hopper.chip = "sm_90a";
  EXPECT_EQ(hopper.id(), "nvptx64-nvidia-cuda--sm_90a;cov6");
  EXPECT_NE(jit.unitKey(a, Target()), jit.unitKey(a, hopper));
  CompilerOptions o2 = o;
  o2.optLevel = 2;
  Compiler jit2(o2);
  EXPECT_NE(jit.unitKey(a, Target()), jit2.unitKey(a, Target()));
}

TEST(RuntimeCompiler, ConcurrentThreadsShareOneCompile) {
  CompilerOptions o;
  o.diskCache = false;
  Compiler jit(o);
  MoeSpec spec = kimi();
  spec.problem.topk = 8;
  std::vector<const cache::KernelBinary *> got(6);
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      auto k = jit.getKernel(spec, Target(), KernelFamily::Sort);
      ASSERT_TRUE(bool(k));
      got[t] = k->get();
    });
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(jit.stats().compiles, 1u);
  for (auto *g : got)
    EXPECT_EQ(g, got[0]);
}

TEST(RuntimeCompiler, VerificationErrorsNameTheParameter) {
  CompilerOptions o;
  o.diskCache = false;
  Compiler jit(o);
  MoeSpec spec = kimi();
  spec.stage1.kBatch = 3;
  auto k = jit.getKernels(spec);
  ASSERT_FALSE(bool(k));
  EXPECT_NE(llvm::toString(k.takeError()).find("k_batch=3"), std::string::npos);
  Target bad;
  bad.chip = "gfx942";
  auto t = jit.getKernels(kimi(), bad);
  ASSERT_FALSE(bool(t));
  EXPECT_NE(llvm::toString(t.takeError()).find("gfx942"), std::string::npos);
}

TEST(KernelSourceAot, ServesWhatTheJitCachedAndNamesWhatIsMissing) {
  test::TempDir dir;
  KernelSourceOptions o;
  o.cacheDir = dir.path;
  MoeSpec spec = kimi();
  {
    KernelSource aot(o); // an empty cache and no compiler
    auto missing = aot.getKernels(spec);
    ASSERT_FALSE(bool(missing));
    std::string msg = llvm::toString(missing.takeError());
    EXPECT_NE(msg.find("layer 'kimi_k3_tp8_a4w4' for amdgcn-amd-amdhsa--gfx950;cov6 is not in "
                       "the kernel cache '" +
                       dir.path + "'"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find(aot.unitKey(spec, Target()).hex()), std::string::npos) << msg;
    EXPECT_NE(msg.find("moegen cache prefill"), std::string::npos) << msg;
  }
  Compiler jit(o);
  auto compiled = jit.getKernels(spec);
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  KernelSource aot(o);
  auto loaded = aot.getKernels(spec);
  ASSERT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
  EXPECT_EQ(aot.stats().compiles, 0u);
  EXPECT_EQ(aot.stats().diskHits, (*compiled)->kernels.size());
  ASSERT_EQ((*loaded)->kernels.size(), (*compiled)->kernels.size());
  for (size_t i = 0; i < (*loaded)->kernels.size(); ++i)
    EXPECT_EQ(*(*loaded)->kernels[i], *(*compiled)->kernels[i]);
  // Another optimization level is another key: not in the cache.
  KernelSourceOptions o2 = o;
  o2.optLevel = 2;
  KernelSource other(o2);
  auto miss = other.getKernels(spec);
  ASSERT_FALSE(bool(miss));
  llvm::consumeError(miss.takeError());
}

TEST(KernelSourceAot, VerifiesWithTheTemplateRules) {
  KernelSourceOptions o;
  o.diskCache = false;
  KernelSource aot(o);
  MoeSpec spec = kimi();
  EXPECT_FALSE(bool(aot.verify(spec)));
  spec.stage1.kBatch = 3;
  llvm::Error e = aot.verify(spec);
  ASSERT_TRUE(bool(e));
  std::string msg = llvm::toString(std::move(e));
  // At the stage's line in the .moe file, as moe-verify-schedule reports it.
  EXPECT_NE(msg.find("kimi_k3_tp8_a4w4.moe:"), std::string::npos) << msg;
  EXPECT_NE(msg.find(": error: stage1: k_batch=3 does not divide K=3584 (model_dim)"),
            std::string::npos)
      << msg;
  auto k = aot.getKernels(spec); // a spec that breaks a rule has no kernels to find
  ASSERT_FALSE(bool(k));
  EXPECT_NE(llvm::toString(k.takeError()).find("k_batch=3"), std::string::npos);
  Target bad;
  bad.chip = "gfx942";
  llvm::Error t = aot.verify(kimi(), bad);
  ASSERT_TRUE(bool(t));
  EXPECT_NE(llvm::toString(std::move(t)).find("unsupported target chip 'gfx942'"),
            std::string::npos);
}

} // namespace
