//===- GlobalMemory.cpp ---------------------------------------------------===//
#include "emulator/GlobalMemory.h"

#include <algorithm>

namespace moegen::emu {

static constexpr uint64_t GuardGap = 1ull << 20;

uint64_t GlobalMemory::add(void *Host, uint64_t Size) {
  uint64_t Base = Next;
  Next = (Base + Size + GuardGap + 0xFFFF) & ~0xFFFFull;
  Buffers.push_back({Base, Size, static_cast<uint8_t *>(Host)});
  Last = ~size_t(0);
  return Base;
}

bool GlobalMemory::remove(uint64_t Base) {
  auto It =
      std::find_if(Buffers.begin(), Buffers.end(), [&](const Buffer &B) { return B.Base == Base; });
  if (It == Buffers.end())
    return false;
  Buffers.erase(It);
  Last = ~size_t(0);
  return true;
}

const GlobalMemory::Buffer *GlobalMemory::find(uint64_t Addr) const {
  auto It = std::upper_bound(Buffers.begin(), Buffers.end(), Addr,
                             [](uint64_t A, const Buffer &B) { return A < B.Base; });
  if (It == Buffers.begin())
    return nullptr;
  --It;
  return Addr - It->Base <= It->Size ? &*It : nullptr;
}

uint8_t *GlobalMemory::slowTranslate(uint64_t Addr, uint64_t Bytes) const {
  const Buffer *B = find(Addr);
  if (!B || Bytes > B->Size - (Addr - B->Base))
    return nullptr;
  Last = size_t(B - Buffers.data());
  return B->Host + (Addr - B->Base);
}

} // namespace moegen::emu
