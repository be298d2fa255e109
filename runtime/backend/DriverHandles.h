//===- DriverHandles.h - The driver objects behind a backend's handles -*- C++ -*-===//
//
// The hip and cuda backends hand out small integer handles (Backend.h) for
// the driver's modules, functions, events and executable graphs, and
// remember their device allocations; this holds those objects, thread-safe,
// and names a handle that is not from the backend in its errors ("cuda
// backend: event 7 is not from this backend"), and refuses a code bundle with
// no module to load. It also knows whether the backend's stream is being
// captured into a graph, and refuses by name what a capture cannot hold. The
// backend frees the objects with its driver.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_BACKEND_DRIVERHANDLES_H
#define MOEGEN_RUNTIME_BACKEND_DRIVERHANDLES_H

#include "runtime/backend/Backend.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace moegen::runtime {

template <class Module, class Function, class Event, class GraphExec> class DriverHandles {
public:
  /// `backend` prefixes the errors: "hip", "cuda".
  explicit DriverHandles(const char *backend) : backend(backend) {}

  /// An error when `code` has no code object for the driver to load into a
  /// module.
  llvm::Error checkLoadable(const CodeBundle &code) const {
    if (code.Hsaco.empty())
      return error("code bundle '" + code.Name + "' has no code object");
    return llvm::Error::success();
  }
  ModuleHandle addModule(Module m) { return ModuleHandle{add(modules, m)}; }
  llvm::Expected<Module> module(ModuleHandle h) const {
    return find(modules, h.Id, "no module " + llvm::Twine(h.Id));
  }

  /// The handle's module field indexes the function table.
  KernelHandle addKernel(Function f, std::string symbol) {
    KernelHandle k;
    k.Module = add(functions, f);
    k.Symbol = std::move(symbol);
    return k;
  }
  llvm::Expected<Function> kernel(const KernelHandle &k) const {
    return find(functions, k.Module, "kernel handle '" + k.Symbol + "' is not from this backend");
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

  EventHandle addEvent(Event e) { return EventHandle{add(events, e)}; }
  llvm::Expected<Event> event(EventHandle h) const {
    return find(events, h.Id, "event " + llvm::Twine(h.Id) + " is not from this backend");
  }
  /// The events a time is measured between.
  llvm::Expected<std::pair<Event, Event>> eventPair(EventHandle start, EventHandle end) const {
    auto from = event(start);
    if (!from)
      return from.takeError();
    auto to = event(end);
    if (!to)
      return to.takeError();
    return std::make_pair(*from, *to);
  }

  GraphHandle addGraph(GraphExec g) { return GraphHandle{add(graphs, g)}; }
  llvm::Expected<GraphExec> graph(GraphHandle h) const {
    auto g = find(graphs, h.Id, "graph " + llvm::Twine(h.Id) + " is not from this backend");
    if (g && !*g)
      return error("graph " + llvm::Twine(h.Id) + " was destroyed");
    return g;
  }
  /// The graph of `h`, forgotten (its handle then says it was destroyed):
  /// the backend destroys it.
  llvm::Expected<GraphExec> takeGraph(GraphHandle h) {
    auto g = graph(h);
    if (g) {
      std::lock_guard<std::mutex> lock(mutex);
      graphs[h.Id] = GraphExec{};
    }
    return g;
  }

  /// The capture protocol both drivers share: `begin` starts the stream's
  /// capture, `record` issues the work, `end` ends the capture in every case
  /// (so that the stream runs work again) and gives the graph, `instantiate`
  /// makes it executable, `destroy` frees the captured graph (kept neither
  /// after a failure nor after instantiation). The callbacks word the
  /// driver's errors; `record`'s error is returned as it is.
  template <class Graph>
  llvm::Expected<GraphHandle>
  captureGraph(llvm::function_ref<llvm::Error()> record, llvm::function_ref<llvm::Error()> begin,
               llvm::function_ref<llvm::Error(Graph &)> end,
               llvm::function_ref<llvm::Expected<GraphExec>(Graph)> instantiate,
               llvm::function_ref<void(Graph)> destroy) {
    if (llvm::Error e = refuseWhileCapturing("capturing a graph (captures do not nest)"))
      return std::move(e);
    if (llvm::Error e = begin())
      return std::move(e);
    setCapturing(true);
    llvm::Error recorded = record();
    setCapturing(false);
    Graph graph{};
    llvm::Error ended = end(graph);
    if (recorded || ended) {
      if (graph)
        destroy(graph);
      return llvm::joinErrors(std::move(recorded), std::move(ended));
    }
    auto exec = instantiate(graph);
    destroy(graph); // the executable graph is independent of it
    if (!exec)
      return exec.takeError();
    return addGraph(*exec);
  }

  /// launchGraph and destroyGraph of both drivers: refused while capturing,
  /// the handle checked (destroy forgets it), then the driver call `run`.
  llvm::Error launchGraph(GraphHandle h, llvm::function_ref<llvm::Error(GraphExec)> run) {
    if (llvm::Error e = refuseWhileCapturing("launching a graph"))
      return e;
    auto exec = graph(h);
    if (!exec)
      return exec.takeError();
    return run(*exec);
  }
  llvm::Error destroyGraph(GraphHandle h, llvm::function_ref<llvm::Error(GraphExec)> run) {
    if (llvm::Error e = refuseWhileCapturing("destroying a graph"))
      return e;
    auto exec = takeGraph(h);
    if (!exec)
      return exec.takeError();
    return run(*exec);
  }

  /// Stream capture: between setCapturing(true) and (false), what a graph
  /// cannot hold, or what would wait for work the capture only records,
  /// fails without reaching the driver (which would invalidate the capture).
  void setCapturing(bool on) { inCapture = on; }
  bool capturing() const { return inCapture; }
  llvm::Error refuseWhileCapturing(const llvm::Twine &what) const {
    if (!inCapture)
      return llvm::Error::success();
    return llvm::createStringError(std::make_error_code(std::errc::operation_not_permitted),
                                   llvm::Twine(backend) + " backend: " + what +
                                       " while a graph is being captured (a graph holds "
                                       "launches and memsets only; do it before the capture)");
  }

  /// What is left, for the backend's destructor to free (destroyed graphs
  /// are null).
  const std::vector<Module> &allModules() const { return modules; }
  const std::vector<DevicePtr> &allAllocations() const { return allocations; }
  const std::vector<Event> &allEvents() const { return events; }
  const std::vector<GraphExec> &allGraphs() const { return graphs; }

private:
  /// Appends `object` to `table`; its index, the handle's id.
  template <class T> uint32_t add(std::vector<T> &table, T object) {
    std::lock_guard<std::mutex> lock(mutex);
    table.push_back(object);
    return static_cast<uint32_t>(table.size() - 1);
  }
  /// The object of `table` at `id`; an error saying `notFound` when there is none.
  template <class T>
  llvm::Expected<T> find(const std::vector<T> &table, uint32_t id,
                         const llvm::Twine &notFound) const {
    std::lock_guard<std::mutex> lock(mutex);
    if (id >= table.size())
      return error(notFound);
    return table[id];
  }

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
  std::vector<GraphExec> graphs;
  std::atomic<bool> inCapture{false};
};

} // namespace moegen::runtime

#endif // MOEGEN_RUNTIME_BACKEND_DRIVERHANDLES_H
