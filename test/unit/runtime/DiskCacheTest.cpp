//===- DiskCacheTest.cpp - The on-disk cache ------------------------------===//

#include "runtime/cache/DiskCache.h"

#include "CacheTestUtil.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/Path.h"

#include <cstdlib>

using namespace moegen;
using namespace moegen::cache;

namespace {

CacheKey key(llvm::StringRef s) { return makeUnitKey("gfx950", s); }

TEST(DiskCache, StoresAndLoadsOneFilePerKernel) {
  test::TempDir dir;
  test::LogCapture log;
  DiskCache c(dir.path, log.handler());
  EXPECT_EQ(c.state(), DiskCache::State::Writable);
  KernelBinary k = test::sampleKernel(), got;
  EXPECT_EQ(c.load(key("a"), "gfx950", got), DiskCache::LoadResult::Miss);
  ASSERT_FALSE(bool(c.store(key("a"), "gfx950", k)));
  std::string path = c.entryPath(key("a"), "gfx950");
  EXPECT_TRUE(llvm::StringRef(path).starts_with(dir.path + "/v1/gfx950/"));
  EXPECT_TRUE(llvm::StringRef(path).ends_with(key("a").hex() + ".moeko"));
  EXPECT_TRUE(llvm::sys::fs::exists(path));
  EXPECT_EQ(c.load(key("a"), "gfx950", got), DiskCache::LoadResult::Hit);
  EXPECT_EQ(got, k);
  EXPECT_TRUE(log.lines.empty());
  auto listing = c.list();
  ASSERT_EQ(listing.size(), 1u);
  EXPECT_TRUE(listing[0].valid);
  EXPECT_EQ(listing[0].meta.symbol, k.meta.symbol);
}

struct Corruption {
  const char *name;
  void (*apply)(std::vector<uint8_t> &);
  const char *reported;
};

class CorruptEntry : public ::testing::TestWithParam<Corruption> {};

TEST_P(CorruptEntry, IsReportedOnceAndNeverLoaded) {
  test::TempDir dir;
  test::LogCapture log;
  DiskCache c(dir.path, log.handler());
  ASSERT_FALSE(bool(c.store(key("a"), "gfx950", test::sampleKernel())));
  std::string path = c.entryPath(key("a"), "gfx950");
  std::vector<uint8_t> bytes = test::readBytes(path);
  GetParam().apply(bytes);
  test::writeBytes(path, bytes);
  KernelBinary got;
  EXPECT_EQ(c.load(key("a"), "gfx950", got), DiskCache::LoadResult::Rejected);
  EXPECT_EQ(c.load(key("a"), "gfx950", got), DiskCache::LoadResult::Rejected);
  EXPECT_EQ(got, KernelBinary());
  EXPECT_EQ(log.count(GetParam().reported), 1u) << (log.lines.empty() ? "" : log.lines[0]);
  EXPECT_EQ(log.count("will be rebuilt"), 1u);
  // The rebuild replaces it.
  ASSERT_FALSE(bool(c.store(key("a"), "gfx950", test::sampleKernel())));
  EXPECT_EQ(c.load(key("a"), "gfx950", got), DiskCache::LoadResult::Hit);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, CorruptEntry,
    ::testing::Values(
        Corruption{"Truncated", [](std::vector<uint8_t> &b) { b.resize(b.size() / 2); },
                   "truncated"},
        Corruption{"Empty", [](std::vector<uint8_t> &b) { b.clear(); }, "truncated"},
        Corruption{"BitFlip", [](std::vector<uint8_t> &b) { b[b.size() / 2] ^= 0x10; },
                   "checksum mismatch"},
        Corruption{"WrongVersion",
                   [](std::vector<uint8_t> &b) { llvm::support::endian::write32le(&b[8], 99); },
                   "another entry format version"},
        Corruption{"Garbage", [](std::vector<uint8_t> &b) { b.assign(300, 'x'); }, "bad magic"}),
    [](const auto &info) { return std::string(info.param.name); });

/// The write hook runs in the middle of a store: at that point only a temp
/// file exists, so a crash there can leave no entry behind.
std::vector<std::string> seenAtHook;
std::string hookDir;
void recordHook(const char *stage) {
  std::error_code ec;
  std::string files;
  for (llvm::sys::fs::recursive_directory_iterator it(hookDir, ec), end; it != end && !ec;
       it.increment(ec))
    if (it->type() == llvm::sys::fs::file_type::regular_file)
      files += llvm::sys::path::filename(it->path()).str() + " ";
  seenAtHook.push_back(std::string(stage) + ": " + files);
}

TEST(DiskCache, PublishesByRenameOnly) {
  test::TempDir dir;
  DiskCache c(dir.path, {});
  hookDir = dir.path;
  seenAtHook.clear();
  DiskCache::setWriteHookForTesting(recordHook);
  ASSERT_FALSE(bool(c.store(key("a"), "gfx950", test::sampleKernel())));
  DiskCache::setWriteHookForTesting(nullptr);
  ASSERT_EQ(seenAtHook.size(), 2u);
  for (const std::string &s : seenAtHook) {
    EXPECT_EQ(s.find(".moeko"), std::string::npos) << s;
    EXPECT_NE(s.find(".tmp"), std::string::npos) << s;
  }
  // Afterwards: the entry and no temp file.
  auto listing = c.list();
  ASSERT_EQ(listing.size(), 1u);
  EXPECT_TRUE(listing[0].valid);
}

TEST(DiskCache, StaleTempsOfOneKeyAreSwept) {
  test::TempDir dir;
  DiskCache c(dir.path, {});
  ASSERT_FALSE(bool(c.store(key("a"), "gfx950", test::sampleKernel())));
  std::string shardA = llvm::sys::path::parent_path(c.entryPath(key("a"), "gfx950")).str();
  std::string tempA = shardA + "/." + key("a").hex() + ".123.abc.tmp";
  test::writeBytes(tempA, {1});
  ASSERT_FALSE(bool(c.store(key("b"), "gfx950", test::sampleKernel())));
  std::string shardB = llvm::sys::path::parent_path(c.entryPath(key("b"), "gfx950")).str();
  std::string tempB = shardB + "/." + key("b").hex() + ".456.def.tmp";
  test::writeBytes(tempB, {1});
  c.removeStaleTemps(key("a"), "gfx950");
  EXPECT_FALSE(llvm::sys::fs::exists(tempA));
  EXPECT_TRUE(llvm::sys::fs::exists(tempB));
  EXPECT_TRUE(llvm::sys::fs::exists(c.entryPath(key("a"), "gfx950")));
}

TEST(DiskCache, ADirectoryThatCannotBeCreatedDegradesWithOneWarning) {
  test::LogCapture log;
  // Nobody, root included, can create directories under /proc.
  DiskCache c("/proc/moegen-cache-test", log.handler());
  EXPECT_EQ(c.state(), DiskCache::State::Unusable);
  EXPECT_EQ(log.lines.size(), 1u);
  EXPECT_EQ(log.count("memory only"), 1u);
  KernelBinary got;
  EXPECT_EQ(c.load(key("a"), "gfx950", got), DiskCache::LoadResult::Miss);
  EXPECT_FALSE(bool(c.store(key("a"), "gfx950", test::sampleKernel())));
  auto lock = c.lockUnit(key("a"), "gfx950");
  ASSERT_TRUE(bool(lock));
  EXPECT_FALSE(lock->held());
  EXPECT_EQ(log.lines.size(), 1u);
}

TEST(DiskCache, DefaultRootFollowsTheEnvironment) {
  std::string saved[3];
  const char *names[] = {"MOEGEN_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  for (int i = 0; i < 3; ++i)
    if (const char *v = std::getenv(names[i]))
      saved[i] = v;
  ::setenv("MOEGEN_CACHE_DIR", "/a", 1);
  ::setenv("XDG_CACHE_HOME", "/b", 1);
  ::setenv("HOME", "/c", 1);
  EXPECT_EQ(defaultCacheRoot(), "/a");
  ::unsetenv("MOEGEN_CACHE_DIR");
  EXPECT_EQ(defaultCacheRoot(), "/b/moegen");
  ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(defaultCacheRoot(), "/c/.cache/moegen");
  for (int i = 0; i < 3; ++i)
    if (saved[i].empty())
      ::unsetenv(names[i]);
    else
      ::setenv(names[i], saved[i].c_str(), 1);
}

TEST(DiskCache, ClearRemovesEntriesTempAndLockFiles) {
  test::TempDir dir;
  DiskCache c(dir.path, {});
  ASSERT_FALSE(bool(c.store(key("a"), "gfx950", test::sampleKernel())));
  ASSERT_FALSE(bool(c.store(key("b"), "gfx950", test::sampleKernel())));
  {
    auto lock = c.lockUnit(key("u"), "gfx950");
    ASSERT_TRUE(bool(lock));
    EXPECT_TRUE(lock->held());
  }
  test::writeBytes(dir.path + "/v1/gfx950/.stale.123.abc.tmp", {1, 2, 3});
  auto listing = c.list();
  EXPECT_EQ(listing.size(), 3u); // two entries and the temp file
  auto removed = c.clear();
  ASSERT_TRUE(bool(removed));
  EXPECT_EQ(*removed, 4u);
  EXPECT_TRUE(c.list().empty());
}

TEST(FileLock, ASecondHolderWaitsAndTimesOut) {
  test::TempDir dir;
  std::string path = dir.path + "/x.lock";
  auto a = FileLock::acquire(path, 1000);
  ASSERT_TRUE(bool(a));
  EXPECT_FALSE(a->hadToWait());
  // flock locks belong to open file descriptions: a second open conflicts
  // even within one process.
  auto b = FileLock::acquire(path, 50);
  ASSERT_FALSE(bool(b));
  EXPECT_NE(llvm::toString(b.takeError()).find("timed out"), std::string::npos);
  a->release();
  auto c = FileLock::acquire(path, 50);
  ASSERT_TRUE(bool(c));
}

} // namespace
