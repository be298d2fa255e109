//===- CudaBackend.cpp - The backend for NVIDIA GPUs (sm_90a) -------------===//

#include "runtime/cuda/CudaBackend.h"

#include "runtime/backend/DeviceChoice.h"
#include "runtime/backend/DriverHandles.h"
#include "runtime/cuda/CudaApi.h"
#include "runtime/cuda/PtxGridWait.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"

#include <mutex>
#include <vector>

using namespace moegen::cuda;

namespace moegen::runtime {
namespace {

llvm::Error cudaError(const CudaApi &api, CUresult e, const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "cuda backend: " + what + " failed: " + api.errorText(e));
}

class CudaBackend final : public Backend {
public:
  CudaBackend(const CudaApi &api, CUdevice device, CUcontext context, CUstream stream,
              bool ownsStream)
      : api(api), device(device), context(context), stream(stream), ownsStream(ownsStream) {}

  ~CudaBackend() override {
    api.cuCtxSetCurrent(context);
    for (CUgraphExec g : handles.allGraphs())
      if (g)
        api.cuGraphExecDestroy(g);
    for (CUmodule m : handles.allModules())
      api.cuModuleUnload(m);
    for (DevicePtr p : handles.allAllocations())
      api.cuMemFree(p);
    for (CUevent e : handles.allEvents())
      api.cuEventDestroy(e);
    if (ownsStream)
      api.cuStreamDestroy(stream);
    api.cuDevicePrimaryCtxRelease(device);
  }

  llvm::StringRef name() const override { return "cuda"; }

  llvm::Expected<ModuleHandle> loadCode(const CodeBundle &code) override {
    if (llvm::Error e = handles.checkLoadable(code))
      return std::move(e);
    if (llvm::Error e = handles.refuseWhileCapturing("loading PTX '" + code.Name + "'"))
      return std::move(e);
    // PTX must reach the driver NUL-terminated.
    std::vector<uint8_t> image(code.Hsaco.begin(), code.Hsaco.end());
    if (image.back() != 0)
      image.push_back(0);
    if (llvm::Error e = makeCurrent())
      return std::move(e);
    char errorLog[8192] = {}, infoLog[8192] = {};
    int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                     CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {errorLog, reinterpret_cast<void *>(sizeof(errorLog)), infoLog,
                      reinterpret_cast<void *>(sizeof(infoLog))};
    CUmodule m = nullptr;
    if (CUresult e = api.cuModuleLoadDataEx(&m, image.data(), 4, options, values);
        e != CUDA_SUCCESS) {
      std::string log(errorLog, strnlen(errorLog, sizeof(errorLog)));
      return cudaError(api, e,
                       "loading PTX '" + code.Name + "' (built for a chip this device is not?)" +
                           (log.empty() ? "" : "; driver log:\n" + log));
    }
    llvm::StringRef ptx(reinterpret_cast<const char *>(image.data()), image.size() - 1);
    {
      std::lock_guard<std::mutex> lock(waitingMutex);
      waitingEntries[m] = ptxEntriesThatWait(ptx);
    }
    return handles.addModule(m);
  }

  llvm::Expected<KernelHandle> getKernel(ModuleHandle m, llvm::StringRef symbol) override {
    auto module = handles.module(m);
    if (!module)
      return module.takeError();
    std::string name = symbol.str();
    CUfunction f = nullptr;
    if (CUresult e = api.cuModuleGetFunction(&f, *module, name.c_str()); e != CUDA_SUCCESS)
      return cudaError(api, e, "cuModuleGetFunction('" + name + "')");
    {
      std::lock_guard<std::mutex> lock(waitingMutex);
      if (waitingEntries[*module].contains(name))
        programmatic.insert(f);
    }
    return handles.addKernel(f, name);
  }

  /// The driver's figures for the code it compiled from the PTX at load.
  llvm::Expected<KernelResources> kernelResources(const KernelHandle &k) override {
    auto f = handles.kernel(k);
    if (!f)
      return f.takeError();
    if (llvm::Error e = makeCurrent())
      return std::move(e);
    KernelResources r;
    const std::pair<int, int64_t *> attributes[] = {
        {CU_FUNC_ATTRIBUTE_NUM_REGS, &r.registers},
        {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &r.localBytes},
        {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &r.staticSharedBytes},
        {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &r.maxThreadsPerBlock}};
    for (auto [attribute, field] : attributes) {
      int value = 0;
      if (CUresult e = api.cuFuncGetAttribute(&value, attribute, *f); e != CUDA_SUCCESS)
        return cudaError(
            api, e, "cuFuncGetAttribute(" + llvm::Twine(attribute) + ") of '" + k.Symbol + "'");
      *field = value;
    }
    return r;
  }

  llvm::Expected<DevicePtr> allocate(size_t bytes) override {
    if (llvm::Error e =
            handles.refuseWhileCapturing("allocation of " + llvm::Twine(bytes) + " bytes"))
      return std::move(e);
    if (llvm::Error e = makeCurrent())
      return std::move(e);
    CUdeviceptr p = 0;
    if (CUresult e = api.cuMemAlloc(&p, bytes ? bytes : 1); e != CUDA_SUCCESS)
      return cudaError(api, e, "cuMemAlloc(" + llvm::Twine(bytes) + ")");
    handles.addAllocation(p);
    return static_cast<DevicePtr>(p);
  }

  llvm::Error free(DevicePtr p) override {
    if (llvm::Error e = handles.refuseWhileCapturing("free"))
      return e;
    if (llvm::Error e = handles.removeAllocation(p))
      return e;
    if (llvm::Error e = makeCurrent())
      return e;
    if (CUresult e = api.cuMemFree(p); e != CUDA_SUCCESS)
      return cudaError(api, e, "cuMemFree");
    return llvm::Error::success();
  }

  llvm::Error copyToDevice(DevicePtr dst, const void *src, size_t bytes) override {
    if (llvm::Error e =
            handles.refuseWhileCapturing("copy of " + llvm::Twine(bytes) + " bytes to the device"))
      return e;
    if (llvm::Error e = makeCurrent())
      return e;
    if (CUresult e = api.cuMemcpyHtoDAsync(dst, src, bytes, stream); e != CUDA_SUCCESS)
      return cudaError(api, e, "copy of " + llvm::Twine(bytes) + " bytes to the device");
    return sync("copy to the device"); // the source may be reused on return
  }

  llvm::Error copyToHost(void *dst, DevicePtr src, size_t bytes) override {
    if (llvm::Error e =
            handles.refuseWhileCapturing("copy of " + llvm::Twine(bytes) + " bytes to the host"))
      return e;
    if (llvm::Error e = makeCurrent())
      return e;
    if (CUresult e = api.cuMemcpyDtoHAsync(dst, src, bytes, stream); e != CUDA_SUCCESS)
      return cudaError(api, e, "copy of " + llvm::Twine(bytes) + " bytes to the host");
    return sync("copy to the host");
  }

  llvm::Error memset(DevicePtr dst, uint8_t value, size_t bytes) override {
    if (llvm::Error e = makeCurrent())
      return e;
    if (CUresult e = api.cuMemsetD8Async(dst, value, bytes, stream); e != CUDA_SUCCESS)
      return cudaError(api, e, "memset of " + llvm::Twine(bytes) + " bytes");
    return llvm::Error::success();
  }

  llvm::Error launch(const KernelHandle &k, Dim3 grid, Dim3 block, uint32_t dynamicLds,
                     llvm::ArrayRef<uint8_t> kernarg) override {
    auto f = handles.kernel(k);
    if (!f)
      return f.takeError();
    if (llvm::Error e = makeCurrent())
      return e;
    if (llvm::Error e = allowDynamicShared(*f, k.Symbol, dynamicLds))
      return e;
    size_t size = kernarg.size();
    void *config[] = {kLaunchParamBufferPointer, const_cast<uint8_t *>(kernarg.data()),
                      kLaunchParamBufferSize, &size, kLaunchParamEnd};
    // Programmatic stream serialization for kernels that wait for their
    // predecessors first (moegen's: moe-attach-grid-dependencies): the driver
    // may launch such a kernel as the one before it finishes, before that
    // one's completion is flushed, so only the launch overlaps.
    CUlaunchAttribute dependent;
    dependent.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    {
      std::lock_guard<std::mutex> lock(waitingMutex);
      dependent.value.programmaticStreamSerializationAllowed = programmatic.contains(*f) ? 1 : 0;
    }
    CUlaunchConfig launch;
    launch.gridDimX = grid.X, launch.gridDimY = grid.Y, launch.gridDimZ = grid.Z;
    launch.blockDimX = block.X, launch.blockDimY = block.Y, launch.blockDimZ = block.Z;
    launch.sharedMemBytes = dynamicLds;
    launch.hStream = stream;
    launch.attrs = &dependent;
    launch.numAttrs = 1;
    if (CUresult e = api.cuLaunchKernelEx(&launch, *f, nullptr, config); e != CUDA_SUCCESS)
      return cudaError(api, e, "launch of '" + k.Symbol + "'");
    return llvm::Error::success();
  }

  llvm::Error synchronize() override {
    if (llvm::Error e = handles.refuseWhileCapturing("synchronize"))
      return e;
    return sync("synchronize");
  }

  llvm::Expected<EventHandle> createEvent() override {
    if (llvm::Error e = makeCurrent())
      return std::move(e);
    CUevent event = nullptr;
    if (CUresult e = api.cuEventCreate(&event, CU_EVENT_DEFAULT); e != CUDA_SUCCESS)
      return cudaError(api, e, "cuEventCreate");
    return handles.addEvent(event);
  }

  llvm::Error recordEvent(EventHandle h) override {
    // A recorded event would mark the capture, not the replays: no timing.
    if (llvm::Error e = handles.refuseWhileCapturing("recording an event"))
      return e;
    auto event = handles.event(h);
    if (!event)
      return event.takeError();
    if (llvm::Error e = makeCurrent())
      return e;
    if (CUresult e = api.cuEventRecord(*event, stream); e != CUDA_SUCCESS)
      return cudaError(api, e, "cuEventRecord");
    return llvm::Error::success();
  }

  llvm::Expected<float> elapsedMs(EventHandle start, EventHandle end) override {
    if (llvm::Error e = handles.refuseWhileCapturing("waiting for an event"))
      return std::move(e);
    auto events = handles.eventPair(start, end);
    if (!events)
      return events.takeError();
    auto [from, to] = *events;
    if (llvm::Error e = makeCurrent())
      return std::move(e);
    if (CUresult e = api.cuEventSynchronize(to); e != CUDA_SUCCESS)
      return cudaError(api, e, "cuEventSynchronize");
    float ms = 0;
    if (CUresult e = api.cuEventElapsedTime(&ms, from, to); e != CUDA_SUCCESS)
      return cudaError(api, e, "cuEventElapsedTime");
    return ms;
  }

  llvm::Expected<GraphHandle> captureGraph(llvm::function_ref<llvm::Error()> record) override {
    return handles.captureGraph<CUgraph>(
        record,
        [&]() -> llvm::Error {
          if (llvm::Error e = makeCurrent())
            return e;
          return check(api.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                       "cuStreamBeginCapture");
        },
        [&](CUgraph &graph) {
          return check(
              api.cuStreamEndCapture(stream, &graph),
              "cuStreamEndCapture (the recorded work had a call that a graph cannot hold)");
        },
        [&](CUgraph graph) -> llvm::Expected<CUgraphExec> {
          CUgraphExec exec = nullptr;
          if (llvm::Error e = check(api.cuGraphInstantiateWithFlags(&exec, graph, 0),
                                    "cuGraphInstantiateWithFlags"))
            return std::move(e);
          return exec;
        },
        [&](CUgraph graph) { api.cuGraphDestroy(graph); });
  }

  llvm::Error launchGraph(GraphHandle h) override {
    return handles.launchGraph(h, [&](CUgraphExec exec) -> llvm::Error {
      if (llvm::Error e = makeCurrent())
        return e;
      return check(api.cuGraphLaunch(exec, stream),
                   "cuGraphLaunch(graph " + llvm::Twine(h.Id) + ")");
    });
  }

  llvm::Error destroyGraph(GraphHandle h) override {
    return handles.destroyGraph(h, [&](CUgraphExec exec) -> llvm::Error {
      if (llvm::Error e = makeCurrent())
        return e;
      return check(api.cuGraphExecDestroy(exec), "cuGraphExecDestroy");
    });
  }

  bool capturing() const override { return handles.capturing(); }

private:
  llvm::Error check(CUresult e, const llvm::Twine &what) const {
    return e == CUDA_SUCCESS ? llvm::Error::success() : cudaError(api, e, what);
  }

  llvm::Error makeCurrent() {
    if (CUresult e = api.cuCtxSetCurrent(context); e != CUDA_SUCCESS)
      return cudaError(api, e, "cuCtxSetCurrent");
    return llvm::Error::success();
  }

  /// Kernels opt in to dynamic shared memory beyond the 48 KiB every launch
  /// may have; once per kernel and size.
  llvm::Error allowDynamicShared(CUfunction f, llvm::StringRef symbol, uint32_t bytes) {
    constexpr uint32_t kDefaultLimit = 48 * 1024;
    if (bytes <= kDefaultLimit)
      return llvm::Error::success();
    std::lock_guard<std::mutex> lock(optInMutex);
    uint32_t &allowed = optedIn[f];
    if (allowed >= bytes)
      return llvm::Error::success();
    if (CUresult e = api.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                            static_cast<int>(bytes));
        e != CUDA_SUCCESS)
      return cudaError(api, e,
                       "allowing '" + symbol + "' " + llvm::Twine(bytes) +
                           " bytes of dynamic shared memory (cuFuncSetAttribute)");
    allowed = bytes;
    return llvm::Error::success();
  }

  llvm::Error sync(const llvm::Twine &what) {
    if (CUresult e = api.cuStreamSynchronize(stream); e != CUDA_SUCCESS)
      return cudaError(api, e, what);
    return llvm::Error::success();
  }

  const CudaApi &api;
  CUdevice device;
  CUcontext context;
  CUstream stream;
  bool ownsStream;
  DriverHandles<CUmodule, CUfunction, CUevent, CUgraphExec> handles{"cuda"};
  std::mutex optInMutex;
  llvm::DenseMap<CUfunction, uint32_t> optedIn; // the dynamic shared memory allowed
  std::mutex waitingMutex;
  llvm::DenseMap<CUmodule, llvm::StringSet<>> waitingEntries; // ptxEntriesThatWait per module
  llvm::DenseSet<CUfunction> programmatic; // launched with programmatic stream serialization
};

} // namespace

std::optional<std::pair<int, int>> computeCapabilityOf(llvm::StringRef chip) {
  llvm::StringRef digits = chip;
  if (!digits.consume_front("sm_"))
    return std::nullopt;
  digits.consume_back("a");
  unsigned value = 0;
  if (digits.size() < 2 || digits.getAsInteger(10, value))
    return std::nullopt;
  return std::make_pair(static_cast<int>(value / 10), static_cast<int>(value % 10));
}

llvm::Expected<std::unique_ptr<Backend>> createCudaBackend(CudaBackendOptions options) {
  std::optional<std::pair<int, int>> want = computeCapabilityOf(options.chip);
  if (!want)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cuda backend: '%s' is not an NVIDIA chip (sm_90a)",
                                   options.chip.c_str());
  auto api = loadCudaApi();
  if (!api)
    return api.takeError();
  int count = 0;
  CUresult countError = api->cuDeviceGetCount(&count);
  DeviceQuery query{.Backend = "cuda",
                    .Driver = "CUDA",
                    .Library = api->libraryPath,
                    .Requested = options.device,
                    .NoneFits = "no device runs " + options.chip,
                    .NotFitting =
                        "device " + std::to_string(options.device) + " cannot run " + options.chip};
  llvm::Expected<int> chosen = chooseDevice(
      query, count, countError != CUDA_SUCCESS ? api->errorText(countError) : "",
      [&](int d) -> llvm::Expected<DeviceInfo> {
        CUdevice dev = 0;
        if (CUresult e = api->cuDeviceGet(&dev, d); e != CUDA_SUCCESS)
          return cudaError(*api, e, "cuDeviceGet(" + llvm::Twine(d) + ")");
        int major = 0, minor = 0;
        api->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
        api->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
        char name[256] = {};
        api->cuDeviceGetName(name, sizeof(name) - 1, dev);
        return DeviceInfo{std::string(name) + " (sm_" + std::to_string(major) +
                              std::to_string(minor) + ")",
                          std::make_pair(major, minor) == *want};
      });
  if (!chosen)
    return chosen.takeError();
  CUdevice dev = 0;
  api->cuDeviceGet(&dev, *chosen);
  CUcontext context = nullptr;
  if (CUresult e = api->cuDevicePrimaryCtxRetain(&context, dev); e != CUDA_SUCCESS)
    return cudaError(*api, e, "cuDevicePrimaryCtxRetain(" + llvm::Twine(*chosen) + ")");
  if (CUresult e = api->cuCtxSetCurrent(context); e != CUDA_SUCCESS) {
    api->cuDevicePrimaryCtxRelease(dev);
    return cudaError(*api, e, "cuCtxSetCurrent");
  }
  CUstream stream = static_cast<CUstream>(options.stream);
  bool owns = false;
  if (!stream) {
    if (CUresult e = api->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING); e != CUDA_SUCCESS) {
      api->cuDevicePrimaryCtxRelease(dev);
      return cudaError(*api, e, "cuStreamCreate");
    }
    owns = true;
  }
  return std::make_unique<CudaBackend>(*api, dev, context, stream, owns);
}

} // namespace moegen::runtime
