//===- NpyTest.cpp - .npy files -------------------------------------------===//

#include "runtime/numerics/Npy.h"
#include "runtime/numerics/MxQuant.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

using namespace moegen::num;

namespace {

TEST(Npy, EncodeParseRoundTrip) {
  std::vector<int32_t> v = {1, -2, 3, 4, 5, 6};
  llvm::ArrayRef<uint8_t> bytes(reinterpret_cast<const uint8_t *>(v.data()), v.size() * 4);
  std::string npy = encodeNpy("<i4", {2, 3}, bytes);
  EXPECT_EQ(npy.substr(0, 6), "\x93NUMPY");
  size_t headerLen = static_cast<uint8_t>(npy[8]) | (static_cast<uint8_t>(npy[9]) << 8);
  EXPECT_EQ((10 + headerLen) % 64, 0u);
  EXPECT_NE(npy.find("'shape': (2, 3)"), std::string::npos);
  auto arr = parseNpy(npy, "mem");
  ASSERT_TRUE(!!arr) << llvm::toString(arr.takeError());
  EXPECT_EQ(arr->descr, "<i4");
  EXPECT_EQ(arr->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(arr->data, std::vector<uint8_t>(bytes.begin(), bytes.end()));
  // One-dimensional shapes keep the tuple comma.
  EXPECT_NE(encodeNpy("|u1", {5}, std::vector<uint8_t>(5)).find("(5,)"), std::string::npos);
}

TEST(Npy, ParseErrors) {
  auto bad = parseNpy("not numpy", "x.npy");
  ASSERT_FALSE(!!bad);
  EXPECT_NE(llvm::toString(bad.takeError()).find("x.npy: not a .npy file"), std::string::npos);
  std::string npy = encodeNpy("<f4", {4}, std::vector<uint8_t>(12));
  auto shortPayload = parseNpy(npy, "y.npy");
  ASSERT_FALSE(!!shortPayload);
  EXPECT_NE(llvm::toString(shortPayload.takeError()).find("payload has 12 bytes"),
            std::string::npos);
}

TEST(Npy, ShapeOverflowIsAnError) {
  // The element count times the element size overflowed int64 (test/fuzz
  // crash-npy-shape-overflow).
  std::string npy = encodeNpy("<f8", {1533349457418240000, 22}, {});
  auto arr = parseNpy(npy, "big.npy");
  ASSERT_FALSE(static_cast<bool>(arr));
  EXPECT_NE(llvm::toString(arr.takeError()).find("overflows"), std::string::npos);
  auto arr2 = parseNpy(encodeNpy("<f4", {int64_t(1) << 62, 4}, {}), "big2.npy");
  ASSERT_FALSE(static_cast<bool>(arr2));
  llvm::consumeError(arr2.takeError());
}

TEST(Npy, TensorsOnDisk) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("moegen-npy", dir));
  std::vector<float> v(2 * 64);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(i) * 0.01f - 0.6f;
  auto q = quantizeMx(v, {2, 64}, ElemFormat::MXFP4, ScaleRounding::RoundUp);
  ASSERT_TRUE(!!q);
  std::vector<std::string> files;
  ASSERT_FALSE(!!writeTensor(dir, "a", *q, &files));
  EXPECT_EQ(files.size(), 3u); // a.scales.npy, a.npy, a.json
  auto back = readTensor(dir, "a");
  ASSERT_TRUE(!!back) << llvm::toString(back.takeError());
  EXPECT_EQ(back->format, ElemFormat::MXFP4);
  EXPECT_EQ(back->shape, q->shape);
  EXPECT_EQ(back->data, q->data);
  EXPECT_EQ(back->scales, q->scales);
  HostTensor b = makeBf16({2, 64}, v);
  ASSERT_FALSE(!!writeTensor(dir, "b", b));
  auto bb = readTensor(dir, "b");
  ASSERT_TRUE(!!bb);
  EXPECT_EQ(bb->data, b.data);
  HostTensor f = makeF32({128}, v);
  ASSERT_FALSE(!!writeTensor(dir, "f", f));
  auto ff = readTensor(dir, "f");
  ASSERT_TRUE(!!ff);
  EXPECT_EQ(decode(*ff), v);
  llvm::sys::fs::remove_directories(dir);
}

/// A .npy header with `shape` written verbatim and no payload.
std::string npyWithShape(const std::string &shape) {
  std::string npy = encodeNpy("<f4", {1}, std::vector<uint8_t>(4));
  size_t at = npy.find("(1,)");
  npy.replace(at, 4, "(" + shape + ")");
  return npy.substr(0, npy.size() - 4);
}

std::string errorOf(llvm::Expected<NpyArray> a) { return a ? "" : llvm::toString(a.takeError()); }

TEST(Npy, ShapesThatOverflowAreErrors) {
  // 2^62 x 2^62 elements (and 3 x 3037000500^3 bytes) wrap an int64.
  EXPECT_EQ(errorOf(parseNpy(npyWithShape("4611686018427387904, 4611686018427387904,"), "h.npy")),
            "h.npy: shape (4611686018427387904, 4611686018427387904,) overflows a 64-bit byte "
            "count");
  EXPECT_NE(errorOf(parseNpy(npyWithShape("3037000500, 3037000500, 3037000500"), "o.npy"))
                .find("overflows"),
            std::string::npos);
  EXPECT_NE(errorOf(parseNpy(npyWithShape("1, 1, 1, 1, 1, 1, 1, 1, 1"), "r.npy"))
                .find("more than 8 dimensions"),
            std::string::npos);
  // A version-2 header claiming 4 GiB.
  std::string v2 = "\x93NUMPY\x02";
  v2 += '\0';
  v2 += std::string("\xff\xff\xff\xff", 4) + "{}";
  EXPECT_NE(errorOf(parseNpy(v2, "v2.npy")).find("v2.npy: header of 4294967295 bytes"),
            std::string::npos);
}

TEST(Npy, OnlyRegularFilesAreRead) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("moegen-npy", dir));
  EXPECT_EQ(errorOf(readNpy("/dev/zero")), "cannot read '/dev/zero': not a regular file");
  EXPECT_EQ(errorOf(readNpy(dir)), "cannot read '" + std::string(dir) + "': is a directory");
  std::string fifo = (dir + "/fifo.npy").str();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(errorOf(readNpy(fifo)), "cannot read '" + fifo + "': not a regular file");
  llvm::sys::fs::remove_directories(dir);
}

TEST(Npy, SideJsonNestingIsBounded) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("moegen-npy", dir));
  HostTensor b = makeBf16({2, 64}, std::vector<float>(128, 1.0f));
  ASSERT_FALSE(!!writeTensor(dir, "b", b));
  std::string json = (dir + "/b.json").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(json, ec);
    ASSERT_FALSE(ec);
    os << std::string(100000, '[') << std::string(100000, ']');
  }
  auto t = readTensor(dir, "b");
  ASSERT_FALSE(!!t);
  EXPECT_EQ(llvm::toString(t.takeError()),
            json + ": JSON nested 100000 levels deep, more than the limit of 64");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(json, ec);
    os << R"({"format": "bf16", "logical_shape": [4611686018427387904, 4]})";
  }
  auto big = readTensor(dir, "b");
  ASSERT_FALSE(!!big);
  EXPECT_NE(llvm::toString(big.takeError()).find("element count that overflows"),
            std::string::npos);
  llvm::sys::fs::remove_directories(dir);
}

} // namespace
