//===- Log.h - Runtime diagnostics ------------------------------*- C++ -*-===//
//
// The runtime reports what a host application should know but that is not an
// error of the call at hand: a corrupt cache entry rebuilt, a read-only cache
// directory, a token tier served by the fallback heuristic. By default these
// go to stderr as "moegen: warning: ..."; a host application can route them
// into its own logging.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_CACHE_LOG_H
#define MOEGEN_RUNTIME_CACHE_LOG_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <functional>

namespace moegen::runtime {

enum class LogLevel { Note, Warning };

using LogHandler = std::function<void(LogLevel, llvm::StringRef)>;

/// Installs the process-wide handler; an empty handler restores stderr.
void setLogHandler(LogHandler handler);

/// Sends a message to `handler` when it is set, else to the process-wide one.
void logMessage(const LogHandler &handler, LogLevel level, const llvm::Twine &message);

} // namespace moegen::runtime

#endif // MOEGEN_RUNTIME_CACHE_LOG_H
