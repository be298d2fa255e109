//===- Log.cpp - Runtime diagnostics --------------------------------------===//

#include "runtime/cache/Log.h"

#include "llvm/Support/raw_ostream.h"

#include <mutex>

namespace moegen::runtime {
namespace {

std::mutex &handlerMutex() {
  static std::mutex m;
  return m;
}

LogHandler &globalHandler() {
  static LogHandler h;
  return h;
}

} // namespace

void setLogHandler(LogHandler handler) {
  std::lock_guard<std::mutex> lock(handlerMutex());
  globalHandler() = std::move(handler);
}

void logMessage(const LogHandler &handler, LogLevel level, const llvm::Twine &message) {
  std::string text = message.str();
  if (handler) {
    handler(level, text);
    return;
  }
  std::lock_guard<std::mutex> lock(handlerMutex());
  if (globalHandler()) {
    globalHandler()(level, text);
    return;
  }
  llvm::errs() << "moegen: " << (level == LogLevel::Warning ? "warning: " : "note: ") << text
               << "\n";
}

} // namespace moegen::runtime
