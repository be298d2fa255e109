//===- EntryFormat.cpp - The on-disk format of one cached kernel ----------===//

#include "runtime/cache/EntryFormat.h"

#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/Endian.h"

#include <bit>
#include <cstring>

namespace moegen::cache {
namespace {

class Writer {
public:
  std::vector<uint8_t> bytes;
  void raw(const void *p, size_t n) {
    auto *b = static_cast<const uint8_t *>(p);
    bytes.insert(bytes.end(), b, b + n);
  }
  void u32(uint32_t v) {
    uint8_t b[4];
    llvm::support::endian::write32le(b, v);
    raw(b, 4);
  }
  void u64(uint64_t v) {
    uint8_t b[8];
    llvm::support::endian::write64le(b, v);
    raw(b, 8);
  }
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  void f64(double v) { u64(std::bit_cast<uint64_t>(v)); }
  void str(llvm::StringRef s) {
    u64(s.size());
    raw(s.data(), s.size());
  }
  void blob(const std::vector<uint8_t> &v) {
    u64(v.size());
    raw(v.data(), v.size());
  }
};

/// Bounds-checked reads; the first failure sticks.
class Reader {
public:
  explicit Reader(llvm::ArrayRef<uint8_t> b) : bytes(b) {}
  bool ok = true;
  bool atEnd() const { return pos == bytes.size(); }
  bool take(size_t n, const uint8_t *&p) {
    if (!ok || bytes.size() - pos < n)
      return ok = false;
    p = bytes.data() + pos;
    pos += n;
    return true;
  }
  uint64_t u64() {
    const uint8_t *p;
    return take(8, p) ? llvm::support::endian::read64le(p) : 0;
  }
  uint32_t u32() {
    const uint8_t *p;
    return take(4, p) ? llvm::support::endian::read32le(p) : 0;
  }
  int64_t i64() { return static_cast<int64_t>(u64()); }
  double f64() { return std::bit_cast<double>(u64()); }
  std::string str() {
    uint64_t n = u64();
    const uint8_t *p;
    if (!take(n, p))
      return {};
    return std::string(reinterpret_cast<const char *>(p), n);
  }
  std::vector<uint8_t> blob() {
    uint64_t n = u64();
    const uint8_t *p;
    if (!take(n, p))
      return {};
    return std::vector<uint8_t>(p, p + n);
  }

private:
  llvm::ArrayRef<uint8_t> bytes;
  size_t pos = 0;
};

void writeMeta(Writer &w, const KernelMeta &m) {
  w.str(toString(m.family).str());
  w.str(m.symbol);
  w.u64(m.args.size());
  for (const ArgInfo &a : m.args) {
    w.u32(static_cast<uint32_t>(a.kind));
    w.str(a.name);
  }
  for (int64_t v : {m.blockSize, m.dynamicSharedBytes, m.vgprs, m.agprs, m.sgprs, m.ldsBytes,
                    m.scratchBytes, m.vgprSpills, m.sgprSpills, m.kernargBytes, m.codeBytes})
    w.i64(v);
  w.f64(m.compileMs);
  w.str(m.description);
}

bool readMeta(Reader &r, KernelMeta &m) {
  std::optional<KernelFamily> family = parseKernelFamily(r.str());
  if (!family)
    return false;
  m.family = *family;
  m.symbol = r.str();
  uint64_t nargs = r.u64();
  if (!r.ok || nargs > 4096)
    return false;
  for (uint64_t i = 0; i < nargs; ++i) {
    uint32_t kind = r.u32();
    if (kind > static_cast<uint32_t>(ArgKind::F32))
      return false;
    m.args.push_back({r.str(), static_cast<ArgKind>(kind)});
  }
  for (int64_t *v : {&m.blockSize, &m.dynamicSharedBytes, &m.vgprs, &m.agprs, &m.sgprs, &m.ldsBytes,
                     &m.scratchBytes, &m.vgprSpills, &m.sgprSpills, &m.kernargBytes, &m.codeBytes})
    *v = r.i64();
  // (At most the largest per-block shared memory of any target, 227 KiB.)
  if (m.dynamicSharedBytes < 0 || m.dynamicSharedBytes > 227 * 1024)
    return false;
  m.compileMs = r.f64();
  m.description = r.str();
  return r.ok;
}

using Checksum = std::array<uint8_t, kEntryChecksumBytes>;

Checksum checksumOf(llvm::ArrayRef<uint8_t> bytes) {
  Checksum c;
  llvm::BLAKE3 h;
  h.update(bytes);
  h.final(c);
  return c;
}

} // namespace

llvm::StringRef toString(EntryProblem p) {
  switch (p) {
  case EntryProblem::None:
    return "valid";
  case EntryProblem::Truncated:
    return "truncated";
  case EntryProblem::BadMagic:
    return "not a moegen kernel entry (bad magic)";
  case EntryProblem::ForeignVersion:
    return "written by another entry format version";
  case EntryProblem::KeyMismatch:
    return "holds another key";
  case EntryProblem::Checksum:
    return "checksum mismatch";
  case EntryProblem::Malformed:
    return "malformed payload";
  }
  return "invalid";
}

std::vector<uint8_t> encodeEntry(const CacheKey &key, const KernelBinary &kernel) {
  Writer payload;
  writeMeta(payload, kernel.meta);
  payload.blob(kernel.hsaco);
  payload.blob(kernel.bitcode);

  Writer w;
  w.bytes.reserve(kEntryHeaderBytes + payload.bytes.size() + kEntryChecksumBytes);
  w.raw(kEntryMagic, sizeof(kEntryMagic));
  w.u32(kEntryFormatVersion);
  w.u32(0);
  w.raw(key.digest.data(), key.digest.size());
  w.u64(payload.bytes.size());
  w.raw(payload.bytes.data(), payload.bytes.size());
  Checksum c = checksumOf(w.bytes);
  w.raw(c.data(), c.size());
  return std::move(w.bytes);
}

llvm::Expected<DecodedEntry> decodeEntry(llvm::ArrayRef<uint8_t> bytes, const CacheKey *expected,
                                         EntryProblem *problem) {
  auto fail = [&](EntryProblem p, const llvm::Twine &detail) -> llvm::Error {
    if (problem)
      *problem = p;
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   toString(p) + (detail.isTriviallyEmpty() ? "" : ": ") + detail);
  };
  if (problem)
    *problem = EntryProblem::None;
  if (bytes.size() < sizeof(kEntryMagic) ||
      std::memcmp(bytes.data(), kEntryMagic, sizeof(kEntryMagic)) != 0)
    return bytes.size() < sizeof(kEntryMagic)
               ? fail(EntryProblem::Truncated, std::to_string(bytes.size()) + " bytes")
               : fail(EntryProblem::BadMagic, "");
  if (bytes.size() < kEntryHeaderBytes + kEntryChecksumBytes)
    return fail(EntryProblem::Truncated, std::to_string(bytes.size()) + " bytes");
  uint32_t version = llvm::support::endian::read32le(bytes.data() + 8);
  if (version != kEntryFormatVersion)
    return fail(EntryProblem::ForeignVersion, "version " + std::to_string(version) +
                                                  ", this moegen reads version " +
                                                  std::to_string(kEntryFormatVersion));
  DecodedEntry out;
  std::memcpy(out.key.digest.data(), bytes.data() + 16, 32);
  uint64_t payloadBytes = llvm::support::endian::read64le(bytes.data() + 48);
  uint64_t want = kEntryHeaderBytes + kEntryChecksumBytes;
  if (payloadBytes > bytes.size() || bytes.size() - want != payloadBytes)
    return fail(bytes.size() - want < payloadBytes ? EntryProblem::Truncated
                                                   : EntryProblem::Malformed,
                std::to_string(bytes.size()) + " bytes, the header says " +
                    std::to_string(want + payloadBytes));
  size_t body = kEntryHeaderBytes + payloadBytes;
  Checksum c = checksumOf(bytes.take_front(body));
  if (std::memcmp(c.data(), bytes.data() + body, c.size()) != 0)
    return fail(EntryProblem::Checksum, "");
  if (expected && !(out.key == *expected))
    return fail(EntryProblem::KeyMismatch, out.key.hex());
  Reader r(bytes.slice(kEntryHeaderBytes, payloadBytes));
  if (!readMeta(r, out.kernel.meta))
    return fail(EntryProblem::Malformed, "metadata");
  out.kernel.hsaco = r.blob();
  out.kernel.bitcode = r.blob();
  if (!r.ok || !r.atEnd())
    return fail(EntryProblem::Malformed, "code sections");
  return out;
}

} // namespace moegen::cache
