//===- Pool.h - Child processes with a time limit ----------------*- C++ -*-===//
//
// Runs commands as child processes, at most `parallel` at a time, each with
// its stdout and stderr in files and a wall-clock limit after which it is
// killed. A compiler crash or hang in one child is that job's failure; the
// parent carries on.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TUNE_POOL_H
#define MOEGEN_TUNE_POOL_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <string>
#include <vector>

namespace moegen::tune {

struct ChildJob {
  std::vector<std::string> args; // argv[0] included
  std::string stdoutPath, stderrPath;
};

struct ChildResult {
  int exitCode = 0;    // the child's status when it exited
  bool exited = false; // false: it could not start, crashed or was killed
  bool timedOut = false;
  std::string error; // why it did not exit normally
};

/// Runs `jobs` with `program`; `done(index, result)` is called in the
/// parent's thread as each finishes.
void runChildren(llvm::StringRef program, llvm::ArrayRef<ChildJob> jobs, unsigned parallel,
                 unsigned timeoutSeconds,
                 const std::function<void(size_t, const ChildResult &)> &done);

} // namespace moegen::tune

#endif // MOEGEN_TUNE_POOL_H
