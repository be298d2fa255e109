//===- EntryFormatTest.cpp - The on-disk entry format ---------------------===//

#include "runtime/cache/EntryFormat.h"

#include "CacheTestUtil.h"

#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/Endian.h"

#include <algorithm>

using namespace moegen;
using namespace moegen::cache;

namespace {

CacheKey key(llvm::StringRef s) { return makeUnitKey("gfx950", s); }

TEST(EntryFormat, RoundTrips) {
  KernelBinary k = test::sampleKernel();
  CacheKey kk = key("a");
  std::vector<uint8_t> bytes = encodeEntry(kk, k);
  EXPECT_EQ(std::memcmp(bytes.data(), "MOEGENKO", 8), 0);
  auto d = decodeEntry(bytes, &kk);
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  EXPECT_EQ(d->kernel, k);
  EXPECT_EQ(d->key, kk);
}

TEST(EntryFormat, EveryTruncationIsRejected) {
  CacheKey kk = key("a");
  std::vector<uint8_t> bytes = encodeEntry(kk, test::sampleKernel());
  for (size_t n = 0; n < bytes.size(); ++n) {
    EntryProblem p;
    auto d = decodeEntry(llvm::ArrayRef(bytes).take_front(n), &kk, &p);
    ASSERT_FALSE(bool(d)) << "a prefix of " << n << " bytes was accepted";
    llvm::consumeError(d.takeError());
    EXPECT_EQ(p, EntryProblem::Truncated) << n;
  }
}

TEST(EntryFormat, EverySingleBitFlipIsRejected) {
  CacheKey kk = key("a");
  std::vector<uint8_t> bytes = encodeEntry(kk, test::sampleKernel());
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::vector<uint8_t> bad = bytes;
    bad[i] ^= uint8_t(1u << (i % 8));
    auto d = decodeEntry(bad, &kk);
    EXPECT_FALSE(bool(d)) << "a flip in byte " << i << " was accepted";
    llvm::consumeError(d.takeError());
  }
}

TEST(EntryFormat, ForeignVersionIsNamed) {
  CacheKey kk = key("a");
  std::vector<uint8_t> bytes = encodeEntry(kk, test::sampleKernel());
  llvm::support::endian::write32le(bytes.data() + 8, kEntryFormatVersion + 1);
  EntryProblem p;
  auto d = decodeEntry(bytes, &kk, &p);
  ASSERT_FALSE(bool(d));
  EXPECT_EQ(p, EntryProblem::ForeignVersion);
  EXPECT_NE(
      llvm::toString(d.takeError()).find("version " + std::to_string(kEntryFormatVersion + 1)),
      std::string::npos);
}

TEST(EntryFormat, DynamicSharedMemoryRoundTripsAndIsBounded) {
  CacheKey kk = key("a");
  KernelBinary k = test::sampleKernel();
  k.meta.dynamicSharedBytes = 96 * 1024;
  auto d = decodeEntry(encodeEntry(kk, k), &kk);
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  EXPECT_EQ(d->kernel.meta.dynamicSharedBytes, 96 * 1024);
  // More than any target's 227 KiB a workgroup, or negative: a malformed
  // entry (its checksum is right), never a launch.
  for (int64_t bad : {int64_t(227 * 1024 + 1), int64_t(-1)}) {
    k.meta.dynamicSharedBytes = bad;
    EntryProblem p;
    auto e = decodeEntry(encodeEntry(kk, k), &kk, &p);
    ASSERT_FALSE(bool(e)) << bad;
    llvm::consumeError(e.takeError());
    EXPECT_EQ(p, EntryProblem::Malformed) << bad;
  }
}

TEST(EntryFormat, AnotherKeysEntryIsRejected) {
  CacheKey a = key("a"), b = key("b");
  std::vector<uint8_t> bytes = encodeEntry(a, test::sampleKernel());
  EntryProblem p;
  auto d = decodeEntry(bytes, &b, &p);
  ASSERT_FALSE(bool(d));
  llvm::consumeError(d.takeError());
  EXPECT_EQ(p, EntryProblem::KeyMismatch);
}

TEST(EntryFormat, TrailingBytesAreRejected) {
  CacheKey kk = key("a");
  std::vector<uint8_t> bytes = encodeEntry(kk, test::sampleKernel());
  bytes.push_back(0);
  auto d = decodeEntry(bytes, &kk);
  EXPECT_FALSE(bool(d));
  llvm::consumeError(d.takeError());
}

TEST(CacheKey, EveryPartChangesTheKey) {
  CacheKey base = makeUnitKey("amdgcn-amd-amdhsa--gfx950;cov6", "spec");
  EXPECT_EQ(base, makeUnitKey("amdgcn-amd-amdhsa--gfx950;cov6", "spec"));
  EXPECT_NE(base, makeUnitKey("amdgcn-amd-amdhsa--gfx950;cov5", "spec"));
  EXPECT_NE(base, makeUnitKey("amdgcn-amd-amdhsa--gfx950;cov6", "spec "));
  // Field boundaries are unambiguous.
  EXPECT_NE(makeUnitKey("ab", "c"), makeUnitKey("a", "bc"));
  EXPECT_NE(makeKernelKey(base, KernelFamily::Sort, "s"),
            makeKernelKey(base, KernelFamily::Stage1, "s"));
  EXPECT_EQ(base.hex().size(), 64u);
  EXPECT_EQ(CacheKey::fromHex(base.hex()), base);
  EXPECT_FALSE(CacheKey::fromHex("zz"));
  EXPECT_FALSE(buildId().empty());
  EXPECT_NE(buildId().find('+'), llvm::StringRef::npos);
}

} // namespace

TEST(EntryFormat, EveryFamilyRoundTripsByName) {
  CacheKey kk = key("a");
  for (KernelFamily f : allKernelFamilies()) {
    KernelBinary k = test::sampleKernel(f);
    auto d = decodeEntry(encodeEntry(kk, k), &kk);
    ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
    EXPECT_EQ(d->kernel.meta.family, f) << toString(f).str();
  }
}

TEST(EntryFormat, UnknownFamilyNameIsMalformed) {
  // A well-formed entry (valid checksum) whose family name this moegen does
  // not know: never loaded as some other family.
  CacheKey kk = key("a");
  std::vector<uint8_t> bytes = encodeEntry(kk, test::sampleKernel(KernelFamily::Sort));
  const llvm::StringRef name = "sort";
  auto at = std::search(bytes.begin() + kEntryHeaderBytes, bytes.end(), name.begin(), name.end());
  ASSERT_NE(at, bytes.end());
  at[3] = 'x';
  size_t body = bytes.size() - kEntryChecksumBytes;
  std::array<uint8_t, kEntryChecksumBytes> sum;
  llvm::BLAKE3 h;
  h.update(llvm::ArrayRef(bytes).take_front(body));
  h.final(sum);
  std::memcpy(bytes.data() + body, sum.data(), sum.size());
  EntryProblem p;
  auto d = decodeEntry(bytes, &kk, &p);
  ASSERT_FALSE(bool(d));
  llvm::consumeError(d.takeError());
  EXPECT_EQ(p, EntryProblem::Malformed);
}
