//===- Report.cpp - The kernel resource table -----------------------------===//

#include "tools/moegen/Report.h"

#include "llvm/Support/Format.h"

#include <algorithm>

namespace moegen::cli {

void printReport(llvm::raw_ostream &os, const std::vector<ReportRow> &rows) {
  size_t width = 6;
  for (const ReportRow &r : rows)
    width = std::max(width, r.resources.symbol.size());
  os << llvm::left_justify("kernel", width)
     << "   VGPR   AGPR   SGPR      LDS  scratch   code  waves/SIMD  compile ms\n";
  for (const ReportRow &r : rows) {
    const KernelResources &k = r.resources;
    os << llvm::left_justify(k.symbol, width)
       << llvm::format("  %5lld  %5lld  %5lld  %7lld  %7lld  %5lld  %10lld", (long long)k.vgprs,
                       (long long)k.agprs, (long long)k.sgprs, (long long)k.ldsBytes,
                       (long long)k.scratchBytes, (long long)k.codeBytes,
                       (long long)occupancyFromRegisters(k));
    if (r.compileMs)
      os << llvm::format("  %10.1f", *r.compileMs);
    else
      os << "           -";
    os << "\n";
  }
}

} // namespace moegen::cli
