//===- Journal.h - What a tuning run has done so far -------------*- C++ -*-===//
//
// An append-only text file next to the tuned table: one record per compile
// (the modelled times per token count, or why it failed), per check (pass
// or fail, the errors) and per measured timing (hip, cuda: us1, us2). Each record is written and
// flushed as it happens, so a run that is interrupted resumes where it stopped: what is recorded is
// neither compiled nor checked again, and a failure is remembered rather
// than retried. The first line names the spec, build and backend the records
// belong to; a journal of another run is an error, never silently reused. A
// torn last line (the run was killed while writing it) is ignored.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TUNE_JOURNAL_H
#define MOEGEN_TUNE_JOURNAL_H

#include "compiler/spec/KernelFamily.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>
#include <string>

namespace moegen::tune {

/// A layer's modelled time split the way aiter's table reports it: us1 is
/// stage 1 with what it needs to hand stage 2 its input (split-K finish,
/// inter-stage quantization), us2 is stage 2 with its reduction. Sorting
/// and the input quantization are the same for every schedule of a block
/// size and are kept apart (`common`).
struct StageTimes {
  double us1 = 0, us2 = 0, common = 0;
  double us() const { return us1 + us2; }
  /// Adds one kernel's time to the stage that needs it.
  void charge(KernelFamily family, double us);
};

struct CompileRecord {
  bool ok = false;
  std::string reason;                  // why not, one line
  std::map<int64_t, StageTimes> times; // by token count
};

struct CheckRecord {
  bool passed = false;
  double err1 = 0, err2 = 0; // fractions of the compared elements out of tolerance
  std::string detail;        // one line: the failing stages, or an error
};

class Journal {
public:
  /// Opens (creating it when absent) the journal at `path` for a run whose
  /// identity is `fingerprint`.
  static llvm::Expected<std::unique_ptr<Journal>> open(llvm::StringRef path,
                                                       llvm::StringRef fingerprint);

  const CompileRecord *compiled(llvm::StringRef id) const;
  const CheckRecord *checked(int64_t tokens, llvm::StringRef id) const;
  llvm::Error recordCompile(llvm::StringRef id, const CompileRecord &r);
  llvm::Error recordCheck(int64_t tokens, llvm::StringRef id, const CheckRecord &r);
  /// A layer's measured stage times (hip, cuda: `common` unused).
  const StageTimes *timed(int64_t tokens, llvm::StringRef id) const;
  llvm::Error recordTiming(int64_t tokens, llvm::StringRef id, const StageTimes &t);
  /// A layer's median microseconds a call over graph replays.
  const double *graphed(int64_t tokens, llvm::StringRef id) const;
  llvm::Error recordGraph(int64_t tokens, llvm::StringRef id, double us);
  /// Records read from the file when it was opened.
  size_t resumedRecords() const { return resumed; }
  const std::string &path() const { return file; }

private:
  llvm::Error append(const std::string &line);
  std::string file;
  std::map<std::string, CompileRecord> compiles;
  std::map<std::pair<int64_t, std::string>, CheckRecord> checks;
  std::map<std::pair<int64_t, std::string>, StageTimes> timings;
  std::map<std::pair<int64_t, std::string>, double> graphs;
  size_t resumed = 0;
};

} // namespace moegen::tune

#endif // MOEGEN_TUNE_JOURNAL_H
