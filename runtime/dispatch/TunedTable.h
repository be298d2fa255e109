//===- TunedTable.h - aiter's fmoe tuned tables -----------------*- C++ -*-===//
//
// Reads and writes aiter's *tuned_fmoe.csv / *untuned_fmoe.csv tables
// unchanged: columns are found by header name (legacy tables without gfx,
// xbf16 or flat; the optional _tag column), string values are kept verbatim
// (ActivationType.*, torch.*, QuantType.*). A missing gfx is backfilled from
// cu_num as aiter does (80/228/304 -> gfx942, 256 -> gfx950).
//
// Rows are indexed by the 14 key columns (gfx, cu_num, token, model_dim,
// inter_dim, expert, topk, act_type, dtype, q_dtype_a, q_dtype_w, q_type,
// use_g1u1, doweight_stage1) and by the same key with act_type ignored.
// Duplicate keys keep the first row and are reported with both locations.
// Rows tagged "flydsl_fallback" are kept but never indexed.
//
// Lookup order (aiter's get_2stage_cfgs): for each token key of
// tierFallbackOrder(M): the exact key, then the act_type-agnostic key.
// Unlike aiter (whose exact lookup compares an enum with a string and so
// always misses) moegen compares canonical strings, so the exact key is
// really tried first.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_DISPATCH_TUNEDTABLE_H
#define MOEGEN_RUNTIME_DISPATCH_TUNEDTABLE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace moegen::dispatch {

/// aiter's column order of a tuned table (the 14 keys, then the results).
llvm::ArrayRef<llvm::StringRef> tunedColumns();
/// The columns of an untuned table.
llvm::ArrayRef<llvm::StringRef> untunedColumns();
/// A CSV field as written (RFC 4180): quoted when it holds a comma, a quote
/// or a line break, with its quotes doubled.
std::string csvQuote(llvm::StringRef s);
/// The 14 key columns.
llvm::ArrayRef<llvm::StringRef> keyColumns();

struct TunedKey {
  std::string gfx;
  int64_t cuNum = 0, token = 0, modelDim = 0, interDim = 0, expert = 0, topk = 0;
  std::string actType, dtype, qDtypeA, qDtypeW, qType;
  int64_t useG1U1 = 0, doweightStage1 = 0;

  /// The key as one string; with ignoreAct the act_type is "__ignore__".
  std::string str(bool ignoreAct = false) const;
};

struct TunedRow {
  std::string file;
  unsigned line = 0;
  TunedKey key;
  /// Every column of the source row, verbatim, by header name.
  llvm::StringMap<std::string> values;
  std::string get(llvm::StringRef column) const;
  std::optional<int64_t> getInt(llvm::StringRef column) const;
  std::string location() const { return file + ":" + std::to_string(line); }
};

struct LookupStep {
  int64_t token;
  bool actAgnostic;
  const TunedRow *hit;
};

struct LookupResult {
  int64_t tokens = 0, paddedM = 0;
  std::vector<LookupStep> steps; // in the order tried; the last may hit
  const TunedRow *row = nullptr; // nullptr: no row, aiter's heuristic applies
  bool viaActAgnostic() const { return row && steps.back().actAgnostic; }
  int64_t tokenKeyUsed() const { return row ? steps.back().token : 0; }
};

class TunedTable {
public:
  /// Parses CSV text; errors read "file:line:col: message".
  static llvm::Expected<TunedTable> parse(llvm::StringRef text, llvm::StringRef fileName);
  static llvm::Expected<TunedTable> load(llvm::StringRef path);
  /// Loads and concatenates tables in order (aiter's merge).
  static llvm::Expected<TunedTable> loadAll(llvm::ArrayRef<std::string> paths);

  /// Appends the rows of `other` (their duplicates are reported against this
  /// table's rows).
  void append(TunedTable &&other);

  const std::vector<std::unique_ptr<TunedRow>> &rows() const { return rowList; }
  /// "a.csv:7: duplicate key of a.csv:3 (kept the first)" lines.
  std::vector<std::string> duplicates() const;
  /// Those of the lines whose rows have `query`'s key at any token: the rows
  /// a lookup for that problem never returns.
  std::vector<std::string> duplicatesOf(const TunedKey &query) const;
  /// Rows that load but can never match, e.g. "a.csv:7: no gfx, and cu_num 12
  /// names no known chip; this row never matches a lookup".
  const std::vector<std::string> &warnings() const { return warns; }
  bool isUntuned() const { return untuned; }
  bool hasTagColumn() const { return tagColumn; }

  /// Looks a problem up for `tokens` real tokens; query.token is ignored.
  LookupResult lookup(const TunedKey &query, int64_t tokens) const;

  /// The table as CSV (RFC 4180 quoting) in aiter's column order (untuned
  /// tables keep the untuned columns, and gfx, cu_num when they had them),
  /// then every other column read, then _tag when the table had it.
  std::string write() const;

private:
  void index(TunedRow *row);
  std::vector<llvm::StringRef> writtenColumns() const;
  std::vector<std::unique_ptr<TunedRow>> rowList;
  llvm::StringMap<const TunedRow *> exact, actAgnostic;
  std::vector<std::string> warns;
  // Rows whose key an earlier row has: (the row, the row kept).
  std::vector<std::pair<const TunedRow *, const TunedRow *>> dupes;
  std::vector<std::string> columnsRead; // every header column, in file order
  bool untuned = false, tagColumn = false;
};

/// aiter's gfx name for a CU count, or "" when unknown.
llvm::StringRef gfxFromCuNum(int64_t cuNum);

} // namespace moegen::dispatch

#endif // MOEGEN_RUNTIME_DISPATCH_TUNEDTABLE_H
