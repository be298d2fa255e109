//===- FakeCuda.cpp - A stand-in libcuda for the cuda backend's tests -----===//
//
// Implements the driver entry points the backend resolves, on host memory,
// and records launches. A module is PTX text; its functions are the names
// after ".entry". FAKE_CUDA_CC (default 90) is the compute capability every
// device reports; FAKE_CUDA_DEVICES the device count (default 1);
// FAKE_CUDA_LAUNCH_MS ("part=ms,part=ms...") the device time of a launch
// whose kernel name contains `part` (the first that matches; default 1.5);
// FAKE_CUDA_RESOURCES ("part=registers:local,...") the registers and local
// bytes a thread that cuFuncGetAttribute reports for a function whose name
// contains `part` (the first that matches; default 32:0; static shared
// memory 0, the largest block 64K registers allow, at most 1024 threads);
// FAKE_CUDA_FAIL ("symbol=code,...") makes those entry points return `code`.
//
// Graphs: stream capture as FakeGraphs.h describes it.
//
//===----------------------------------------------------------------------===//

#include "test/unit/runtime/FakeGraphs.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using moegen::test::FakeFunction;
using moegen::test::FakeLaunch;

struct FakeModule {
  std::string ptx;
};

std::vector<FakeLaunch> launches;
double clockMs = 0; // the device time of the launches so far

/// The value after "part=" of the first rule of `env` ("part=value,...")
/// whose part `name` contains, or `fallback`.
std::string ruleFor(const char *env, const std::string &name, const std::string &fallback) {
  const char *spec = std::getenv(env);
  std::string rules = spec ? spec : "";
  for (size_t at = 0; at < rules.size();) {
    size_t end = rules.find(',', at);
    std::string rule = rules.substr(at, end == std::string::npos ? std::string::npos : end - at);
    size_t eq = rule.find('=');
    if (eq != std::string::npos && name.find(rule.substr(0, eq)) != std::string::npos)
      return rule.substr(eq + 1);
    if (end == std::string::npos)
      break;
    at = end + 1;
  }
  return fallback;
}

double launchMs(const std::string &name) {
  return std::atof(ruleFor("FAKE_CUDA_LAUNCH_MS", name, "1.5").c_str());
}

int envInt(const char *name, int fallback) {
  const char *v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

moegen::test::FakeGraphs graphs{"FAKE_CUDA_FAIL"};
using moegen::test::FakeNode;
using moegen::test::kFakeCaptureInvalidated;
using moegen::test::kFakeCaptureUnsupported;
using moegen::test::kFakeIllegalState;

int injectedFailure(const char *symbol) { return graphs.fail(symbol); }
int breaksCapture() { return graphs.breaksCapture(); }

void runMemset(unsigned long long dst, unsigned char v, size_t n) {
  std::memset(reinterpret_cast<void *>(dst), v, n);
}

void runLaunch(FakeLaunch l) {
  clockMs += launchMs(l.name);
  launches.push_back(std::move(l));
}

} // namespace

extern "C" {

using CUresult = int;

CUresult cuGetErrorName(CUresult e, const char **name) {
  *name = e == 2                         ? "CUDA_ERROR_OUT_OF_MEMORY"
          : e == 200                     ? "CUDA_ERROR_INVALID_IMAGE"
          : e == 500                     ? "CUDA_ERROR_NOT_FOUND"
          : e == kFakeIllegalState       ? "CUDA_ERROR_ILLEGAL_STATE"
          : e == kFakeCaptureUnsupported ? "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"
          : e == kFakeCaptureInvalidated ? "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"
                                         : "CUDA_ERROR_UNKNOWN";
  return 0;
}
CUresult cuGetErrorString(CUresult e, const char **text) {
  *text = e == 2                         ? "out of memory"
          : e == 200                     ? "device kernel image is invalid"
          : e == 500                     ? "named symbol not found"
          : e == kFakeIllegalState       ? "the operation cannot be performed in the present state"
          : e == kFakeCaptureUnsupported ? "operation not permitted when stream is capturing"
          : e == kFakeCaptureInvalidated ? "operation failed due to a previous error during capture"
                                         : "unknown error";
  return 0;
}
CUresult cuInit(unsigned) { return 0; }
CUresult cuDriverGetVersion(int *v) {
  *v = 13000;
  return 0;
}
CUresult cuDeviceGetCount(int *n) {
  *n = envInt("FAKE_CUDA_DEVICES", 1);
  return 0;
}
CUresult cuDeviceGet(int *d, int ordinal) {
  *d = ordinal;
  return 0;
}
CUresult cuDeviceGetName(char *name, int length, int) {
  std::strncpy(name, "Fake H200", length);
  return 0;
}
CUresult cuDeviceGetAttribute(int *value, int attribute, int) {
  int cc = envInt("FAKE_CUDA_CC", 90);
  *value = attribute == 75 ? cc / 10 : attribute == 76 ? cc % 10 : 132;
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(void **ctx, int) {
  static int context;
  *ctx = &context;
  return 0;
}
CUresult cuDevicePrimaryCtxRelease_v2(int) { return 0; }
CUresult cuCtxSetCurrent(void *) { return 0; }
CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned n, int *options,
                            void **values) {
  if (int e = breaksCapture())
    return e;
  std::string ptx(static_cast<const char *>(image));
  if (ptx.find(".target sm_90a") == std::string::npos) {
    for (unsigned i = 0; i < n; ++i) // the error log, as the driver fills it
      if (options[i] == 5)
        std::strcpy(static_cast<char *>(values[i]), "ptxas fatal: not sm_90a PTX");
    return 200;
  }
  *module = new FakeModule{ptx};
  return 0;
}
CUresult cuModuleUnload(void *module) {
  delete static_cast<FakeModule *>(module);
  return 0;
}
CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  if (static_cast<FakeModule *>(module)->ptx.find(std::string(".entry ") + name + "(") ==
      std::string::npos)
    return 500;
  *function = new FakeFunction{name}; // leaked: functions live as long as their module
  return 0;
}
CUresult cuFuncGetAttribute(int *value, int attribute, void *function) {
  if (int e = injectedFailure("cuFuncGetAttribute"))
    return e;
  std::string rule =
      ruleFor("FAKE_CUDA_RESOURCES", static_cast<FakeFunction *>(function)->name, "32:0");
  int registers = std::max(1, std::atoi(rule.c_str()));
  size_t colon = rule.find(':');
  int local = colon == std::string::npos ? 0 : std::atoi(rule.c_str() + colon + 1);
  switch (attribute) {
  case 0: // MAX_THREADS_PER_BLOCK
    *value = std::min(1024, 65536 / registers / 32 * 32);
    return 0;
  case 3: // LOCAL_SIZE_BYTES
    *value = local;
    return 0;
  case 4: // NUM_REGS
    *value = registers;
    return 0;
  default: // SHARED_SIZE_BYTES and the rest
    *value = 0;
    return 0;
  }
}
CUresult cuFuncSetAttribute(void *function, int attribute, int value) {
  if (attribute != 8 || value < 0 || value > 227 * 1024) // MAX_DYNAMIC_SHARED_SIZE_BYTES
    return 1;                                            // CUDA_ERROR_INVALID_VALUE
  auto *f = static_cast<FakeFunction *>(function);
  f->maxDynamicShared = static_cast<unsigned>(value);
  return 0;
}
/// cuda.h's CUlaunchAttribute (72 bytes) and CUlaunchConfig.
struct FakeLaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    int value;
  };
};
struct FakeLaunchConfig {
  unsigned grid[3], block[3], sharedMem;
  void *stream;
  FakeLaunchAttribute *attrs;
  unsigned numAttrs;
};
CUresult cuLaunchKernelEx(const FakeLaunchConfig *config, void *function, void **params,
                          void **extra) {
  if (!config || (config->numAttrs && !config->attrs))
    return 1; // CUDA_ERROR_INVALID_VALUE
  bool programmatic = false;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    // Only programmatic stream serialization (6), allowed or not, is expected.
    if (config->attrs[i].id != 6 || config->attrs[i].value > 1)
      return 1;
    programmatic = config->attrs[i].value == 1;
  }
  // As the driver: more than 48 KiB only after the kernel's opt-in.
  if (config->sharedMem > static_cast<FakeFunction *>(function)->maxDynamicShared)
    return 1;
  // Copied now, also when the launch is only recorded.
  std::optional<FakeLaunch> l = moegen::test::packedLaunch(
      function, config->grid, config->block, config->sharedMem, params, extra, nullptr);
  if (!l)
    return 1; // CUDA_ERROR_INVALID_VALUE: only the packed buffer form is expected
  l->programmatic = programmatic;
  if (!graphs.record(FakeNode{true, *l, 0, 0, 0}))
    runLaunch(std::move(*l));
  return 0;
}
CUresult cuMemAlloc_v2(unsigned long long *p, size_t bytes) {
  if (int e = breaksCapture())
    return e;
  if (bytes > (size_t(1) << 40))
    return 2;
  // 256-byte aligned, as the driver's allocations are.
  *p = reinterpret_cast<unsigned long long>(std::aligned_alloc(256, (bytes + 255) / 256 * 256));
  return 0;
}
CUresult cuMemFree_v2(unsigned long long p) {
  if (int e = breaksCapture())
    return e;
  std::free(reinterpret_cast<void *>(p));
  return 0;
}
CUresult cuMemcpyHtoDAsync_v2(unsigned long long dst, const void *src, size_t n, void *) {
  if (int e = breaksCapture())
    return e;
  std::memcpy(reinterpret_cast<void *>(dst), src, n);
  return 0;
}
CUresult cuMemcpyDtoHAsync_v2(void *dst, unsigned long long src, size_t n, void *) {
  if (int e = breaksCapture())
    return e;
  std::memcpy(dst, reinterpret_cast<void *>(src), n);
  return 0;
}
CUresult cuMemsetD8Async(unsigned long long dst, unsigned char v, size_t n, void *) {
  if (!graphs.record(FakeNode{false, {}, dst, v, n}))
    runMemset(dst, v, n);
  return 0;
}
CUresult cuStreamCreate(void **s, unsigned) {
  static int stream;
  *s = &stream;
  return 0;
}
CUresult cuStreamDestroy_v2(void *) { return 0; }
CUresult cuStreamSynchronize(void *) { return breaksCapture(); }
// Events read a clock that advances by each launch's time (launchMs); an
// event never recorded has no time (CUDA_ERROR_NOT_READY).
CUresult cuEventCreate(void **e, unsigned) {
  *e = new double(-1);
  return 0;
}
CUresult cuEventDestroy_v2(void *e) {
  delete static_cast<double *>(e);
  return 0;
}
CUresult cuEventRecord(void *e, void *) {
  if (int err = breaksCapture())
    return err;
  *static_cast<double *>(e) = clockMs;
  return 0;
}
CUresult cuEventSynchronize(void *) { return breaksCapture(); }
CUresult cuEventElapsedTime(float *ms, void *start, void *end) {
  double from = *static_cast<double *>(start), to = *static_cast<double *>(end);
  if (from < 0 || to < 0)
    return 600;
  *ms = static_cast<float>(to - from);
  return 0;
}

CUresult cuStreamBeginCapture_v2(void *, int mode) {
  return graphs.begin("cuStreamBeginCapture_v2", mode);
}
CUresult cuStreamEndCapture(void *, void **graph) {
  return graphs.end("cuStreamEndCapture", graph);
}
CUresult cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long) {
  return graphs.instantiate("cuGraphInstantiateWithFlags", exec, graph);
}
CUresult cuGraphLaunch(void *exec, void *) {
  return graphs.launch("cuGraphLaunch", exec, [](const FakeNode &n) {
    if (n.isLaunch)
      runLaunch(n.launch);
    else
      runMemset(n.dst, n.value, n.count);
  });
}
CUresult cuGraphExecDestroy(void *exec) { return graphs.destroy(exec); }
CUresult cuGraphDestroy(void *graph) { return graphs.destroy(graph); }

// For the test: the launches so far.
size_t fakeCudaLaunchCount() { return launches.size(); }
const char *fakeCudaLaunchName(size_t i) { return launches[i].name.c_str(); }
const unsigned *fakeCudaLaunchGrid(size_t i) { return launches[i].grid; }
const unsigned *fakeCudaLaunchBlock(size_t i) { return launches[i].block; }
unsigned fakeCudaLaunchShared(size_t i) { return launches[i].sharedMem; }
/// Whether launch i allowed programmatic stream serialization.
int fakeCudaLaunchProgrammatic(size_t i) { return launches[i].programmatic; }
size_t fakeCudaLaunchParams(size_t i, const unsigned char **bytes) {
  *bytes = launches[i].kernarg.data();
  return launches[i].kernarg.size();
}
/// Graphs and executable graphs not destroyed yet.
int fakeCudaLiveGraphs() { return graphs.liveGraphs(); }
size_t fakeCudaGraphLaunches() { return graphs.graphLaunches(); }

} // extern "C"
