//===- HipBackend.cpp - The backend for real gfx950 devices ---------------===//

#include "runtime/hip/HipBackend.h"

#include "runtime/backend/DeviceChoice.h"
#include "runtime/backend/DriverHandles.h"
#include "runtime/hip/HipApi.h"

#include "llvm/ADT/StringRef.h"

#include <cstring>
#include <vector>

using namespace moegen::hip;

namespace moegen::runtime {
namespace {

llvm::Error hipError(const HipApi &api, hipError_t e, const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "hip backend: " + what + " failed: " + api.errorText(e));
}

/// The architecture HIP reports for a device: "gfx950:sramecc+:xnack-".
llvm::Expected<std::string> deviceArch(const HipApi &api, int device) {
  alignas(16) char props[kDevicePropBufferBytes] = {};
  if (hipError_t e = api.hipGetDevicePropertiesR0600(props, device); e != hipSuccess)
    return hipError(api, e, "hipGetDeviceProperties(" + llvm::Twine(device) + ")");
  const char *arch = props + kDevicePropGcnArchNameOffset;
  return std::string(arch, strnlen(arch, 256));
}

class HipBackend final : public Backend {
public:
  HipBackend(const HipApi &api, int device, hipStream_t stream, bool ownsStream)
      : api(api), device(device), stream(stream), ownsStream(ownsStream) {}

  ~HipBackend() override {
    api.hipSetDevice(device);
    for (hipGraphExec_t g : handles.allGraphs())
      if (g)
        api.hipGraphExecDestroy(g);
    for (hipModule_t m : handles.allModules())
      api.hipModuleUnload(m);
    for (DevicePtr p : handles.allAllocations())
      api.hipFree(reinterpret_cast<void *>(p));
    for (hipEvent_t e : handles.allEvents())
      api.hipEventDestroy(e);
    if (ownsStream)
      api.hipStreamDestroy(stream);
  }

  llvm::StringRef name() const override { return "hip"; }

  llvm::Expected<ModuleHandle> loadCode(const CodeBundle &code) override {
    if (llvm::Error e = handles.checkLoadable(code))
      return std::move(e);
    if (llvm::Error e = handles.refuseWhileCapturing("loading code object '" + code.Name + "'"))
      return std::move(e);
    api.hipSetDevice(device);
    hipModule_t m = nullptr;
    if (hipError_t e = api.hipModuleLoadData(&m, code.Hsaco.data()); e != hipSuccess)
      return hipError(api, e,
                      "loading code object '" + code.Name +
                          "' (built for a chip or target "
                          "features this device lacks?)");
    return handles.addModule(m);
  }

  llvm::Expected<KernelHandle> getKernel(ModuleHandle m, llvm::StringRef symbol) override {
    auto module = handles.module(m);
    if (!module)
      return module.takeError();
    std::string name = symbol.ends_with(".kd") ? symbol.drop_back(3).str() : symbol.str();
    hipFunction_t f = nullptr;
    if (hipError_t e = api.hipModuleGetFunction(&f, *module, name.c_str()); e != hipSuccess)
      return hipError(api, e, "hipModuleGetFunction('" + name + "')");
    return handles.addKernel(f, name);
  }

  llvm::Expected<DevicePtr> allocate(size_t bytes) override {
    if (llvm::Error e =
            handles.refuseWhileCapturing("allocation of " + llvm::Twine(bytes) + " bytes"))
      return std::move(e);
    api.hipSetDevice(device);
    void *p = nullptr;
    if (hipError_t e = api.hipMalloc(&p, bytes ? bytes : 1); e != hipSuccess)
      return hipError(api, e, "hipMalloc(" + llvm::Twine(bytes) + ")");
    handles.addAllocation(reinterpret_cast<DevicePtr>(p));
    return reinterpret_cast<DevicePtr>(p);
  }

  llvm::Error free(DevicePtr p) override {
    if (llvm::Error e = handles.refuseWhileCapturing("free"))
      return e;
    if (llvm::Error e = handles.removeAllocation(p))
      return e;
    if (hipError_t e = api.hipFree(reinterpret_cast<void *>(p)); e != hipSuccess)
      return hipError(api, e, "hipFree");
    return llvm::Error::success();
  }

  llvm::Error copyToDevice(DevicePtr dst, const void *src, size_t bytes) override {
    if (llvm::Error e =
            handles.refuseWhileCapturing("copy of " + llvm::Twine(bytes) + " bytes to the device"))
      return e;
    if (hipError_t e = api.hipMemcpyHtoDAsync(reinterpret_cast<void *>(dst), src, bytes, stream);
        e != hipSuccess)
      return hipError(api, e, "copy of " + llvm::Twine(bytes) + " bytes to the device");
    return sync("copy to the device"); // the source may be reused on return
  }

  llvm::Error copyToHost(void *dst, DevicePtr src, size_t bytes) override {
    if (llvm::Error e =
            handles.refuseWhileCapturing("copy of " + llvm::Twine(bytes) + " bytes to the host"))
      return e;
    if (hipError_t e = api.hipMemcpyDtoHAsync(dst, reinterpret_cast<void *>(src), bytes, stream);
        e != hipSuccess)
      return hipError(api, e, "copy of " + llvm::Twine(bytes) + " bytes to the host");
    return sync("copy to the host");
  }

  llvm::Error memset(DevicePtr dst, uint8_t value, size_t bytes) override {
    if (hipError_t e = api.hipMemsetD8Async(reinterpret_cast<void *>(dst), value, bytes, stream);
        e != hipSuccess)
      return hipError(api, e, "memset of " + llvm::Twine(bytes) + " bytes");
    return llvm::Error::success();
  }

  llvm::Error launch(const KernelHandle &k, Dim3 grid, Dim3 block, uint32_t dynamicLds,
                     llvm::ArrayRef<uint8_t> kernarg) override {
    auto f = handles.kernel(k);
    if (!f)
      return f.takeError();
    size_t size = kernarg.size();
    void *config[] = {kLaunchParamBufferPointer, const_cast<uint8_t *>(kernarg.data()),
                      kLaunchParamBufferSize, &size, kLaunchParamEnd};
    if (hipError_t e = api.hipModuleLaunchKernel(*f, grid.X, grid.Y, grid.Z, block.X, block.Y,
                                                 block.Z, dynamicLds, stream, nullptr, config);
        e != hipSuccess)
      return hipError(api, e, "launch of '" + k.Symbol + "'");
    return llvm::Error::success();
  }

  llvm::Error synchronize() override {
    if (llvm::Error e = handles.refuseWhileCapturing("synchronize"))
      return e;
    return sync("synchronize");
  }

  llvm::Expected<EventHandle> createEvent() override {
    api.hipSetDevice(device);
    hipEvent_t event = nullptr;
    if (hipError_t e = api.hipEventCreate(&event); e != hipSuccess)
      return hipError(api, e, "hipEventCreate");
    return handles.addEvent(event);
  }

  llvm::Error recordEvent(EventHandle h) override {
    // A recorded event would mark the capture, not the replays: no timing.
    if (llvm::Error e = handles.refuseWhileCapturing("recording an event"))
      return e;
    auto event = handles.event(h);
    if (!event)
      return event.takeError();
    if (hipError_t e = api.hipEventRecord(*event, stream); e != hipSuccess)
      return hipError(api, e, "hipEventRecord");
    return llvm::Error::success();
  }

  llvm::Expected<float> elapsedMs(EventHandle start, EventHandle end) override {
    if (llvm::Error e = handles.refuseWhileCapturing("waiting for an event"))
      return std::move(e);
    auto events = handles.eventPair(start, end);
    if (!events)
      return events.takeError();
    auto [from, to] = *events;
    if (hipError_t e = api.hipEventSynchronize(to); e != hipSuccess)
      return hipError(api, e, "hipEventSynchronize");
    float ms = 0;
    if (hipError_t e = api.hipEventElapsedTime(&ms, from, to); e != hipSuccess)
      return hipError(api, e, "hipEventElapsedTime");
    return ms;
  }

  llvm::Expected<GraphHandle> captureGraph(llvm::function_ref<llvm::Error()> record) override {
    return handles.captureGraph<hipGraph_t>(
        record,
        [&] {
          api.hipSetDevice(device);
          return check(api.hipStreamBeginCapture(stream, hipStreamCaptureModeThreadLocal),
                       "hipStreamBeginCapture");
        },
        [&](hipGraph_t &graph) {
          return check(api.hipStreamEndCapture(stream, &graph),
                       "hipStreamEndCapture (the recorded work had a call that a graph cannot "
                       "hold)");
        },
        [&](hipGraph_t graph) -> llvm::Expected<hipGraphExec_t> {
          hipGraphExec_t exec = nullptr;
          if (llvm::Error e = check(api.hipGraphInstantiateWithFlags(&exec, graph, 0),
                                    "hipGraphInstantiateWithFlags"))
            return std::move(e);
          return exec;
        },
        [&](hipGraph_t graph) { api.hipGraphDestroy(graph); });
  }

  llvm::Error launchGraph(GraphHandle h) override {
    return handles.launchGraph(h, [&](hipGraphExec_t exec) {
      return check(api.hipGraphLaunch(exec, stream),
                   "hipGraphLaunch(graph " + llvm::Twine(h.Id) + ")");
    });
  }

  llvm::Error destroyGraph(GraphHandle h) override {
    return handles.destroyGraph(h, [&](hipGraphExec_t exec) {
      return check(api.hipGraphExecDestroy(exec), "hipGraphExecDestroy");
    });
  }

  bool capturing() const override { return handles.capturing(); }

private:
  llvm::Error check(hipError_t e, const llvm::Twine &what) const {
    return e == hipSuccess ? llvm::Error::success() : hipError(api, e, what);
  }

  llvm::Error sync(const llvm::Twine &what) {
    if (hipError_t e = api.hipStreamSynchronize(stream); e != hipSuccess)
      return hipError(api, e, what);
    return llvm::Error::success();
  }

  const HipApi &api;
  int device;
  hipStream_t stream;
  bool ownsStream;
  DriverHandles<hipModule_t, hipFunction_t, hipEvent_t, hipGraphExec_t> handles{"hip"};
};

} // namespace

llvm::Expected<std::unique_ptr<Backend>> createHipBackend(HipBackendOptions options) {
  auto api = loadHipApi();
  if (!api)
    return api.takeError();
  int count = 0;
  hipError_t countError = api->hipGetDeviceCount(&count);
  DeviceQuery query{.Backend = "hip",
                    .Driver = "HIP",
                    .Library = api->libraryPath,
                    .Requested = options.device,
                    .NoneFits = "no " + options.chip + " device",
                    .NotFitting =
                        "device " + std::to_string(options.device) + " is not a " + options.chip};
  llvm::Expected<int> chosen = chooseDevice(
      query, count, countError != hipSuccess ? api->errorText(countError) : "",
      [&](int d) -> llvm::Expected<DeviceInfo> {
        auto arch = deviceArch(*api, d);
        if (!arch)
          return arch.takeError();
        // "gfx950:sramecc+:xnack-": the chip is the part before the features.
        return DeviceInfo{*arch, llvm::StringRef(*arch).split(':').first == options.chip};
      });
  if (!chosen)
    return chosen.takeError();
  if (hipError_t e = api->hipSetDevice(*chosen); e != hipSuccess)
    return hipError(*api, e, "hipSetDevice(" + llvm::Twine(*chosen) + ")");
  hipStream_t stream = static_cast<hipStream_t>(options.stream);
  bool owns = false;
  if (!stream) {
    if (hipError_t e = api->hipStreamCreateWithFlags(&stream, hipStreamNonBlocking);
        e != hipSuccess)
      return hipError(*api, e, "hipStreamCreateWithFlags");
    owns = true;
  }
  return std::make_unique<HipBackend>(*api, *chosen, stream, owns);
}

} // namespace moegen::runtime
