//===- CacheTestUtil.h - Helpers of the cache tests -------------*- C++ -*-===//
#ifndef MOEGEN_TEST_UNIT_RUNTIME_CACHETESTUTIL_H
#define MOEGEN_TEST_UNIT_RUNTIME_CACHETESTUTIL_H

#include "runtime/cache/EntryFormat.h"
#include "runtime/cache/KernelBinary.h"
#include "runtime/cache/Log.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <fstream>
#include <mutex>
#include <sys/stat.h>
#include <vector>

namespace moegen::test {

/// A fresh directory, removed with everything in it at the end.
class TempDir {
public:
  TempDir() {
    llvm::SmallString<128> p;
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("moegen-cache-test", p));
    path = std::string(p);
    ::chmod(path.c_str(), 0755); // not group-writable: a cache directory moegen uses
  }
  ~TempDir() {
    makeWritable(path);
    llvm::sys::fs::remove_directories(path);
  }
  static void makeWritable(const std::string &dir) {
    std::error_code ec;
    ::chmod(dir.c_str(), 0755);
    for (llvm::sys::fs::recursive_directory_iterator it(dir, ec), end; it != end && !ec;
         it.increment(ec))
      ::chmod(it->path().c_str(), 0755);
  }
  std::string path;
};

/// Collects warnings instead of printing them.
struct LogCapture {
  std::mutex m;
  std::vector<std::string> lines;
  runtime::LogHandler handler() {
    return [this](runtime::LogLevel, llvm::StringRef msg) {
      std::lock_guard<std::mutex> lock(m);
      lines.push_back(msg.str());
    };
  }
  size_t count(llvm::StringRef needle) {
    std::lock_guard<std::mutex> lock(m);
    size_t n = 0;
    for (const std::string &l : lines)
      n += llvm::StringRef(l).contains(needle);
    return n;
  }
};

inline cache::KernelBinary sampleKernel(KernelFamily family = KernelFamily::Sort,
                                        llvm::StringRef symbol = "moe_sort_e8_k2_bm32") {
  cache::KernelBinary k;
  k.meta.family = family;
  k.meta.symbol = symbol.str();
  k.meta.args = {{"topk_ids", cache::ArgKind::Pointer}, {"tokens", cache::ArgKind::I32}};
  k.meta.blockSize = 256;
  k.meta.vgprs = 12;
  k.meta.ldsBytes = 64;
  k.meta.compileMs = 12.5;
  k.meta.description = "test for gfx950";
  for (int i = 0; i < 200; ++i)
    k.hsaco.push_back(uint8_t(i * 7));
  for (int i = 0; i < 100; ++i)
    k.bitcode.push_back(uint8_t(i * 13 + 1));
  return k;
}

/// The directory of this entry format's files under a cache root.
inline std::string versionDir(const std::string &root) {
  return root + "/v" + std::to_string(cache::kEntryFormatVersion);
}

inline std::vector<uint8_t> readBytes(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

inline void writeBytes(const std::string &path, const std::vector<uint8_t> &b) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char *>(b.data()), std::streamsize(b.size()));
}

} // namespace moegen::test

#endif // MOEGEN_TEST_UNIT_RUNTIME_CACHETESTUTIL_H
