//===- NpyTest.cpp - .npy files -------------------------------------------===//

#include "runtime/numerics/Npy.h"
#include "runtime/numerics/MxQuant.h"

#include "llvm/Support/FileSystem.h"

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

} // namespace
