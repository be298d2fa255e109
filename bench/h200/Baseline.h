//===- Baseline.h - The torch baseline's CSV --------------------*- C++ -*-===//
//
// bench/h200/torch_baseline.py times a plain-torch MoE on the same shapes,
// token counts and rotation in the same device run, and prints one CSV row
// per (shape, tokens):
//
//   shape,model_dim,inter_dim,experts,topk,tokens,sets,torch_us,rel_err
//   A,3584,384,896,16,1,8,98.7,0.0046
//
// torch_us and rel_err are empty in its --plan output (the rows it would
// time). moegen-bench-h200 --baseline FILE reads it to add a torch column.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_BENCH_H200_BASELINE_H
#define MOEGEN_BENCH_H200_BASELINE_H

#include "compiler/spec/Spec.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>
#include <tuple>

namespace moegen::bench {

constexpr llvm::StringLiteral kBaselineHeader =
    "shape,model_dim,inter_dim,experts,topk,tokens,sets,torch_us,rel_err";

struct BaselineRow {
  std::string shape;
  int64_t sets = 0;
  std::optional<double> us;     // median per call
  std::optional<double> relErr; // relative Frobenius error against the f32 reference
};

class Baseline {
public:
  /// Parses the CSV text; errors name `source`, the line and the field.
  static llvm::Expected<Baseline> parse(llvm::StringRef text, llvm::StringRef source);
  static llvm::Expected<Baseline> read(llvm::StringRef path);

  const BaselineRow *find(const Problem &p, int64_t tokens) const;
  size_t size() const { return rows.size(); }

private:
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>;
  std::map<Key, BaselineRow> rows;
};

} // namespace moegen::bench

#endif // MOEGEN_BENCH_H200_BASELINE_H
