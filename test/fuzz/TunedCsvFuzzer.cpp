//===- TunedCsvFuzzer.cpp - Fuzz the aiter tuned-table reader -------------===//
//
// The input is a CSV table. A table that parses is looked up for a few token
// counts with each row's own key, its duplicates are found by those keys, and
// it is written; the written table must parse again and write the same text
// (write is a fixed point after one round).
//
//===----------------------------------------------------------------------===//

#include "runtime/dispatch/TunedTable.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>

using namespace moegen::dispatch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  auto table = TunedTable::parse(input, "fuzz.csv");
  if (!table) {
    llvm::consumeError(table.takeError());
    return 0;
  }
  size_t hidden = 0;
  for (const auto &row : table->rows()) {
    for (int64_t tokens : {int64_t(0), int64_t(1), row->key.token, int64_t(1) << 40})
      (void)table->lookup(row->key, tokens);
    hidden += table->duplicatesOf(row->key).size();
  }
  // Every duplicate is some row's problem's, so the rows' keys find duplicates exactly when the
  // table has some (each key finds those of its problem, once per row of that problem).
  if (table->duplicates().empty() != (hidden == 0)) {
    llvm::errs() << table->duplicates().size() << " duplicate(s), " << hidden
                 << " found by the rows' keys\n";
    std::abort();
  }

  std::string written = table->write();
  auto again = TunedTable::parse(written, "written.csv");
  if (!again) {
    llvm::errs() << "the written table does not parse: " << llvm::toString(again.takeError())
                 << "\n--- written ---\n"
                 << written;
    std::abort();
  }
  std::string rewritten = again->write();
  if (rewritten != written) {
    llvm::errs() << "writing the table again changes it\n--- written ---\n"
                 << written << "--- written again ---\n"
                 << rewritten;
    std::abort();
  }
  return 0;
}
