//===- Backend.cpp --------------------------------------------------------===//
#include "runtime/backend/Backend.h"

#include <cstring>

namespace moegen::runtime {

Backend::~Backend() = default;

KernargPacker &KernargPacker::addBytes(const void *Data, size_t Size, size_t Align) {
  size_t Off = (Bytes.size() + Align - 1) / Align * Align;
  Bytes.resize(Off + Size, 0);
  std::memcpy(Bytes.data() + Off, Data, Size);
  return *this;
}

} // namespace moegen::runtime
