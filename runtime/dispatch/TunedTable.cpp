//===- TunedTable.cpp - aiter's fmoe tuned tables -------------------------===//

#include "runtime/dispatch/TunedTable.h"

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

/// Splits one CSV line (RFC 4180 quoting). Returns an error message and the
/// column on malformed quoting.
llvm::Expected<std::vector<Field>> splitCsvLine(llvm::StringRef line, llvm::StringRef file,
                                                unsigned lineNo) {
  std::vector<Field> out;
  size_t i = 0;
  while (true) {
    Field f{std::string(), static_cast<unsigned>(i + 1)};
    if (i < line.size() && line[i] == '"') {
      ++i;
      while (true) {
        if (i >= line.size())
          return llvm::createStringError("%s:%u:%u: unterminated quoted field", file.str().c_str(),
                                         lineNo, f.column);
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            f.text += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        f.text += line[i++];
      }
      if (i < line.size() && line[i] != ',')
        return llvm::createStringError("%s:%u:%zu: expected ',' after a quoted field",
                                       file.str().c_str(), lineNo, i + 1);
    } else {
      size_t end = line.find(',', i);
      if (end == llvm::StringRef::npos)
        end = line.size();
      f.text = line.slice(i, end).str();
      i = end;
    }
    out.push_back(std::move(f));
    if (i >= line.size())
      break;
    ++i; // the comma
  }
  return out;
}

std::string csvQuote(llvm::StringRef s) {
  if (s.find_first_of(",\"\n") == llvm::StringRef::npos)
    return s.str();
  std::string q = "\"";
  for (char c : s) {
    if (c == '"')
      q += '"';
    q += c;
  }
  return q + "\"";
}

} // namespace

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
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  std::vector<std::string> header;
  unsigned lineNo = 0;
  for (llvm::StringRef raw : lines) {
    ++lineNo;
    llvm::StringRef line = raw.rtrim("\r");
    if (line.trim().empty())
      continue;
    auto fields = splitCsvLine(line, file, lineNo);
    if (!fields)
      return fields.takeError();
    if (header.empty()) {
      for (const Field &f : *fields) {
        if (llvm::is_contained(header, f.text))
          return llvm::createStringError("%s:%u:%u: column '%s' appears twice in the header",
                                         file.str().c_str(), lineNo, f.column, f.text.c_str());
        header.push_back(f.text);
      }
      for (llvm::StringRef col : kUntuned)
        if (!llvm::is_contained(header, col))
          return llvm::createStringError("%s:%u:1: header lacks the key column '%s'",
                                         file.str().c_str(), lineNo, col.str().c_str());
      table.untuned = !llvm::is_contained(header, "kernelName1");
      table.tagColumn = llvm::is_contained(header, "_tag");
      continue;
    }
    if (fields->size() != header.size()) {
      unsigned col = fields->size() > header.size() ? (*fields)[header.size()].column
                                                    : static_cast<unsigned>(line.size() + 1);
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
    dupes.push_back(row->location() + ": duplicate key of " + it->second->location() +
                    " (kept the first)");
  actAgnostic.try_emplace(row->key.str(/*ignoreAct=*/true), row);
}

llvm::Expected<TunedTable> TunedTable::load(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buf)
    return llvm::createStringError(buf.getError(), "%s: cannot read: %s", path.str().c_str(),
                                   buf.getError().message().c_str());
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
  for (auto &row : other.rowList) {
    index(row.get());
    rowList.push_back(std::move(row));
  }
  other.rowList.clear();
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

std::string TunedTable::write() const {
  std::vector<llvm::StringRef> cols(untuned ? llvm::ArrayRef(kUntuned) : llvm::ArrayRef(kTuned));
  if (tagColumn)
    cols.push_back("_tag");
  std::string out;
  for (size_t c = 0; c < cols.size(); ++c)
    out += (c ? "," : "") + cols[c].str();
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
