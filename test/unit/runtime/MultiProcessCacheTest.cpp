//===- MultiProcessCacheTest.cpp - Processes sharing one cache directory --===//
//
// Runs moegen-cache-helper (real compiler, real disk cache) in several
// processes at once, kills one in the middle of a write, and reads a cache
// it may not write.
//
//===----------------------------------------------------------------------===//

#include "runtime/cache/DiskCache.h"

#include "CacheTestUtil.h"

#include "llvm/ADT/StringExtras.h"

#include <csignal>
#include <fcntl.h>
#include <map>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

using namespace moegen;

namespace {

std::string specPath() {
  const char *src = std::getenv("MOEGEN_SOURCE_DIR");
  return std::string(src ? src : ".") + "/examples/kimi_k3_tp8_a4w4.moe";
}

struct Child {
  pid_t pid = -1;
  int out = -1;
};

Child spawnHelper(std::vector<std::string> args) {
  args.insert(args.begin(), {MOEGEN_CACHE_HELPER, "--spec", specPath()});
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  Child c;
  EXPECT_EQ(posix_spawn(&c.pid, argv[0], &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  c.out = fds[0];
  return c;
}

struct Result {
  int status = 0;
  int warnings = 0;
  std::map<std::string, std::string> values; // "compiles" -> "1", "kernel 0" -> hash
  bool exitedOk() const { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }
  int64_t num(const std::string &k) const {
    auto it = values.find(k);
    int64_t v = -1;
    if (it != values.end())
      llvm::StringRef(it->second).getAsInteger(10, v);
    return v;
  }
};

Result finish(Child c) {
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(c.out, buf, sizeof(buf))) > 0)
    text.append(buf, size_t(n));
  ::close(c.out);
  Result r;
  ::waitpid(c.pid, &r.status, 0);
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(text).split(lines, '\n', -1, false);
  for (llvm::StringRef l : lines) {
    if (l.starts_with("moegen: warning:")) {
      ++r.warnings;
      continue;
    }
    auto [k, v] = l.rsplit(' ');
    r.values[k.str()] = v.str();
  }
  return r;
}

Result runHelper(std::vector<std::string> args) { return finish(spawnHelper(std::move(args))); }

TEST(MultiProcessCache, EightProcessesCompileEachKernelOnce) {
  test::TempDir dir;
  std::vector<Child> children;
  for (int p = 0; p < 8; ++p)
    children.push_back(spawnHelper({"--dir", dir.path, "--kernels", "0,1,2,3"}));
  std::vector<Result> results;
  for (Child &c : children)
    results.push_back(finish(c));
  int64_t compiles = 0, kernelsCompiled = 0, diskHits = 0;
  const int64_t perLayer = results[0].num("kernels-per-layer");
  ASSERT_GE(perLayer, 1);
  for (const Result &r : results) {
    ASSERT_TRUE(r.exitedOk()) << "status " << r.status;
    compiles += r.num("compiles");
    kernelsCompiled += r.num("kernels-compiled");
    diskHits += r.num("disk-hits");
    for (int k = 0; k < 4; ++k) {
      std::string name = "kernel " + std::to_string(k);
      ASSERT_EQ(r.values.count(name), 1u);
      EXPECT_EQ(r.values.at(name), results[0].values.at(name)) << name;
    }
  }
  // Each of the 4 layers, and so each of its kernels, was compiled by one
  // process; the 28 other requests were served from disk.
  EXPECT_EQ(compiles, 4);
  for (const Result &r : results)
    EXPECT_EQ(r.warnings, 0);
  EXPECT_EQ(kernelsCompiled, 4 * perLayer);
  EXPECT_EQ(diskHits, (8 * 4 - 4) * perLayer);
  cache::DiskCache disk(dir.path, {});
  auto listing = llvm::cantFail(disk.list());
  EXPECT_EQ(int64_t(listing.size()), 4 * perLayer);
  for (const auto &e : listing)
    EXPECT_TRUE(e.valid) << e.path << ": " << e.problem;
}

class KilledWriter : public ::testing::TestWithParam<const char *> {};

TEST_P(KilledWriter, LeavesNoEntryThatLoads) {
  test::TempDir dir;
  Result killed = runHelper({"--dir", dir.path, "--kernels", "0", "--kill-at", GetParam()});
  ASSERT_TRUE(WIFSIGNALED(killed.status));
  EXPECT_EQ(WTERMSIG(killed.status), SIGKILL);
  cache::DiskCache disk(dir.path, {});
  auto listing = llvm::cantFail(disk.list());
  ASSERT_EQ(listing.size(), 1u); // the temp file of the interrupted write
  EXPECT_FALSE(listing[0].valid);
  EXPECT_NE(listing[0].path.find(".tmp"), std::string::npos);

  // The next process compiles (the dead one's lock died with it), publishes,
  // and the one after loads.
  Result next = runHelper({"--dir", dir.path, "--kernels", "0"});
  ASSERT_TRUE(next.exitedOk());
  EXPECT_EQ(next.num("compiles"), 1);
  Result after = runHelper({"--dir", dir.path, "--kernels", "0"});
  ASSERT_TRUE(after.exitedOk());
  EXPECT_EQ(after.num("compiles"), 0);
  EXPECT_EQ(after.num("disk-hits"), after.num("kernels-per-layer"));
  EXPECT_EQ(after.values["kernel 0"], next.values["kernel 0"]);
  // The dead writer's temp file was swept under the lock.
  for (const auto &e : llvm::cantFail(disk.list()))
    EXPECT_TRUE(e.valid) << e.path << ": " << e.problem;
}

INSTANTIATE_TEST_SUITE_P(Stages, KilledWriter, ::testing::Values("partial", "written"));

TEST(MultiProcessCache, ACorruptEntryIsRebuiltByTheNextProcess) {
  test::TempDir dir;
  Result first = runHelper({"--dir", dir.path, "--kernels", "0"});
  ASSERT_TRUE(first.exitedOk());
  cache::DiskCache disk(dir.path, {});
  std::string path = llvm::cantFail(disk.list()).back().path;
  std::vector<uint8_t> bytes = test::readBytes(path);
  bytes.resize(bytes.size() - 1);
  test::writeBytes(path, bytes);
  Result second = runHelper({"--dir", dir.path, "--kernels", "0"});
  ASSERT_TRUE(second.exitedOk());
  EXPECT_EQ(second.num("compiles"), 1);
  EXPECT_GE(second.num("rejected"), 1);
  EXPECT_EQ(second.values["kernel 0"], first.values["kernel 0"]);
  for (const auto &e : llvm::cantFail(disk.list()))
    EXPECT_TRUE(e.valid) << e.path;
}

TEST(MultiProcessCache, AReadOnlyDirectoryIsReadButNotWritten) {
  test::TempDir dir;
  Result fill = runHelper({"--dir", dir.path, "--kernels", "0"});
  ASSERT_TRUE(fill.exitedOk());
  // Make the whole tree read-only; as root, the helper drops the
  // capabilities that bypass permission bits, so they apply to it too.
  auto chmodTree = [&](mode_t dirMode, mode_t fileMode) {
    std::error_code ec;
    for (llvm::sys::fs::recursive_directory_iterator it(dir.path, ec), end; it != end && !ec;
         it.increment(ec)) {
      bool isDir = it->type() == llvm::sys::fs::file_type::directory_file;
      EXPECT_EQ(::chmod(it->path().c_str(), isDir ? dirMode : fileMode), 0) << it->path();
    }
    EXPECT_EQ(::chmod(dir.path.c_str(), dirMode), 0);
  };
  chmodTree(0555, 0444);
  Result ro = runHelper({"--dir", dir.path, "--kernels", "0,1", "--permission-bits"});
  chmodTree(0755, 0644);
  ASSERT_TRUE(ro.exitedOk()) << "status " << ro.status;
  const int64_t perLayer = fill.num("kernels-per-layer");
  EXPECT_EQ(ro.values["disk-state"], "read-only");
  EXPECT_EQ(ro.warnings, 1);                // said once, although a compiled layer was not stored
  EXPECT_EQ(ro.num("disk-hits"), perLayer); // layer 0 from the read-only cache
  EXPECT_EQ(ro.num("compiles"), 1);         // layer 1 in memory only
  EXPECT_EQ(ro.values["kernel 0"], fill.values["kernel 0"]);
  cache::DiskCache disk(dir.path, {});
  EXPECT_EQ(int64_t(llvm::cantFail(disk.list()).size()), perLayer);
}

} // namespace
