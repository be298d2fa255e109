//===- Baseline.cpp - The torch baseline's CSV ----------------------------===//

#include "bench/h200/Baseline.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

namespace moegen::bench {
namespace {

llvm::Error lineError(llvm::StringRef source, size_t line, const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 source + ":" + llvm::Twine(line) + ": " + msg);
}

} // namespace

llvm::Expected<Baseline> Baseline::parse(llvm::StringRef text, llvm::StringRef source) {
  Baseline b;
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  bool header = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    llvm::StringRef line = lines[i].trim();
    if (line.empty())
      continue;
    if (!header) {
      if (line != kBaselineHeader)
        return lineError(source, i + 1, "expected the header '" + kBaselineHeader + "'");
      header = true;
      continue;
    }
    llvm::SmallVector<llvm::StringRef> f;
    line.split(f, ',');
    if (f.size() != 9)
      return lineError(source, i + 1, llvm::Twine(f.size()) + " fields, expected 9");
    static const char *const names[] = {"model_dim", "inter_dim", "experts",
                                        "topk",      "tokens",    "sets"};
    int64_t v[6];
    for (int j = 0; j < 6; ++j)
      if (f[j + 1].trim().getAsInteger(10, v[j]) || v[j] <= 0)
        return lineError(source, i + 1,
                         llvm::Twine(names[j]) + " '" + f[j + 1] + "' is not a positive integer");
    BaselineRow row;
    row.shape = f[0].trim().str();
    row.sets = v[5];
    for (auto [field, name, out] :
         {std::tuple{f[7], "torch_us", &row.us}, std::tuple{f[8], "rel_err", &row.relErr}}) {
      llvm::StringRef s = field.trim();
      if (s.empty())
        continue;
      double d = 0;
      if (s.getAsDouble(d) || !(d >= 0))
        return lineError(source, i + 1,
                         llvm::Twine(name) + " '" + s + "' is not a non-negative number");
      *out = d;
    }
    Key key{v[0], v[1], v[2], v[3], v[4]};
    if (!b.rows.emplace(key, std::move(row)).second)
      return lineError(source, i + 1, "a second row for this shape and token count");
  }
  if (!header)
    return lineError(source, 1, "empty; expected the header '" + kBaselineHeader + "'");
  return b;
}

llvm::Expected<Baseline> Baseline::read(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    return llvm::createStringError(buf.getError(), "cannot read the baseline '" + path +
                                                       "': " + buf.getError().message());
  return parse((*buf)->getBuffer(), path);
}

const BaselineRow *Baseline::find(const Problem &p, int64_t tokens) const {
  auto it = rows.find(Key{p.modelDim, p.interDim, p.experts, p.topk, tokens});
  return it == rows.end() ? nullptr : &it->second;
}

} // namespace moegen::bench
