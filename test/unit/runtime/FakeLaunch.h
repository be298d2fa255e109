//===- FakeLaunch.h - The launches a stand-in driver records ----*- C++ -*-===//
//
// FakeHip.cpp and FakeCuda.cpp stand in for libamdhip64 and libcuda in the
// backends' tests. Both take a launch's kernel arguments only as one packed
// buffer, {BUFFER_POINTER, buffer, BUFFER_SIZE, &size, END}, the form the
// backends pass, and record the launch for the test to read back.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEST_UNIT_RUNTIME_FAKELAUNCH_H
#define MOEGEN_TEST_UNIT_RUNTIME_FAKELAUNCH_H

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace moegen::test {

/// What a fake module's function handle points at.
struct FakeFunction {
  std::string name;
  unsigned maxDynamicShared = 48 * 1024; // raised by cuFuncSetAttribute (cuda)
};

struct FakeLaunch {
  std::string name;
  unsigned grid[3], block[3], sharedMem;
  std::vector<unsigned char> kernarg;
  bool programmatic = false; // cuda: launched with programmatic stream serialization
};

/// The launch of `function` (a FakeFunction); none when its arguments are not
/// the packed buffer that `end`, the driver's end marker, closes. The
/// arguments are copied now, as the driver does: the caller may reuse its
/// buffer on return.
inline std::optional<FakeLaunch> packedLaunch(void *function, const unsigned grid[3],
                                              const unsigned block[3], unsigned sharedMem,
                                              void **params, void **extra, void *end) {
  if (params || !extra || extra[0] != reinterpret_cast<void *>(1) ||
      extra[2] != reinterpret_cast<void *>(2) || extra[4] != end)
    return std::nullopt;
  FakeLaunch l{static_cast<FakeFunction *>(function)->name,
               {grid[0], grid[1], grid[2]},
               {block[0], block[1], block[2]},
               sharedMem,
               {}};
  auto *bytes = static_cast<unsigned char *>(extra[1]);
  l.kernarg.assign(bytes, bytes + *static_cast<size_t *>(extra[3]));
  return l;
}

} // namespace moegen::test

#endif // MOEGEN_TEST_UNIT_RUNTIME_FAKELAUNCH_H
