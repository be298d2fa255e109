//===- KernelCacheTest.cpp - Memory and disk cache together ---------------===//

#include "runtime/cache/KernelCache.h"

#include "CacheTestUtil.h"

#include <atomic>
#include <chrono>
#include <thread>

using namespace moegen;
using namespace moegen::cache;

namespace {

const PlannedKernel kPlanned[] = {{KernelFamily::Sort, "moe_sort_e8_k2_bm32"},
                                  {KernelFamily::Stage1, "moe_stage1_x"}};

struct CountingCompiler {
  std::atomic<int> calls{0};
  int sleepMs = 0;
  llvm::Expected<std::vector<KernelBinary>> operator()() {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(sleepMs));
    return std::vector<KernelBinary>{test::sampleKernel(KernelFamily::Sort, "moe_sort_e8_k2_bm32"),
                                     test::sampleKernel(KernelFamily::Stage1, "moe_stage1_x")};
  }
};

KernelCacheOptions options(const std::string &dir, test::LogCapture *log = nullptr) {
  KernelCacheOptions o;
  o.dir = dir;
  if (log)
    o.log = log->handler();
  return o;
}

CacheKey unit() { return makeUnitKey("gfx950", "layer"); }

TEST(KernelCache, ManyThreadsOneCompile) {
  test::TempDir dir;
  KernelCache cache(options(dir.path));
  CountingCompiler compiler;
  compiler.sleepMs = 50;
  std::vector<std::shared_ptr<const KernelSet>> results(16);
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t)
    threads.emplace_back([&, t] {
      auto r = cache.get(unit(), "gfx950", kPlanned, [&] { return compiler(); });
      ASSERT_TRUE(bool(r));
      results[t] = *r;
    });
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(compiler.calls.load(), 1);
  for (auto &r : results)
    EXPECT_EQ(r.get(), results[0].get());
  ASSERT_EQ(results[0]->kernels.size(), 2u);
  EXPECT_EQ(results[0]->find(KernelFamily::Stage1)->meta.symbol, "moe_stage1_x");
  EXPECT_EQ(results[0]->find(KernelFamily::Stage2), nullptr);
  CacheStats s = cache.stats();
  EXPECT_EQ(s.compiles, 1u);
  EXPECT_EQ(s.diskWrites, 2u);
  EXPECT_EQ(cache.lookup(unit()).get(), results[0].get());
}

TEST(KernelCache, ASecondProcessLoadsFromDisk) {
  test::TempDir dir;
  CountingCompiler compiler;
  {
    KernelCache first(options(dir.path));
    ASSERT_TRUE(bool(first.get(unit(), "gfx950", kPlanned, [&] { return compiler(); })));
  }
  KernelCache second(options(dir.path));
  auto r = second.get(unit(), "gfx950", kPlanned, [&] { return compiler(); });
  ASSERT_TRUE(bool(r));
  EXPECT_EQ(compiler.calls.load(), 1);
  EXPECT_EQ(second.stats().diskHits, 2u);
  EXPECT_EQ(*(*r)->kernels[0], test::sampleKernel(KernelFamily::Sort, "moe_sort_e8_k2_bm32"));
}

TEST(KernelCache, ACorruptEntryIsRebuiltAndRepublished) {
  test::TempDir dir;
  CountingCompiler compiler;
  std::string path;
  {
    KernelCache first(options(dir.path));
    ASSERT_TRUE(bool(first.get(unit(), "gfx950", kPlanned, [&] { return compiler(); })));
    path = first.disk()->entryPath(makeKernelKey(unit(), KernelFamily::Stage1, "moe_stage1_x"),
                                   "gfx950");
  }
  std::vector<uint8_t> bytes = test::readBytes(path);
  bytes[bytes.size() - 40] ^= 1;
  test::writeBytes(path, bytes);
  test::LogCapture log;
  {
    KernelCache second(options(dir.path, &log));
    ASSERT_TRUE(bool(second.get(unit(), "gfx950", kPlanned, [&] { return compiler(); })));
    EXPECT_EQ(compiler.calls.load(), 2);
    EXPECT_EQ(second.stats().rejectedEntries, 2u); // seen before and under the lock
    EXPECT_EQ(log.count("checksum mismatch"), 1u);
  }
  KernelCache third(options(dir.path, &log));
  ASSERT_TRUE(bool(third.get(unit(), "gfx950", kPlanned, [&] { return compiler(); })));
  EXPECT_EQ(compiler.calls.load(), 2);
  EXPECT_EQ(third.stats().diskHits, 2u);
}

TEST(KernelCache, MemoryOnlyWhenTheDirectoryIsUnusable) {
  test::LogCapture log;
  KernelCache cache(options("/proc/moegen-cache-test", &log));
  CountingCompiler compiler;
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(bool(cache.get(unit(), "gfx950", kPlanned, [&] { return compiler(); })));
  EXPECT_EQ(compiler.calls.load(), 1);
  EXPECT_EQ(log.lines.size(), 1u);
  EXPECT_EQ(cache.stats().memoryHits, 2u);
}

TEST(KernelCache, FailuresAreRememberedNotRecompiled) {
  KernelCacheOptions o;
  o.disk = false;
  KernelCache cache(o);
  int calls = 0;
  auto failing = [&]() -> llvm::Expected<std::vector<KernelBinary>> {
    ++calls;
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "stage1: k_batch=3 bad");
  };
  for (int i = 0; i < 2; ++i) {
    auto r = cache.get(unit(), "gfx950", kPlanned, failing);
    ASSERT_FALSE(bool(r));
    EXPECT_EQ(llvm::toString(r.takeError()), "stage1: k_batch=3 bad");
  }
  EXPECT_EQ(calls, 1);
}

TEST(KernelCache, AMismatchedCompileIsAnError) {
  KernelCacheOptions o;
  o.disk = false;
  KernelCache cache(o);
  auto wrong = []() -> llvm::Expected<std::vector<KernelBinary>> {
    return std::vector<KernelBinary>{test::sampleKernel(KernelFamily::Sort, "other"),
                                     test::sampleKernel(KernelFamily::Stage1, "moe_stage1_x")};
  };
  auto r = cache.get(unit(), "gfx950", kPlanned, wrong);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("was planned"), std::string::npos);
}

} // namespace
