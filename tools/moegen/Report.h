//===- Report.h - The kernel resource table ---------------------*- C++ -*-===//
#ifndef MOEGEN_TOOLS_MOEGEN_REPORT_H
#define MOEGEN_TOOLS_MOEGEN_REPORT_H

#include "compiler/target/CodeObjectInfo.h"

#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <vector>

namespace moegen::cli {

struct ReportRow {
  KernelResources resources;
  std::optional<double> compileMs; // absent for `moegen inspect`
};

/// Prints one line per kernel: symbol, VGPR, AGPR, SGPR, LDS bytes, scratch
/// bytes, code bytes, waves/SIMD its registers allow, compile ms.
void printReport(llvm::raw_ostream &os, const std::vector<ReportRow> &rows);

} // namespace moegen::cli

#endif // MOEGEN_TOOLS_MOEGEN_REPORT_H
