//===- DiskCacheTest.cpp - The on-disk cache ------------------------------===//

#include "runtime/cache/DiskCache.h"

#include "CacheTestUtil.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/Path.h"

#include <atomic>
#include <cstdlib>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

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
  EXPECT_TRUE(llvm::StringRef(path).starts_with(test::versionDir(dir.path) + "/gfx950/"));
  EXPECT_TRUE(llvm::StringRef(path).ends_with(key("a").hex() + ".moeko"));
  EXPECT_TRUE(llvm::sys::fs::exists(path));
  EXPECT_EQ(c.load(key("a"), "gfx950", got), DiskCache::LoadResult::Hit);
  EXPECT_EQ(got, k);
  EXPECT_TRUE(log.lines.empty());
  auto listing = llvm::cantFail(c.list());
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
  auto listing = llvm::cantFail(c.list());
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
  // The XDG spec: an empty or relative $XDG_CACHE_HOME is ignored; an empty
  // $MOEGEN_CACHE_DIR is as good as unset.
  ::setenv("MOEGEN_CACHE_DIR", "", 1);
  ::setenv("XDG_CACHE_HOME", "", 1);
  EXPECT_EQ(defaultCacheRoot(), "/c/.cache/moegen");
  ::setenv("XDG_CACHE_HOME", "relative/cache", 1);
  EXPECT_EQ(defaultCacheRoot(), "/c/.cache/moegen");
  ::unsetenv("MOEGEN_CACHE_DIR");
  ::unsetenv("XDG_CACHE_HOME");
  // Without $HOME, the home directory of the user's passwd entry.
  ::unsetenv("HOME");
  std::string root = defaultCacheRoot();
  if (!root.empty()) {
    EXPECT_TRUE(llvm::sys::path::is_absolute(root)) << root;
    EXPECT_TRUE(llvm::StringRef(root).ends_with("/.cache/moegen")) << root;
  }
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
  test::writeBytes(test::versionDir(dir.path) + "/gfx950/.stale.123.abc.tmp", {1, 2, 3});
  auto listing = llvm::cantFail(c.list());
  EXPECT_EQ(listing.size(), 3u); // two entries and the temp file
  auto removed = c.clear();
  ASSERT_TRUE(bool(removed));
  EXPECT_EQ(*removed, 4u);
  EXPECT_TRUE(llvm::cantFail(c.list()).empty());
}

mode_t modeOf(const std::string &path) {
  struct stat st;
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

/// An entry's path with a valid entry of the key stored elsewhere: what a
/// planted link could point to.
struct PlantedEntry {
  test::TempDir dir, elsewhere;
  test::LogCapture log;
  DiskCache c{dir.path, log.handler()};
  std::string path = c.entryPath(key("a"), "gfx950");
  std::string target = elsewhere.path + "/target.moeko";
  PlantedEntry() {
    EXPECT_FALSE(bool(c.store(key("a"), "gfx950", test::sampleKernel())));
    test::writeBytes(target, test::readBytes(path));
    ::unlink(path.c_str());
  }
  /// Rejected with `reported` in the one warning, then rebuilt as a fresh
  /// private file.
  void expectRefusedAndRebuilt(const char *reported) {
    KernelBinary got;
    EXPECT_EQ(c.load(key("a"), "gfx950", got), DiskCache::LoadResult::Rejected);
    EXPECT_EQ(got, KernelBinary());
    EXPECT_EQ(log.count(reported), 1u) << (log.lines.empty() ? "" : log.lines[0]);
    EXPECT_EQ(log.count("will be rebuilt"), 1u);
    ASSERT_FALSE(bool(c.store(key("a"), "gfx950", test::sampleKernel())));
    EXPECT_EQ(c.load(key("a"), "gfx950", got), DiskCache::LoadResult::Hit);
    struct stat st;
    ASSERT_EQ(::lstat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0600u);
  }
};

TEST(DiskCacheSafety, ASymlinkEntryIsNotFollowed) {
  PlantedEntry p;
  ASSERT_EQ(::symlink(p.target.c_str(), p.path.c_str()), 0);
  p.expectRefusedAndRebuilt("is a symbolic link");
  // The rename replaced the link, not what it pointed to.
  EXPECT_EQ(test::readBytes(p.target).size(), test::readBytes(p.path).size());
}

TEST(DiskCacheSafety, AFifoEntryDoesNotBlock) {
  // No writer ever opens the FIFO: an open without O_NONBLOCK would hang.
  PlantedEntry p;
  ASSERT_EQ(::mkfifo(p.path.c_str(), 0600), 0);
  p.expectRefusedAndRebuilt("is a FIFO, not a regular file");
}

TEST(DiskCacheSafety, ADirectoryEntryIsRefused) {
  PlantedEntry p;
  ASSERT_EQ(::mkdir(p.path.c_str(), 0700), 0);
  KernelBinary got;
  EXPECT_EQ(p.c.load(key("a"), "gfx950", got), DiskCache::LoadResult::Rejected);
  EXPECT_EQ(p.log.count("is a directory, not a regular file"), 1u)
      << (p.log.lines.empty() ? "" : p.log.lines[0]);
  // A rename cannot replace a directory: the store fails, naming the entry
  // (the caller keeps the kernel in memory).
  llvm::Error e = p.c.store(key("a"), "gfx950", test::sampleKernel());
  ASSERT_TRUE(bool(e));
  EXPECT_NE(llvm::toString(std::move(e)).find(p.path), std::string::npos);
  auto listing = llvm::cantFail(p.c.list());
  ASSERT_EQ(listing.size(), 1u);
  EXPECT_FALSE(listing[0].valid);
  EXPECT_NE(listing[0].problem.find("is a directory"), std::string::npos);
}

TEST(DiskCacheSafety, AWorldWritableEntryIsRefused) {
  PlantedEntry p;
  test::writeBytes(p.path, test::readBytes(p.target));
  ASSERT_EQ(::chmod(p.path.c_str(), 0666), 0);
  p.expectRefusedAndRebuilt("is writable by group or others (mode 0666)");
}

TEST(DiskCacheSafety, AnEntryOfAnotherUserIsRefused) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "giving a file to another user needs root";
  PlantedEntry p;
  test::writeBytes(p.path, test::readBytes(p.target));
  ASSERT_EQ(::chmod(p.path.c_str(), 0600), 0);
  ASSERT_EQ(::chown(p.path.c_str(), 65534, gid_t(-1)), 0);
  p.expectRefusedAndRebuilt("is owned by uid 65534, not by this user (uid 0)");
}

TEST(DiskCacheSafety, AnEntryInAGroupWritableDirectoryIsRefused) {
  test::TempDir dir;
  test::LogCapture log;
  DiskCache c(dir.path, log.handler());
  ASSERT_FALSE(bool(c.store(key("a"), "gfx950", test::sampleKernel())));
  std::string shard = llvm::sys::path::parent_path(c.entryPath(key("a"), "gfx950")).str();
  ASSERT_EQ(::chmod(shard.c_str(), 0770), 0);
  KernelBinary got;
  EXPECT_EQ(c.load(key("a"), "gfx950", got), DiskCache::LoadResult::Rejected);
  EXPECT_EQ(log.count("in '" + shard + "', which is writable by group or others (mode 0770)"), 1u)
      << (log.lines.empty() ? "" : log.lines[0]);
  llvm::Error e = c.store(key("a"), "gfx950", test::sampleKernel());
  ASSERT_TRUE(bool(e));
  EXPECT_NE(llvm::toString(std::move(e)).find("not writing"), std::string::npos);
}

TEST(DiskCacheSafety, NewDirectoriesAre0700AndFiles0600) {
  test::TempDir dir;
  std::string root = dir.path + "/not/yet";
  DiskCache c(root, {});
  ASSERT_FALSE(bool(c.store(key("a"), "gfx950", test::sampleKernel())));
  ASSERT_TRUE(bool(c.lockUnit(key("u"), "gfx950")));
  std::string entry = c.entryPath(key("a"), "gfx950");
  for (std::string d = llvm::sys::path::parent_path(entry).str(); d != dir.path;
       d = llvm::sys::path::parent_path(d).str())
    EXPECT_EQ(modeOf(d), 0700u) << d;
  EXPECT_EQ(modeOf(entry), 0600u);
  EXPECT_EQ(modeOf(c.lockPath(key("u"), "gfx950")), 0600u);
}

TEST(DiskCacheSafety, ALockFileThatIsNotARegularFileIsNotUsed) {
  test::TempDir dir;
  test::LogCapture log;
  DiskCache c(dir.path, log.handler());
  std::string lock = c.lockPath(key("u"), "gfx950");
  ASSERT_FALSE(bool(llvm::sys::fs::create_directories(llvm::sys::path::parent_path(lock))));
  ASSERT_EQ(::mkfifo(lock.c_str(), 0600), 0);
  auto l = c.lockUnit(key("u"), "gfx950");
  ASSERT_TRUE(bool(l));
  EXPECT_FALSE(l->held());
  EXPECT_EQ(log.count("refusing lock file '" + lock + "': it is a FIFO"), 1u)
      << (log.lines.empty() ? "" : log.lines[0]);
  EXPECT_EQ(c.state(), DiskCache::State::Writable);
}

TEST(DiskCacheSafety, AWorldWritableCacheDirectoryIsRefused) {
  test::TempDir dir;
  ASSERT_EQ(::chmod(dir.path.c_str(), 0777), 0);
  test::LogCapture log;
  DiskCache c(dir.path, log.handler());
  EXPECT_EQ(c.state(), DiskCache::State::Unusable);
  ASSERT_EQ(log.lines.size(), 1u);
  EXPECT_EQ(log.count("refusing the cache directory '" + dir.path +
                      "': it is writable by group or others (mode 0777)"),
            1u)
      << log.lines[0];
  KernelBinary got;
  EXPECT_EQ(c.load(key("a"), "gfx950", got), DiskCache::LoadResult::Miss);
  EXPECT_FALSE(llvm::sys::fs::exists(c.entryPath(key("a"), "gfx950")));
}

TEST(DiskCacheSafety, ACacheDirectoryOfAnotherUserIsRefused) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "giving a directory to another user needs root";
  test::TempDir dir;
  ASSERT_EQ(::chown(dir.path.c_str(), 65534, gid_t(-1)), 0);
  test::LogCapture log;
  DiskCache c(dir.path, log.handler());
  EXPECT_EQ(c.state(), DiskCache::State::Unusable);
  EXPECT_EQ(log.count("'" + dir.path + "': it is owned by uid 65534"), 1u)
      << (log.lines.empty() ? "" : log.lines[0]);
}

TEST(FileLock, ASecondHolderWaitsAndTimesOut) {
  test::TempDir dir;
  std::string path = dir.path + "/x.lock";
  auto a = FileLock::acquire(path, 1000);
  ASSERT_TRUE(bool(a));
  EXPECT_FALSE(a->hadToWait());
  // A second holder in the same process waits too (the record lock alone
  // would let it in: such locks belong to the process).
  auto b = FileLock::acquire(path, 50);
  ASSERT_FALSE(bool(b));
  EXPECT_NE(llvm::toString(b.takeError()).find("timed out"), std::string::npos);
  a->release();
  auto c = FileLock::acquire(path, 50);
  ASSERT_TRUE(bool(c));
}

TEST(FileLock, ThreadsOfOneProcessTakeTurns) {
  test::TempDir dir;
  std::string path = dir.path + "/x.lock";
  std::atomic<int> inside{0}, maxInside{0}, waited{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        auto l = FileLock::acquire(path, 10000);
        ASSERT_TRUE(bool(l)) << llvm::toString(l.takeError());
        waited += l->hadToWait();
        int now = ++inside;
        maxInside = std::max(maxInside.load(), now);
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        --inside;
      }
    });
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(maxInside.load(), 1);
  EXPECT_GT(waited.load(), 0);
}

TEST(FileLock, AnotherProcessHoldingTheLockIsWaitedFor) {
  test::TempDir dir;
  std::string path = dir.path + "/x.lock";
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child holds the lock for 300 ms.
    auto l = FileLock::acquire(path, 1000);
    char c = l ? 'y' : 'n';
    (void)!::write(ready[1], &c, 1);
    ::usleep(300 * 1000);
    ::_exit(l ? 0 : 1);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  auto busy = FileLock::acquire(path, 20);
  ASSERT_FALSE(bool(busy));
  EXPECT_NE(llvm::toString(busy.takeError()).find("timed out"), std::string::npos);
  auto l = FileLock::acquire(path, 10000);
  ASSERT_TRUE(bool(l)) << llvm::toString(l.takeError());
  EXPECT_TRUE(l->hadToWait());
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST(DiskCache, PublishedEntriesAreTheUsersOnlyAndNoTempIsLeft) {
  test::TempDir dir;
  DiskCache c(dir.path, {});
  CacheKey k = key("published");
  ASSERT_FALSE(bool(c.store(k, "gfx950", test::sampleKernel())));
  struct stat st;
  ASSERT_EQ(::lstat(c.entryPath(k, "gfx950").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  std::string shard = llvm::sys::path::parent_path(c.entryPath(k, "gfx950")).str();
  ASSERT_EQ(::lstat(shard.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(shard, ec), end; it != end && !ec; it.increment(ec))
    EXPECT_FALSE(llvm::StringRef(it->path()).ends_with(".tmp")) << it->path();
}

} // namespace
