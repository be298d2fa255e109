//===- DriverHandles.h - The driver objects behind a backend's handles -*- C++ -*-===//
//
// The hip and cuda backends hand out small integer handles (Backend.h) for
// the driver's modules, functions and events, and remember their device
// allocations; this holds those objects, thread-safe, and names a handle that
// is not from the backend in its errors ("cuda backend: event 7 is not from
// this backend"). The backend frees the objects with its driver.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_BACKEND_DRIVERHANDLES_H
#define MOEGEN_RUNTIME_BACKEND_DRIVERHANDLES_H

#include "runtime/backend/Backend.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

namespace moegen::runtime {

template <class Module, class Function, class Event> class DriverHandles {
public:
  /// `backend` prefixes the errors: "hip", "cuda".
  explicit DriverHandles(const char *backend) : backend(backend) {}

  ModuleHandle addModule(Module m) {
    std::lock_guard<std::mutex> lock(mutex);
    modules.push_back(m);
    return ModuleHandle{static_cast<uint32_t>(modules.size() - 1)};
  }
  llvm::Expected<Module> module(ModuleHandle h) const {
    std::lock_guard<std::mutex> lock(mutex);
    if (h.Id >= modules.size())
      return error("no module " + llvm::Twine(h.Id));
    return modules[h.Id];
  }

  /// The handle's module field indexes the function table.
  KernelHandle addKernel(Function f, std::string symbol) {
    std::lock_guard<std::mutex> lock(mutex);
    functions.push_back(f);
    KernelHandle k;
    k.Module = static_cast<uint32_t>(functions.size() - 1);
    k.Symbol = std::move(symbol);
    return k;
  }
  llvm::Expected<Function> kernel(const KernelHandle &k) const {
    std::lock_guard<std::mutex> lock(mutex);
    if (k.Module >= functions.size())
      return error("kernel handle '" + k.Symbol + "' is not from this backend");
    return functions[k.Module];
  }

  void addAllocation(DevicePtr p) {
    std::lock_guard<std::mutex> lock(mutex);
    allocations.push_back(p);
  }
  /// Forgets `p`, which must be an allocation of this backend.
  llvm::Error removeAllocation(DevicePtr p) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = std::find(allocations.begin(), allocations.end(), p);
    if (it == allocations.end())
      return error("free of 0x" + llvm::utohexstr(p, /*LowerCase=*/true) +
                   ", which is not an allocation");
    allocations.erase(it);
    return llvm::Error::success();
  }

  EventHandle addEvent(Event e) {
    std::lock_guard<std::mutex> lock(mutex);
    events.push_back(e);
    return EventHandle{static_cast<uint32_t>(events.size() - 1)};
  }
  llvm::Expected<Event> event(EventHandle h) const {
    std::lock_guard<std::mutex> lock(mutex);
    if (h.Id >= events.size())
      return error("event " + llvm::Twine(h.Id) + " is not from this backend");
    return events[h.Id];
  }

  /// What is left, for the backend's destructor to free.
  const std::vector<Module> &allModules() const { return modules; }
  const std::vector<DevicePtr> &allAllocations() const { return allocations; }
  const std::vector<Event> &allEvents() const { return events; }

private:
  llvm::Error error(const llvm::Twine &msg) const {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   llvm::Twine(backend) + " backend: " + msg);
  }

  const char *backend;
  mutable std::mutex mutex;
  std::vector<Module> modules;
  std::vector<Function> functions;
  std::vector<DevicePtr> allocations;
  std::vector<Event> events;
};

} // namespace moegen::runtime

#endif // MOEGEN_RUNTIME_BACKEND_DRIVERHANDLES_H
