//===- Report.h - moegen-bench-h200's tables ---------------------*- C++ -*-===//
//
// One markdown table per layer: per token count, moegen's median time per
// call and its check, the torch baseline of the same run (when given), the
// published tk_mxfp4 and best-peer times (Peers.h), moegen over the best
// peer, and the mxfp4 floor (Floor.h) with the share of it moegen reaches.
// Rows whose check failed or that could not run are marked, with the reason
// under the table.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_BENCH_H200_REPORT_H
#define MOEGEN_BENCH_H200_REPORT_H

#include "bench/h200/Baseline.h"
#include "bench/h200/LayerBench.h"

#include "llvm/Support/raw_ostream.h"

namespace moegen::bench {

void printLayerTable(llvm::raw_ostream &os, const MoeSpec &spec, llvm::ArrayRef<BenchRow> rows,
                     const Baseline *baseline);

struct LayerRows {
  MoeSpec spec;
  std::vector<BenchRow> rows;
};

/// Per shape of the peers' document, the layers of that shape side by side:
/// per token count, each layer's time per call and its ratio to the best peer
/// ("FAIL" after a failed check, "ERROR" for a row that did not run), then
/// torch, tk_mxfp4 and the best peer. Layers of other shapes are left out.
void printShapeSummaries(llvm::raw_ostream &os, llvm::ArrayRef<LayerRows> layers,
                         const Baseline *baseline);

} // namespace moegen::bench

#endif // MOEGEN_BENCH_H200_REPORT_H
