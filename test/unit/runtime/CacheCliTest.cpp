//===- CacheCliTest.cpp - moegen cache ls | clear | prefill ---------------===//

#include "CacheTestUtil.h"

#include "runtime/cache/DiskCache.h"

#include <array>
#include <cstdio>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace moegen;

namespace {

std::string source(const std::string &rel) {
  const char *src = std::getenv("MOEGEN_SOURCE_DIR");
  return std::string(src ? src : ".") + "/" + rel;
}

/// Runs the driver with `args` (after the command `prefix`); returns its
/// exit status and output.
std::pair<int, std::string> cliWith(const std::string &prefix, const std::string &args) {
  std::string cmd = prefix + std::string(MOEGEN_CACHE_CLI) + " " + args + " 2>&1";
  FILE *p = ::popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
    out.append(buf.data(), n);
  int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::pair<int, std::string> cli(const std::string &args) { return cliWith("", args); }

TEST(CacheCli, PrefillListAndClear) {
  test::TempDir dir;
  std::string table = source("data/aiter-configs/kimik3_a4w4_tuned_fmoe.csv");
  std::string spec = source("examples/kimi_k3_tp8_a4w4.moe");
  auto [rc, out] =
      cli("prefill --dir " + dir.path + " --table " + table + " --spec " + spec + " -j 2");
  ASSERT_EQ(rc, 0) << out;
  // Every tier is served; 131072 through the table's tier fallback.
  EXPECT_NE(out.find("tier 1: tuned (" + table + ":2)"), std::string::npos) << out;
  EXPECT_NE(out.find("tier 131072: tuned"), std::string::npos) << out;
  EXPECT_NE(out.find("(tier 131072 -> 32768)"), std::string::npos) << out;
  EXPECT_NE(out.find("moe_sort_e896_k16_bm64"), std::string::npos) << out;
  cache::DiskCache disk(dir.path, {});
  size_t entries = llvm::cantFail(disk.list()).size();
  EXPECT_GE(entries, 10u);

  // A second prefill finds everything cached.
  auto [rc2, out2] = cli("prefill --dir " + dir.path + " --table " + table + " --spec " + spec);
  ASSERT_EQ(rc2, 0) << out2;
  EXPECT_NE(out2.find("prefill: 0 layer(s) compiled"), std::string::npos) << out2;

  auto [rc3, ls] = cli("ls --dir " + dir.path);
  ASSERT_EQ(rc3, 0) << ls;
  EXPECT_NE(ls.find(std::to_string(entries) + " file(s)"), std::string::npos) << ls;
  EXPECT_NE(ls.find("moe_sort_e896_k16_bm32"), std::string::npos) << ls;
  EXPECT_NE(ls.find("kimi_k3_tp8_a4w4 for amdgcn-amd-amdhsa--gfx950;cov6"), std::string::npos);
  EXPECT_EQ(ls.find("INVALID"), std::string::npos) << ls;

  // A damaged entry shows up as such.
  std::string victim = llvm::cantFail(disk.list()).at(0).path;
  test::writeBytes(victim, {1, 2, 3});
  auto [rc4, ls2] = cli("ls --dir " + dir.path);
  EXPECT_NE(ls2.find("INVALID: truncated"), std::string::npos) << ls2;

  auto [rc5, cleared] = cli("clear --dir " + dir.path);
  ASSERT_EQ(rc5, 0) << cleared;
  EXPECT_TRUE(llvm::cantFail(disk.list()).empty());
}

TEST(CacheCli, ListOfAMissingCacheCreatesNothing) {
  test::TempDir dir;
  std::string root = dir.path + "/never-created";
  auto [rc, out] = cli("ls --dir " + root);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("does not exist (nothing cached)"), std::string::npos) << out;
  EXPECT_FALSE(llvm::sys::fs::exists(root));
  auto [rc2, out2] = cli("clear --dir " + root);
  EXPECT_EQ(rc2, 0) << out2;
  EXPECT_FALSE(llvm::sys::fs::exists(root));
}

TEST(CacheCli, ListOfAnUnreadableCacheFails) {
  test::TempDir dir;
  // A path through a regular file cannot be read, even by root.
  test::writeBytes(dir.path + "/file", {1});
  std::string root = dir.path + "/file/cache";
  auto [rc, out] = cli("ls --dir " + root);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("error"), std::string::npos) << out;
  EXPECT_NE(out.find(root), std::string::npos) << out;
  EXPECT_NE(out.find("Not a directory"), std::string::npos) << out;
}

TEST(CacheCli, ListOfAMode000CacheFails) {
  test::TempDir dir;
  ASSERT_FALSE(bool(llvm::sys::fs::create_directories(test::versionDir(dir.path))));
  ::chmod(test::versionDir(dir.path).c_str(), 0);
  // Root bypasses permission bits through CAP_DAC_*: run the driver without
  // them (util-linux setpriv) so the mode applies.
  std::string prefix =
      ::geteuid() == 0 ? "setpriv --bounding-set -dac_override,-dac_read_search " : "";
  auto [rc, out] = cliWith(prefix, "ls --dir " + dir.path);
  ::chmod(test::versionDir(dir.path).c_str(), 0700);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find(test::versionDir(dir.path)), std::string::npos) << out;
}

TEST(CacheCli, ListOfAWorldWritableCacheFails) {
  test::TempDir dir;
  ::chmod(dir.path.c_str(), 0777);
  ASSERT_FALSE(bool(llvm::sys::fs::create_directories(test::versionDir(dir.path))));
  auto [rc, out] = cli("ls --dir " + dir.path);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("'" + dir.path + "': it is writable by group or others (mode 0777)"),
            std::string::npos)
      << out;
}

TEST(CacheCli, PrefillWithoutASpecSaysWhy) {
  test::TempDir dir;
  auto [rc, out] = cli("prefill --dir " + dir.path + " --table x.csv");
  EXPECT_EQ(rc, 1);
  EXPECT_NE(out.find("prefill needs --spec"), std::string::npos) << out;
  auto [rc2, out2] = cli("frobnicate");
  EXPECT_EQ(rc2, 2);
  EXPECT_NE(out2.find("usage: moegen cache"), std::string::npos) << out2;
}

} // namespace
