//===- DriverLibrary.cpp - Finding a driver library at run time -----------===//

#include "runtime/backend/DriverLibrary.h"

#include <cstdlib>
#include <dlfcn.h>

namespace moegen::runtime {
namespace {

std::string dlerrorText() {
  const char *e = dlerror();
  return e ? e : "unknown dlopen error";
}

} // namespace

void *LibrarySearch::alreadyLoaded(llvm::ArrayRef<std::string> names, const llvm::Twine &what,
                                   std::string &path) {
  for (const std::string &name : names)
    if (void *h = dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
      path = name + " (already loaded)";
      return h;
    }
  tried.push_back((what + " already loaded in the process: none").str());
  return nullptr;
}

void *LibrarySearch::fromEnvironment(const char *var, std::string &path, bool &set) {
  const char *value = std::getenv(var);
  set = value && *value;
  if (!set) {
    tried.push_back(std::string("$") + var + ": not set");
    return nullptr;
  }
  if (void *h = dlopen(value, RTLD_NOW | RTLD_LOCAL)) {
    path = value;
    return h;
  }
  tried.push_back(std::string("$") + var + "=" + value + ": " + dlerrorText());
  return nullptr;
}

void *LibrarySearch::firstOf(llvm::ArrayRef<std::string> candidates, std::string &path) {
  for (const std::string &c : candidates) {
    if (void *h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      path = c;
      return h;
    }
    tried.push_back(c + ": " + dlerrorText());
  }
  return nullptr;
}

llvm::Error LibrarySearch::notFound(const llvm::Twine &header, const llvm::Twine &hint) const {
  std::string msg = (header + "; looked for:").str();
  for (const std::string &t : tried)
    msg += "\n  " + t;
  msg += "\n" + hint.str();
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

std::string driverErrorText(const char *name, const char *text, const std::string &unnamed) {
  std::string out = name ? name : unnamed;
  if (text)
    out += std::string(" (") + text + ")";
  return out;
}

} // namespace moegen::runtime
