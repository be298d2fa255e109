//===- EntryFormat.h - The on-disk format of one cached kernel --*- C++ -*-===//
//
// One self-describing file per kernel, little-endian:
//
//   offset 0   8 bytes  magic "MOEGENKO"
//          8   u32      format version (kEntryFormatVersion)
//         12   u32      reserved, 0
//         16   32 bytes the kernel's cache key
//         48   u64      payload size P
//         56   P bytes  payload: metadata (family, symbol, arguments, block
//                       size, dynamic shared memory, resources,
//                       description), code object, bitcode
//     56 + P   32 bytes BLAKE3 of bytes [0, 56 + P)
//
// A reader accepts an entry only if every check passes: size, magic,
// version, key, checksum, and a payload that parses exactly to its end.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_CACHE_ENTRYFORMAT_H
#define MOEGEN_RUNTIME_CACHE_ENTRYFORMAT_H

#include "runtime/cache/CacheKey.h"
#include "runtime/cache/KernelBinary.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace moegen::cache {

constexpr char kEntryMagic[8] = {'M', 'O', 'E', 'G', 'E', 'N', 'K', 'O'};
constexpr uint32_t kEntryFormatVersion = 2;
constexpr size_t kEntryHeaderBytes = 56;
constexpr size_t kEntryChecksumBytes = 32;

/// Why an entry was refused.
enum class EntryProblem {
  None,
  Truncated,
  BadMagic,
  ForeignVersion,
  KeyMismatch,
  Checksum,
  Malformed
};
llvm::StringRef toString(EntryProblem p);

std::vector<uint8_t> encodeEntry(const CacheKey &key, const KernelBinary &kernel);

struct DecodedEntry {
  CacheKey key;
  KernelBinary kernel;
};

/// Decodes and checks an entry. With `expected`, the key it carries must be
/// that one. On failure `problem` (when given) says which check failed.
llvm::Expected<DecodedEntry> decodeEntry(llvm::ArrayRef<uint8_t> bytes,
                                         const CacheKey *expected = nullptr,
                                         EntryProblem *problem = nullptr);

} // namespace moegen::cache

#endif // MOEGEN_RUNTIME_CACHE_ENTRYFORMAT_H
