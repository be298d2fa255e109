//===- GlobalMemory.h - Registered host buffers seen as device memory ------===//
#ifndef MOEGEN_EMULATOR_GLOBALMEMORY_H
#define MOEGEN_EMULATOR_GLOBALMEMORY_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace moegen::emu {

/// Device addresses are virtual: each registered buffer gets its own range,
/// separated from its neighbours by an unmapped guard gap, so running past
/// the end of one buffer is always out of bounds.
class GlobalMemory {
public:
  struct Buffer {
    uint64_t Base;
    uint64_t Size;
    uint8_t *Host;
  };

  uint64_t add(void *Host, uint64_t Size);
  bool remove(uint64_t Base);
  /// Host pointer for [Addr, Addr+Bytes) inside one buffer, or nullptr.
  uint8_t *translate(uint64_t Addr, uint64_t Bytes) const {
    if (Last < Buffers.size()) {
      const Buffer &B = Buffers[Last];
      if (Addr >= B.Base && Addr - B.Base <= B.Size && Bytes <= B.Size - (Addr - B.Base))
        return B.Host + (Addr - B.Base);
    }
    return slowTranslate(Addr, Bytes);
  }
  /// Same, with a caller-owned lookup hint (for concurrent use).
  uint8_t *translate(uint64_t Addr, uint64_t Bytes, size_t &Hint) const {
    if (Hint < Buffers.size()) {
      const Buffer &B = Buffers[Hint];
      if (Addr >= B.Base && Addr - B.Base <= B.Size && Bytes <= B.Size - (Addr - B.Base))
        return B.Host + (Addr - B.Base);
    }
    const Buffer *B = find(Addr);
    if (!B || Bytes > B->Size - (Addr - B->Base))
      return nullptr;
    Hint = size_t(B - Buffers.data());
    return B->Host + (Addr - B->Base);
  }
  const Buffer *find(uint64_t Addr) const;
  const std::vector<Buffer> &buffers() const { return Buffers; }

private:
  uint8_t *slowTranslate(uint64_t Addr, uint64_t Bytes) const;
  std::vector<Buffer> Buffers; // sorted by Base
  mutable size_t Last = ~size_t(0);
  uint64_t Next = 0x100000000ull;
};

} // namespace moegen::emu

#endif
