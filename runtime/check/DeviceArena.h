//===- DeviceArena.h - Device buffers freed together ------------*- C++ -*-===//
//
// The buffers a check or a benchmark places on a backend for a while: each
// allocation (zero-filled, or filled with a byte, unless asked not to) and
// upload is freed when the arena goes.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_CHECK_DEVICEARENA_H
#define MOEGEN_RUNTIME_CHECK_DEVICEARENA_H

#include "runtime/backend/Backend.h"

#include <algorithm>
#include <vector>

namespace moegen {

class DeviceArena {
public:
  explicit DeviceArena(runtime::Backend &b) : b(b) {}
  DeviceArena(const DeviceArena &) = delete;
  DeviceArena &operator=(const DeviceArena &) = delete;
  ~DeviceArena() {
    for (runtime::DevicePtr p : owned)
      llvm::consumeError(b.free(p));
  }
  /// At least 4 bytes; filled with `fill` when `zero`.
  llvm::Expected<runtime::DevicePtr> alloc(size_t bytes, bool zero = true, uint8_t fill = 0) {
    auto p = b.allocate(std::max<size_t>(bytes, 4));
    if (!p)
      return p.takeError();
    owned.push_back(*p);
    if (zero)
      if (llvm::Error e = b.memset(*p, fill, std::max<size_t>(bytes, 4)))
        return std::move(e);
    return *p;
  }
  template <typename T> llvm::Expected<runtime::DevicePtr> upload(const std::vector<T> &host) {
    auto p = alloc(host.size() * sizeof(T), /*zero=*/host.empty());
    if (!p)
      return p.takeError();
    if (!host.empty())
      if (llvm::Error e = b.copyToDevice(*p, host.data(), host.size() * sizeof(T)))
        return std::move(e);
    return *p;
  }

private:
  runtime::Backend &b;
  std::vector<runtime::DevicePtr> owned;
};

} // namespace moegen

#endif // MOEGEN_RUNTIME_CHECK_DEVICEARENA_H
