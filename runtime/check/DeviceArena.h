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
  /// Every buffer has at least `minBytes`.
  explicit DeviceArena(runtime::Backend &b, size_t minBytes = 4) : b(b), minBytes(minBytes) {}
  DeviceArena(const DeviceArena &) = delete;
  DeviceArena &operator=(const DeviceArena &) = delete;
  ~DeviceArena() {
    for (runtime::DevicePtr p : owned)
      llvm::consumeError(b.free(p));
  }
  /// At least `minBytes`; filled with `fill` when `zero`.
  llvm::Expected<runtime::DevicePtr> alloc(size_t bytes, bool zero = true, uint8_t fill = 0) {
    auto p = b.allocate(std::max(bytes, minBytes));
    if (!p)
      return p.takeError();
    owned.push_back(*p);
    if (zero)
      if (llvm::Error e = b.memset(*p, fill, std::max(bytes, minBytes)))
        return std::move(e);
    return *p;
  }
  /// A buffer holding the `bytes` at `data` (zero-filled when there are none).
  llvm::Expected<runtime::DevicePtr> upload(const void *data, size_t bytes) {
    auto p = alloc(bytes, /*zero=*/bytes == 0);
    if (!p)
      return p.takeError();
    if (bytes)
      if (llvm::Error e = b.copyToDevice(*p, data, bytes))
        return std::move(e);
    return *p;
  }
  template <typename T> llvm::Expected<runtime::DevicePtr> upload(const std::vector<T> &host) {
    return upload(host.data(), host.size() * sizeof(T));
  }

private:
  runtime::Backend &b;
  size_t minBytes;
  std::vector<runtime::DevicePtr> owned;
};

} // namespace moegen

#endif // MOEGEN_RUNTIME_CHECK_DEVICEARENA_H
