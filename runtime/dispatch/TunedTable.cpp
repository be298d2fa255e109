//===- TunedTable.cpp - aiter's fmoe tuned tables -------------------------===//

#include "runtime/dispatch/TunedTable.h"

#include "compiler/spec/InputFile.h"
#include "runtime/dispatch/Tiers.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MemoryBuffer.h"

namespace moegen::dispatch {

namespace {

constexpr llvm::StringRef kTuned[] = {
    "gfx",      "cu_num", "token",      "model_dim",   "inter_dim", "expert",   "topk",
    "act_type", "dtype",  "q_dtype_a",  "q_dtype_w",   "q_type",    "use_g1u1", "doweight_stage1",
    "block_m",  "ksplit", "us1",        "kernelName1", "err1",      "us2",      "kernelName2",
    "err2",     "us",     "run_1stage", "xbf16",       "flat",      "tflops",   "bw"};
constexpr llvm::StringRef kUntuned[] = {"token",     "model_dim", "inter_dim", "expert",
                                        "topk",      "act_type",  "dtype",     "q_dtype_a",
                                        "q_dtype_w", "q_type",    "use_g1u1",  "doweight_stage1"};
constexpr llvm::StringRef kIntResults[] = {"block_m", "ksplit", "run_1stage", "xbf16", "flat"};
constexpr llvm::StringRef kFloatResults[] = {"us1", "us2", "us", "tflops", "bw"};

struct Field {
  std::string text;
  unsigned column; // 1-based character column of the field's start
};

/// Splits the CSV record that starts at text[pos] (RFC 4180: a quoted field
/// may hold ',', '"', CR and LF) and advances pos past it and lineNo past
/// every line it spans. Errors read "file:line:col: ...".
llvm::Expected<std::vector<Field>> splitCsvRecord(llvm::StringRef text, size_t &pos,
                                                  unsigned &lineNo, llvm::StringRef file) {
  std::vector<Field> out;
  size_t lineStart = pos;
  auto error = [&](size_t at, const char *msg) {
    return llvm::createStringError("%s:%u:%zu: %s", file.str().c_str(), lineNo, at - lineStart + 1,
                                   msg);
  };
  auto atLineEnd = [&](size_t i) {
    return i >= text.size() || text[i] == '\n' ||
           (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] == '\n'));
  };
  while (true) {
    Field f{std::string(), static_cast<unsigned>(pos - lineStart + 1)};
    if (pos < text.size() && text[pos] == '"') {
      size_t open = pos++;
      unsigned openLine = lineNo;
      size_t openLineStart = lineStart;
      while (true) {
        if (pos >= text.size()) {
          lineNo = openLine;
          lineStart = openLineStart;
          return error(open, "unterminated quoted field");
        }
        char c = text[pos++];
        if (c == '"') {
          if (pos < text.size() && text[pos] == '"') {
            f.text += '"';
            ++pos;
            continue;
          }
          break;
        }
        if (c == '\n') {
          ++lineNo;
          lineStart = pos;
        }
        f.text += c;
      }
      if (pos < text.size() && text[pos] != ',' && !atLineEnd(pos))
        return error(pos, "expected ',' after a quoted field");
    } else {
      size_t end = std::min(text.find_first_of(",\n", pos), text.size());
      f.text = text.slice(pos, end).str();
      if (atLineEnd(end) && llvm::StringRef(f.text).ends_with("\r"))
        f.text.pop_back(); // CRLF line end
      pos = end;
    }
    out.push_back(std::move(f));
    if (pos < text.size() && text[pos] == '\r')
      ++pos; // CRLF after a quoted field
    if (pos >= text.size())
      break;
    if (text[pos++] == '\n') {
      ++lineNo;
      break;
    }
  }
  return out;
}

/// Reads the header record: its columns must be distinct and include every
/// key column the table's lookup uses (a tuned table may lack only gfx, which
/// legacy tables backfill from cu_num).
llvm::Error readHeader(llvm::ArrayRef<Field> fields, llvm::StringRef file, unsigned lineNo,
                       std::vector<std::string> &header) {
  for (const Field &f : fields) {
    if (llvm::is_contained(header, f.text))
      return llvm::createStringError("%s:%u:%u: column '%s' appears twice in the header",
                                     file.str().c_str(), lineNo, f.column, f.text.c_str());
    header.push_back(f.text);
  }
  bool untuned = !llvm::is_contained(header, "kernelName1");
  for (llvm::StringRef col :
       untuned ? llvm::ArrayRef(kUntuned) : llvm::ArrayRef(kTuned).slice(1, 13))
    if (!llvm::is_contained(header, col))
      return llvm::createStringError("%s:%u:1: header lacks the key column '%s'",
                                     file.str().c_str(), lineNo, col.str().c_str());
  return llvm::Error::success();
}

} // namespace

std::string csvQuote(llvm::StringRef s) {
  if (s.find_first_of(",\"\r\n") == llvm::StringRef::npos)
    return s.str();
  std::string q = "\"";
  for (char c : s) {
    if (c == '"')
      q += '"';
    q += c;
  }
  return q + "\"";
}

llvm::ArrayRef<llvm::StringRef> tunedColumns() { return kTuned; }
llvm::ArrayRef<llvm::StringRef> untunedColumns() { return kUntuned; }
llvm::ArrayRef<llvm::StringRef> keyColumns() { return llvm::ArrayRef(kTuned).take_front(14); }

llvm::StringRef gfxFromCuNum(int64_t cuNum) {
  switch (cuNum) {
  case 80:
  case 228:
  case 304:
    return "gfx942";
  case 256:
    return "gfx950";
  default:
    return "";
  }
}

std::string TunedKey::str(bool ignoreAct) const {
  std::string s;
  for (const std::string &part :
       {gfx, std::to_string(cuNum), std::to_string(token), std::to_string(modelDim),
        std::to_string(interDim), std::to_string(expert), std::to_string(topk),
        ignoreAct ? std::string("__ignore__") : actType, dtype, qDtypeA, qDtypeW, qType,
        std::to_string(useG1U1), std::to_string(doweightStage1)})
    s += part + "|";
  return s;
}

std::string TunedRow::get(llvm::StringRef column) const {
  auto it = values.find(column);
  return it == values.end() ? std::string() : it->second;
}

std::optional<int64_t> TunedRow::getInt(llvm::StringRef column) const {
  int64_t v;
  std::string s = get(column);
  if (s.empty() || llvm::StringRef(s).getAsInteger(10, v))
    return std::nullopt;
  return v;
}

llvm::Expected<TunedTable> TunedTable::parse(llvm::StringRef text, llvm::StringRef file) {
  TunedTable table;
  text.consume_front("\xEF\xBB\xBF"); // a UTF-8 byte order mark
  std::vector<std::string> header;
  unsigned nextLine = 1;
  for (size_t pos = 0; pos < text.size();) {
    unsigned lineNo = nextLine;
    auto fields = splitCsvRecord(text, pos, nextLine, file);
    if (!fields)
      return fields.takeError();
    if (fields->size() == 1 && llvm::StringRef(fields->front().text).trim().empty())
      continue; // a blank line
    if (header.empty()) {
      if (auto err = readHeader(*fields, file, lineNo, header))
        return std::move(err);
      table.untuned = !llvm::is_contained(header, "kernelName1");
      table.tagColumn = llvm::is_contained(header, "_tag");
      table.columnsRead = header;
      if (table.untuned)
        table.warns.push_back(file.str() +
                              ": an untuned table (no kernelName1): it names no kernels, so "
                              "lookups never match it");
      continue;
    }
    if (fields->size() != header.size()) {
      unsigned col =
          fields->size() > header.size() ? (*fields)[header.size()].column : fields->back().column;
      return llvm::createStringError("%s:%u:%u: row has %zu fields, the header has %zu",
                                     file.str().c_str(), lineNo, col, fields->size(),
                                     header.size());
    }
    auto row = std::make_unique<TunedRow>();
    row->file = file.str();
    row->line = lineNo;
    for (size_t c = 0; c < header.size(); ++c)
      row->values[header[c]] = (*fields)[c].text;
    auto fieldOf = [&](llvm::StringRef col) -> const Field * {
      auto it = llvm::find(header, col);
      return it == header.end() ? nullptr : &(*fields)[it - header.begin()];
    };
    auto intCol = [&](llvm::StringRef col, int64_t &out, bool required) -> llvm::Error {
      const Field *f = fieldOf(col);
      if (!f || (f->text.empty() && !required))
        return llvm::Error::success();
      if (llvm::StringRef(f->text).trim().getAsInteger(10, out))
        return llvm::createStringError("%s:%u:%u: column '%s' expects an integer, got '%s'",
                                       file.str().c_str(), lineNo, f->column, col.str().c_str(),
                                       f->text.c_str());
      return llvm::Error::success();
    };
    TunedKey &k = row->key;
    int64_t scratch = 0;
    for (auto [col, field] : {std::pair{"cu_num", &k.cuNum},
                              {"token", &k.token},
                              {"model_dim", &k.modelDim},
                              {"inter_dim", &k.interDim},
                              {"expert", &k.expert},
                              {"topk", &k.topk},
                              {"use_g1u1", &k.useG1U1},
                              {"doweight_stage1", &k.doweightStage1}})
      if (auto err = intCol(col, *field, llvm::StringRef(col) != "cu_num"))
        return std::move(err);
    for (llvm::StringRef col : kIntResults)
      if (auto err = intCol(col, scratch, false))
        return std::move(err);
    for (llvm::StringRef col : kFloatResults) {
      const Field *f = fieldOf(col);
      double d;
      if (f && !f->text.empty() && llvm::StringRef(f->text).trim().getAsDouble(d))
        return llvm::createStringError("%s:%u:%u: column '%s' expects a number, got '%s'",
                                       file.str().c_str(), lineNo, f->column, col.str().c_str(),
                                       f->text.c_str());
    }
    k.actType = row->get("act_type");
    k.dtype = row->get("dtype");
    k.qDtypeA = row->get("q_dtype_a");
    k.qDtypeW = row->get("q_dtype_w");
    k.qType = row->get("q_type");
    k.gfx = row->get("gfx");
    if (k.gfx.empty())
      k.gfx = gfxFromCuNum(k.cuNum).str();
    if (k.gfx.empty() && !table.untuned)
      table.warns.push_back(row->location() + ": no gfx, and cu_num " + std::to_string(k.cuNum) +
                            " names no known chip; this row never matches a lookup");
    table.index(row.get());
    table.rowList.push_back(std::move(row));
  }
  if (header.empty())
    return llvm::createStringError("%s:1:1: empty table (no header)", file.str().c_str());
  return table;
}

void TunedTable::index(TunedRow *row) {
  if (row->get("_tag") == "flydsl_fallback")
    return;
  auto [it, inserted] = exact.try_emplace(row->key.str(), row);
  if (!inserted)
    dupes.push_back({row, it->second});
  actAgnostic.try_emplace(row->key.str(/*ignoreAct=*/true), row);
}

llvm::Expected<TunedTable> TunedTable::load(llvm::StringRef path) {
  // aiter's largest tables are a few MiB.
  auto buf = readInputFile(path, 256 << 20, /*isText=*/true);
  if (!buf)
    return buf.takeError();
  return parse((*buf)->getBuffer(), path);
}

llvm::Expected<TunedTable> TunedTable::loadAll(llvm::ArrayRef<std::string> paths) {
  TunedTable all;
  bool first = true;
  for (const std::string &p : paths) {
    auto t = load(p);
    if (!t)
      return t.takeError();
    if (first) {
      all = std::move(*t);
      first = false;
    } else {
      all.append(std::move(*t));
    }
  }
  return all;
}

void TunedTable::append(TunedTable &&other) {
  untuned = untuned && other.untuned;
  tagColumn = tagColumn || other.tagColumn;
  for (const std::string &col : other.columnsRead)
    if (!llvm::is_contained(columnsRead, col))
      columnsRead.push_back(col);
  llvm::append_range(warns, other.warns);
  for (auto &row : other.rowList) {
    index(row.get());
    rowList.push_back(std::move(row));
  }
  other.rowList.clear();
}

static std::string duplicateLine(const TunedRow &row, const TunedRow &kept) {
  return row.location() + ": duplicate key of " + kept.location() + " (kept the first)";
}

std::vector<std::string> TunedTable::duplicates() const {
  std::vector<std::string> lines;
  for (const auto &[row, kept] : dupes)
    lines.push_back(duplicateLine(*row, *kept));
  return lines;
}

std::vector<std::string> TunedTable::duplicatesOf(const TunedKey &query) const {
  std::vector<std::string> lines;
  for (const auto &[row, kept] : dupes) {
    TunedKey k = query;
    k.token = row->key.token;
    if (k.str() == row->key.str())
      lines.push_back(duplicateLine(*row, *kept));
  }
  return lines;
}

LookupResult TunedTable::lookup(const TunedKey &query, int64_t tokens) const {
  LookupResult r;
  r.tokens = tokens;
  r.paddedM = paddedM(tokens);
  for (int64_t token : tierFallbackOrder(tokens)) {
    TunedKey k = query;
    k.token = token;
    for (bool agnostic : {false, true}) {
      const auto &map = agnostic ? actAgnostic : exact;
      auto it = map.find(k.str(agnostic));
      const TunedRow *hit = it == map.end() ? nullptr : it->second;
      r.steps.push_back({token, agnostic, hit});
      if (hit) {
        r.row = hit;
        return r;
      }
    }
  }
  return r;
}

std::vector<llvm::StringRef> TunedTable::writtenColumns() const {
  std::vector<llvm::StringRef> cols;
  if (untuned)
    for (llvm::StringRef key : {"gfx", "cu_num"})
      if (llvm::is_contained(columnsRead, key))
        cols.push_back(key);
  llvm::append_range(cols, untuned ? llvm::ArrayRef(kUntuned) : llvm::ArrayRef(kTuned));
  for (const std::string &col : columnsRead)
    if (col != "_tag" && !llvm::is_contained(cols, col))
      cols.push_back(col);
  if (tagColumn)
    cols.push_back("_tag");
  return cols;
}

std::string TunedTable::write() const {
  std::vector<llvm::StringRef> cols = writtenColumns();
  std::string out;
  for (size_t c = 0; c < cols.size(); ++c)
    out += (c ? "," : "") + csvQuote(cols[c]);
  out += "\n";
  for (const auto &row : rowList) {
    for (size_t c = 0; c < cols.size(); ++c) {
      std::string v;
      auto it = row->values.find(cols[c]);
      if (it != row->values.end())
        v = it->second;
      else if (cols[c] == "gfx")
        v = row->key.gfx;
      else if (cols[c] == "xbf16" || cols[c] == "flat" || cols[c] == "run_1stage" ||
               cols[c] == "ksplit")
        v = "0";
      out += (c ? "," : "") + csvQuote(v);
    }
    out += "\n";
  }
  return out;
}

} // namespace moegen::dispatch
