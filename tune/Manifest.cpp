//===- Manifest.cpp - What a tuning run compiled --------------------------===//

#include "tune/Manifest.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

namespace moegen::tune {

static std::string oneField(llvm::StringRef s) {
  std::string out = s.str();
  for (char &c : out)
    if (c == '\t' || c == '\n' || c == '\r')
      c = ' ';
  return out;
}

std::string Manifest::print() const {
  std::string out = "moegen-tune-manifest\t1\n";
  out += "spec\t" + oneField(specFile) + "\n";
  out += "target\t" + oneField(chip) + "\t" + oneField(gfx) + "\t" + std::to_string(cuNum) + "\n";
  out += "tokens\t" +
         llvm::join(llvm::map_range(tokens, [](int64_t t) { return std::to_string(t); }), ",") +
         "\n";
  for (size_t i = 0; i < candidates.size(); ++i) {
    const ManifestCandidate &c = candidates[i];
    out += llvm::formatv("candidate\t{0}\t{1}\t{2}\t{3}\t{4}\t{5}\n", i,
                         c.stage == StageId::Stage1 ? "s1" : "s2", c.blockM, oneField(c.file),
                         oneField(c.kernelName), oneField(c.id))
               .str();
  }
  for (const auto &[t, list] : order)
    out += "order\t" + std::to_string(t) + "\t" +
           llvm::join(llvm::map_range(list, [](size_t n) { return std::to_string(n); }), ",") +
           "\n";
  for (const ManifestPair &p : pairs)
    out += llvm::formatv("pair\t{0}\t{1}\t{2}\t{3}\t{4}\n", p.blockM, p.s1, p.s2, oneField(p.file),
                         oneField(p.id))
               .str();
  for (const auto &[t, r] : incumbents)
    out += llvm::formatv("incumbent\t{0}\t{1}\t{2}\t{3}\t{4}\n", t, oneField(r.file),
                         oneField(r.kernelName1), oneField(r.kernelName2), oneField(r.id))
               .str();
  for (const auto &[id, reason] : failed)
    out += "failed\t" + oneField(id) + "\t" + oneField(reason) + "\n";
  return out;
}

llvm::Expected<Manifest> Manifest::parse(llvm::StringRef text, llvm::StringRef name) {
  Manifest m;
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n', -1, false);
  auto bad = [&](size_t line, const llvm::Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   name + ":" + llvm::Twine(line + 1) + ": " + why);
  };
  if (lines.empty() || lines[0] != "moegen-tune-manifest\t1")
    return bad(0, "not a moegen tune manifest (version 1)");
  auto index = [&](llvm::StringRef s, size_t line, size_t &out) -> llvm::Error {
    unsigned long long n;
    if (s.getAsInteger(10, n) || n >= m.candidates.size())
      return bad(line, "'" + s + "' is not a candidate of the lines above");
    out = size_t(n);
    return llvm::Error::success();
  };
  for (size_t i = 1; i < lines.size(); ++i) {
    // print() writes no carriage return (a field cannot hold one).
    if (lines[i].contains('\r'))
      return bad(i, "a carriage return in the line");
    llvm::SmallVector<llvm::StringRef> f;
    lines[i].split(f, '\t');
    llvm::StringRef kind = f[0];
    auto fields = [&](size_t n) { return f.size() == n; };
    if (kind == "spec" && fields(2)) {
      m.specFile = f[1].str();
    } else if (kind == "target" && fields(4)) {
      m.chip = f[1].str();
      m.gfx = f[2].str();
      if (f[3].getAsInteger(10, m.cuNum) || m.cuNum < 1)
        return bad(i, "cu_num '" + f[3] + "' is not a positive integer");
    } else if (kind == "tokens" && fields(2)) {
      llvm::SmallVector<llvm::StringRef> ts;
      f[1].split(ts, ',');
      for (llvm::StringRef t : ts) {
        int64_t v;
        if (t.getAsInteger(10, v) || v < 1)
          return bad(i, "token count '" + t + "' is not a positive integer");
        m.tokens.push_back(v);
      }
    } else if (kind == "candidate" && fields(7)) {
      ManifestCandidate c;
      size_t n;
      if (f[1].getAsInteger(10, n) || n != m.candidates.size())
        return bad(i, "candidate number '" + f[1] + "' is out of sequence");
      if (f[2] != "s1" && f[2] != "s2")
        return bad(i, "stage '" + f[2] + "' is neither s1 nor s2");
      c.stage = f[2] == "s1" ? StageId::Stage1 : StageId::Stage2;
      if (f[3].getAsInteger(10, c.blockM) || c.blockM < 1)
        return bad(i, "block_m '" + f[3] + "' is not a positive integer");
      c.file = f[4].str();
      c.kernelName = f[5].str();
      c.id = f[6].str();
      m.candidates.push_back(std::move(c));
    } else if (kind == "order" && fields(3)) {
      int64_t t;
      if (f[1].getAsInteger(10, t) || t < 1)
        return bad(i, "token count '" + f[1] + "' is not a positive integer");
      llvm::SmallVector<llvm::StringRef> ns;
      f[2].split(ns, ',', -1, false);
      for (llvm::StringRef s : ns) {
        size_t n;
        if (llvm::Error e = index(s, i, n))
          return std::move(e);
        m.order[t].push_back(n);
      }
    } else if (kind == "pair" && fields(6)) {
      ManifestPair p;
      if (f[1].getAsInteger(10, p.blockM) || p.blockM < 1)
        return bad(i, "block_m '" + f[1] + "' is not a positive integer");
      if (llvm::Error e = index(f[2], i, p.s1))
        return std::move(e);
      if (llvm::Error e = index(f[3], i, p.s2))
        return std::move(e);
      p.file = f[4].str();
      p.id = f[5].str();
      m.pairs.push_back(std::move(p));
    } else if (kind == "incumbent" && fields(6)) {
      int64_t t;
      if (f[1].getAsInteger(10, t) || t < 1)
        return bad(i, "token count '" + f[1] + "' is not a positive integer");
      ManifestIncumbent r;
      r.file = f[2].str();
      r.kernelName1 = f[3].str();
      r.kernelName2 = f[4].str();
      r.id = f[5].str();
      if (!m.incumbents.emplace(t, std::move(r)).second)
        return bad(i, "a second incumbent row at " + f[1] + " tokens");
    } else if (kind == "failed" && fields(3)) {
      m.failed[f[1].str()] = f[2].str();
    } else {
      return bad(i, "unreadable line '" + lines[i] + "'");
    }
  }
  if (m.specFile.empty() || m.chip.empty() || m.tokens.empty())
    return bad(lines.size() - 1, "the spec, target or tokens line is missing");
  return m;
}

llvm::Expected<Manifest> Manifest::load(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    return llvm::createStringError(buf.getError(), path + ": " + buf.getError().message());
  return parse((*buf)->getBuffer(), path);
}

const ManifestPair *Manifest::pairOf(size_t s1, size_t s2) const {
  for (const ManifestPair &p : pairs)
    if (p.s1 == s1 && p.s2 == s2)
      return &p;
  return nullptr;
}

} // namespace moegen::tune
