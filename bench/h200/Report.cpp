//===- Report.cpp - moegen-bench-h200's tables ----------------------------===//

#include "bench/h200/Report.h"

#include "bench/h200/Floor.h"
#include "bench/h200/Peers.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

namespace moegen::bench {
namespace {

std::string us(double v) {
  return v >= 100 ? llvm::formatv("{0:F0}", v).str() : llvm::formatv("{0:F1}", v).str();
}

/// "PASS", "FAIL (stage1, layer)", "-" (not checked) or "ERROR".
std::string checkCell(const BenchRow &r) {
  if (!r.error.empty())
    return "ERROR";
  if (!r.check)
    return "-";
  if (r.check->passed())
    return "PASS";
  std::vector<std::string> failed;
  for (const StageCheck &s : r.check->stages)
    if (!s.result.passed)
      failed.push_back(s.stage);
  return "FAIL (" + llvm::join(failed, ", ") + ")";
}

} // namespace

void printLayerTable(llvm::raw_ostream &os, const MoeSpec &spec, llvm::ArrayRef<BenchRow> rows,
                     const Baseline *baseline) {
  const Problem &p = spec.problem;
  std::optional<PeerShape> shape = peerShapeOf(p);
  os << "### "
     << (shape ? "Shape " + shape->name.str() + " (" + shape->description.str() + "): "
               : std::string())
     << spec.name << " (model_dim " << p.modelDim << ", inter_dim " << p.interDim << ", "
     << p.experts << " experts, top-" << p.topk << "; " << toString(spec.formats.activation)
     << " x " << toString(spec.formats.weight) << ")\n\n";
  os << "| M | sets | experts hit | moegen us | check | torch us | tk_mxfp4 us | best peer us | "
        "moegen / best | mxfp4 floor us | % of floor | schedules |\n"
     << "|--:|--:|--:|--:|:--|--:|--:|--:|--:|--:|--:|:--|\n";
  std::vector<std::string> notes;
  for (const BenchRow &r : rows) {
    const bool measured = r.error.empty() && !r.callMs.empty();
    const double t = measured ? r.medianUs() : 0;
    std::string torch = "-";
    if (const BaselineRow *b = baseline ? baseline->find(p, r.tokens) : nullptr; b && b->us)
      torch = us(*b->us);
    std::string tk = "-", best = "-", ratio = "-";
    if (auto times = shape ? peerTimesAt(*shape, r.tokens) : std::nullopt) {
      tk = us(times->of(Peer::TkMxfp4));
      Peer b = times->best();
      best = us(times->of(b)) + " (" + toString(b).str() + ")";
      if (measured)
        ratio = llvm::formatv("{0:F2}", t / times->of(b)).str();
    }
    std::string floorUs = "-", share = "-";
    if (r.expertsHit > 0) {
      Floor f = mxfp4Floor(p, r.tokens, r.expertsHit);
      floorUs = us(f.us()) + (f.computeBound() ? " (fl)" : " (bw)");
      if (measured)
        share = llvm::formatv("{0:F0}%", 100 * f.us() / t).str();
    }
    os << "| " << r.tokens << " | " << r.sets << " | "
       << (r.expertsHit > 0 ? llvm::formatv("{0:F1}", r.expertsHit).str() : "-") << " | "
       << (measured ? us(t) : "-") << " | " << checkCell(r) << " | " << torch << " | " << tk
       << " | " << best << " | " << ratio << " | " << floorUs << " | " << share << " | "
       << (r.schedules.empty() ? "-" : r.schedules) << " |\n";
    if (!r.error.empty())
      notes.push_back(llvm::formatv("M={0}: {1}", r.tokens, r.error).str());
    else if (r.check && !r.check->passed())
      notes.push_back(llvm::formatv("M={0}: check of {1} of {0} tokens:\n{2}", r.tokens,
                                    r.check->checkedTokens, r.check->table())
                          .str());
  }
  os << "\n";
  for (const std::string &n : notes)
    os << n << "\n";
  if (!notes.empty())
    os << "\n";
}

void printShapeSummaries(llvm::raw_ostream &os, llvm::ArrayRef<LayerRows> layers,
                         const Baseline *baseline) {
  std::vector<std::string> shapesDone;
  for (const LayerRows &first : layers) {
    std::optional<PeerShape> shape = peerShapeOf(first.spec.problem);
    if (!shape || llvm::is_contained(shapesDone, shape->name.str()))
      continue;
    shapesDone.push_back(shape->name.str());
    std::vector<const LayerRows *> same;
    std::vector<int64_t> tokens;
    for (const LayerRows &l : layers) {
      std::optional<PeerShape> s = peerShapeOf(l.spec.problem);
      if (!s || s->name != shape->name)
        continue;
      same.push_back(&l);
      for (const BenchRow &r : l.rows)
        if (!llvm::is_contained(tokens, r.tokens))
          tokens.push_back(r.tokens);
    }
    os << "### Shape " << shape->name << " (" << shape->description
       << "): us per call (x the best peer)\n\n| M |";
    for (const LayerRows *l : same)
      os << " " << l->spec.name << " |";
    os << " torch | tk_mxfp4 | best peer |\n|--:|";
    for (size_t i = 0; i < same.size() + 3; ++i)
      os << "--:|";
    os << "\n";
    for (int64_t t : tokens) {
      std::optional<PeerTimes> peers = peerTimesAt(*shape, t);
      os << "| " << t << " |";
      for (const LayerRows *l : same) {
        const BenchRow *r = nullptr;
        for (const BenchRow &row : l->rows)
          if (row.tokens == t)
            r = &row;
        std::string cell = "-";
        if (r && !r->error.empty())
          cell = "ERROR";
        else if (r && !r->callMs.empty()) {
          cell = us(r->medianUs());
          if (peers)
            cell += llvm::formatv(" ({0:F2}x)", r->medianUs() / peers->of(peers->best())).str();
          if (r->check && !r->check->passed())
            cell += " FAIL";
        }
        os << " " << cell << " |";
      }
      const BaselineRow *b = baseline ? baseline->find(first.spec.problem, t) : nullptr;
      os << " " << (b && b->us ? us(*b->us) : "-") << " | "
         << (peers ? us(peers->of(Peer::TkMxfp4)) : "-") << " | "
         << (peers ? us(peers->of(peers->best())) + " (" + toString(peers->best()).str() + ")"
                   : "-")
         << " |\n";
    }
    os << "\n";
  }
}

} // namespace moegen::bench
