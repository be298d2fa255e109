//===- DriverLibrary.h - Finding a driver library at run time ---*- C++ -*-===//
//
// The hip and cuda backends open their driver (libamdhip64, libcuda) with
// dlopen when they are created, from places tried in an order of their own.
// A LibrarySearch opens the first that works and notes every place that did
// not, one line each, for the error that lists them when none does. Each
// driver is loaded once for the process (loadDriverOnce), and both drivers'
// errors read alike (driverErrorText).
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_BACKEND_DRIVERLIBRARY_H
#define MOEGEN_RUNTIME_BACKEND_DRIVERLIBRARY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace moegen::runtime {

class LibrarySearch {
public:
  /// The first of `names` the process has loaded already (RTLD_NOLOAD), e.g.
  /// PyTorch's; `path` says so. Else notes "`what` already loaded in the
  /// process: none".
  void *alreadyLoaded(llvm::ArrayRef<std::string> names, const llvm::Twine &what,
                      std::string &path);
  /// The library the environment variable `var` names; notes why not (not
  /// set, or dlopen's error). `set` tells whether the variable was set.
  void *fromEnvironment(const char *var, std::string &path, bool &set);
  /// The first of `candidates` that opens; notes each that does not.
  void *firstOf(llvm::ArrayRef<std::string> candidates, std::string &path);

  /// "`header`; looked for:" and the places tried, one a line, then `hint`.
  llvm::Error notFound(const llvm::Twine &header, const llvm::Twine &hint) const;

  std::vector<std::string> tried;
};

/// The process's one `Api` (a driver's entry points), filled by `load` on the
/// first call that succeeds; a failed load is tried again by the next call.
/// Thread-safe. The API is kept for the process: modules outlive callers.
template <class Api>
llvm::Expected<const Api &> loadDriverOnce(llvm::function_ref<llvm::Error(Api &)> load) {
  static std::mutex m;
  static Api *loaded = nullptr;
  std::lock_guard<std::mutex> lock(m);
  if (loaded)
    return *loaded;
  auto api = std::make_unique<Api>();
  if (llvm::Error e = load(*api))
    return std::move(e);
  loaded = api.release();
  return *loaded;
}

/// A driver error as the backends' messages show it: its `name` and `text`
/// where the driver gives them, "CUDA_ERROR_OUT_OF_MEMORY (out of memory)",
/// else `unnamed` ("CUresult 2").
std::string driverErrorText(const char *name, const char *text, const std::string &unnamed);

} // namespace moegen::runtime

#endif // MOEGEN_RUNTIME_BACKEND_DRIVERLIBRARY_H
