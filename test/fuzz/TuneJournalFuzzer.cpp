//===- TuneJournalFuzzer.cpp - Fuzz the tuning journal reader --------------===//
//
// The input is a journal file (its first line names the run: the seeds use
// the fingerprint "fuzz"). A journal that opens answers lookups for what it
// recorded, takes one more record of each kind and opens again with one more
// record of each than it resumed.
//
//===----------------------------------------------------------------------===//

#include "tune/Journal.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>

using namespace moegen::tune;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::SmallString<128> path;
  if (llvm::sys::fs::createTemporaryFile("moegen-fuzz-journal", "txt", path))
    return 0;
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return 0;
    os.write(reinterpret_cast<const char *>(data), size);
  }
  auto journal = Journal::open(path, "fuzz");
  if (!journal) {
    llvm::consumeError(journal.takeError());
    llvm::sys::fs::remove(path);
    return 0;
  }
  size_t resumed = (*journal)->resumedRecords();
  (void)(*journal)->compiled("x");
  (void)(*journal)->checked(1, "x");
  CompileRecord compile;
  compile.ok = true;
  compile.times[1].us1 = 1;
  CheckRecord check;
  check.passed = true;
  if (llvm::Error e = (*journal)->recordCompile("fuzz\tid", compile))
    llvm::consumeError(std::move(e));
  if (llvm::Error e = (*journal)->recordCheck(1, "fuzz\tid", check))
    llvm::consumeError(std::move(e));
  StageTimes steps;
  steps.us1 = 2;
  if (llvm::Error e = (*journal)->recordTiming(1, "fuzz\tid", steps))
    llvm::consumeError(std::move(e));
  if (llvm::Error e = (*journal)->recordGraph(1, "fuzz\tid", 3))
    llvm::consumeError(std::move(e));
  auto again = Journal::open(path, "fuzz");
  if (!again || (*again)->resumedRecords() != resumed + 4 || !(*again)->compiled("fuzz id") ||
      !(*again)->checked(1, "fuzz id") || !(*again)->timed(1, "fuzz id") ||
      !(*again)->graphed(1, "fuzz id") || *(*again)->graphed(1, "fuzz id") != 3)
    abort(); // what the journal wrote must read back
  llvm::sys::fs::remove(path);
  return 0;
}
