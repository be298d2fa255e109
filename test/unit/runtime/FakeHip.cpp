//===- FakeHip.cpp - A stand-in libamdhip64 for the HIP backend's tests ---===//
//
// Implements the HIP entry points the backend resolves, on host memory, and
// records launches. FAKE_HIP_ARCH (default "gfx950:sramecc+:xnack-") is the
// architecture every device reports; FAKE_HIP_DEVICES the device count;
// FAKE_HIP_FAIL ("symbol=code,...") makes the graph entry points return
// `code`. Graphs: stream capture as FakeGraphs.h describes it.
//
//===----------------------------------------------------------------------===//

#include "test/unit/runtime/FakeGraphs.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <elf.h>
#include <string>
#include <vector>

namespace {

using moegen::test::FakeFunction;
using moegen::test::FakeLaunch;

struct FakeModule {
  const unsigned char *image;
  size_t size;
};

std::vector<FakeLaunch> launches;
moegen::test::FakeGraphs graphs{"FAKE_HIP_FAIL"};
using moegen::test::FakeNode;
using moegen::test::kFakeCaptureInvalidated;
using moegen::test::kFakeCaptureUnsupported;
using moegen::test::kFakeIllegalState;

void runMemset(unsigned long long dst, unsigned char v, size_t n) {
  std::memset(reinterpret_cast<void *>(dst), v, n);
}

} // namespace

extern "C" {

using hipError_t = int;

const char *hipGetErrorString(hipError_t e) {
  switch (e) {
  case 0:
    return "no error";
  case 2:
    return "out of memory";
  case 200:
    return "device kernel image is invalid";
  case 500:
    return "named symbol not found";
  case kFakeIllegalState:
    return "the operation cannot be performed in the present state";
  case kFakeCaptureUnsupported:
    return "operation not permitted when stream is capturing";
  case kFakeCaptureInvalidated:
    return "operation failed due to a previous error during capture";
  default:
    return "unknown error";
  }
}

const char *hipGetErrorName(hipError_t e) {
  switch (e) {
  case 0:
    return "hipSuccess";
  case 2:
    return "hipErrorOutOfMemory";
  case 200:
    return "hipErrorInvalidImage";
  case 500:
    return "hipErrorNotFound";
  case kFakeIllegalState:
    return "hipErrorIllegalState";
  case kFakeCaptureUnsupported:
    return "hipErrorStreamCaptureUnsupported";
  case kFakeCaptureInvalidated:
    return "hipErrorStreamCaptureInvalidated";
  default:
    return "hipErrorUnknown";
  }
}

hipError_t hipInit(unsigned) { return 0; }

hipError_t hipGetDeviceCount(int *count) {
  const char *n = std::getenv("FAKE_HIP_DEVICES");
  *count = n ? std::atoi(n) : 1;
  return 0;
}

hipError_t hipSetDevice(int) { return 0; }

hipError_t hipGetDevicePropertiesR0600(void *props, int device) {
  const char *arch = std::getenv("FAKE_HIP_ARCH");
  std::strncpy(static_cast<char *>(props) + 1160, arch ? arch : "gfx950:sramecc+:xnack-", 255);
  return 0;
}

hipError_t hipModuleLoadData(void **module, const void *image) {
  if (int e = graphs.breaksCapture())
    return e;
  auto *p = static_cast<const unsigned char *>(image);
  if (std::memcmp(p, ELFMAG, SELFMAG) != 0)
    return 200;
  // The image's extent: the section header table ends it.
  Elf64_Ehdr h;
  std::memcpy(&h, p, sizeof(h));
  *module = new FakeModule{p, size_t(h.e_shoff) + size_t(h.e_shnum) * h.e_shentsize};
  return 0;
}

hipError_t hipModuleUnload(void *module) {
  delete static_cast<FakeModule *>(module);
  return 0;
}

hipError_t hipModuleGetFunction(void **function, void *module, const char *name) {
  auto *m = static_cast<FakeModule *>(module);
  size_t n = std::strlen(name) + 1; // with the NUL of the string table
  if (!memmem(m->image, m->size, name, n))
    return 500;
  *function = new FakeFunction{name}; // leaked: tests are short
  return 0;
}

hipError_t hipModuleLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                 unsigned by, unsigned bz, unsigned shared, void *stream,
                                 void **params, void **extra) {
  const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  std::optional<FakeLaunch> l = moegen::test::packedLaunch(f, grid, block, shared, params, extra,
                                                           reinterpret_cast<void *>(3));
  if (!l)
    return 1;
  if (!graphs.record(FakeNode{true, *l, 0, 0, 0}))
    launches.push_back(std::move(*l));
  return 0;
}

hipError_t hipMalloc(void **p, size_t bytes) {
  if (int e = graphs.breaksCapture())
    return e;
  if (bytes > (size_t(1) << 40))
    return 2;
  *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  return 0;
}

hipError_t hipFree(void *p) {
  if (int e = graphs.breaksCapture())
    return e;
  std::free(p);
  return 0;
}

hipError_t hipMemcpyHtoDAsync(void *dst, const void *src, size_t bytes, void *) {
  if (int e = graphs.breaksCapture())
    return e;
  std::memcpy(dst, src, bytes);
  return 0;
}

hipError_t hipMemcpyDtoHAsync(void *dst, void *src, size_t bytes, void *) {
  if (int e = graphs.breaksCapture())
    return e;
  std::memcpy(dst, src, bytes);
  return 0;
}

hipError_t hipMemsetD8Async(void *dst, unsigned char v, size_t n, void *) {
  auto at = reinterpret_cast<unsigned long long>(dst);
  if (!graphs.record(FakeNode{false, {}, at, v, n}))
    runMemset(at, v, n);
  return 0;
}

hipError_t hipStreamCreateWithFlags(void **stream, unsigned) {
  static int token;
  *stream = &token;
  return 0;
}

hipError_t hipStreamDestroy(void *) { return 0; }
hipError_t hipStreamSynchronize(void *) { return graphs.breaksCapture(); }

// Events read a clock that advances 2 ms per launch; an event never
// recorded has no time (hipErrorNotReady).
hipError_t hipEventCreate(void **e) {
  *e = new long(-1);
  return 0;
}
hipError_t hipEventDestroy(void *e) {
  delete static_cast<long *>(e);
  return 0;
}
hipError_t hipEventRecord(void *e, void *) {
  if (int err = graphs.breaksCapture())
    return err;
  *static_cast<long *>(e) = static_cast<long>(launches.size());
  return 0;
}
hipError_t hipEventSynchronize(void *) { return graphs.breaksCapture(); }
hipError_t hipEventElapsedTime(float *ms, void *start, void *end) {
  long from = *static_cast<long *>(start), to = *static_cast<long *>(end);
  if (from < 0 || to < 0)
    return 600;
  *ms = 2.0f * static_cast<float>(to - from);
  return 0;
}

hipError_t hipStreamBeginCapture(void *, int mode) {
  return graphs.begin("hipStreamBeginCapture", mode);
}
hipError_t hipStreamEndCapture(void *, void **graph) {
  return graphs.end("hipStreamEndCapture", graph);
}
hipError_t hipGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long) {
  return graphs.instantiate("hipGraphInstantiateWithFlags", exec, graph);
}
hipError_t hipGraphLaunch(void *exec, void *) {
  return graphs.launch("hipGraphLaunch", exec, [](const FakeNode &n) {
    if (n.isLaunch)
      launches.push_back(n.launch);
    else
      runMemset(n.dst, n.value, n.count);
  });
}
hipError_t hipGraphExecDestroy(void *exec) { return graphs.destroy(exec); }
hipError_t hipGraphDestroy(void *graph) { return graphs.destroy(graph); }

// For the tests: the launches so far, the graphs not destroyed and the
// graph launches.
int fakeHipLiveGraphs() { return graphs.liveGraphs(); }
size_t fakeHipGraphLaunches() { return graphs.graphLaunches(); }
int fakeHipLaunchCount() { return static_cast<int>(launches.size()); }
const char *fakeHipLaunchName(int i) { return launches[i].name.c_str(); }
const unsigned *fakeHipLaunchGrid(int i) { return launches[i].grid; }
const unsigned *fakeHipLaunchBlock(int i) { return launches[i].block; }
const unsigned char *fakeHipLaunchKernarg(int i, size_t *size) {
  *size = launches[i].kernarg.size();
  return launches[i].kernarg.data();
}

} // extern "C"
