//===- Journal.cpp - What a tuning run has done so far --------------------===//

#include "tune/Journal.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"

#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <cstdio>

namespace moegen::tune {
namespace {

constexpr llvm::StringLiteral kHeader = "# moegen tune journal v1 ";

/// Tabs and newlines would break the record.
std::string oneLine(llvm::StringRef s) {
  std::string out = s.str();
  for (char &c : out)
    if (c == '\t' || c == '\n' || c == '\r')
      c = ' ';
  return out;
}

std::string num(double v) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

bool parseDouble(llvm::StringRef s, double &v) { return !s.getAsDouble(v); }

/// A time in microseconds as the tuner ranks it: finite and not negative
/// (a NaN would break the ordering of the candidates).
bool parseTime(llvm::StringRef s, double &v) {
  return parseDouble(s, v) && std::isfinite(v) && v >= 0 && v < 1e12;
}

/// A fraction of compared elements.
bool parseFraction(llvm::StringRef s, double &v) {
  return parseDouble(s, v) && v >= 0 && v <= 1;
}

/// A token count: what a tuned row can hold.
bool parseTokens(llvm::StringRef s, int64_t &t) {
  return !s.getAsInteger(10, t) && t > 0 && t <= (int64_t(1) << 40);
}

} // namespace

void StageTimes::charge(KernelFamily family, double us) {
  switch (family) {
  case KernelFamily::Stage1:
  case KernelFamily::Finish:
  case KernelFamily::QuantInter:
    us1 += us;
    return;
  case KernelFamily::Stage2:
  case KernelFamily::Reduce:
    us2 += us;
    return;
  case KernelFamily::SortCount:
  case KernelFamily::SortScan:
  case KernelFamily::Sort:
  case KernelFamily::QuantInput:
    common += us;
    return;
  }
}

llvm::Expected<std::unique_ptr<Journal>> Journal::open(llvm::StringRef path,
                                                       llvm::StringRef fingerprint) {
  auto j = std::make_unique<Journal>();
  j->file = path.str();
  std::string header = (kHeader + fingerprint).str();
  if (!llvm::sys::fs::exists(path)) {
    if (llvm::Error e = j->append(header))
      return std::move(e);
    return j;
  }
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    return llvm::createStringError(buf.getError(), "%s: cannot read the journal: %s",
                                   path.str().c_str(), buf.getError().message().c_str());
  llvm::StringRef text = (*buf)->getBuffer();
  bool complete = text.ends_with("\n");
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n', -1, /*KeepEmpty=*/true);
  if (lines.empty() || lines.front() != header)
    return llvm::createStringError(std::errc::invalid_argument,
                                   "%s:1: the journal belongs to another run (spec, build, "
                                   "backend, seed, check tokens or cache directory differ: "
                                   "expected '%s', found '%s'); "
                                   "remove it to start over",
                                   path.str().c_str(), header.c_str(),
                                   lines.empty() ? "" : lines.front().str().c_str());
  // The last element is "" after a final newline, or a torn record.
  for (size_t i = 1; i + 1 < lines.size(); ++i) {
    llvm::SmallVector<llvm::StringRef> f;
    lines[i].split(f, '\t');
    if (f.empty() || f[0].empty())
      continue;
    auto bad = [&]() {
      return llvm::createStringError(std::errc::invalid_argument,
                                     "%s:%zu: malformed journal record '%s'", path.str().c_str(),
                                     i + 1, lines[i].str().c_str());
    };
    if (f[0] == "compile" && f.size() == 4) {
      CompileRecord r;
      r.ok = f[2] == "ok";
      if (!r.ok && f[2] != "fail")
        return bad();
      if (r.ok) {
        llvm::SmallVector<llvm::StringRef> entries;
        f[3].split(entries, ';', -1, false);
        for (llvm::StringRef e : entries) {
          llvm::SmallVector<llvm::StringRef> v;
          e.split(v, ',');
          int64_t t;
          StageTimes st;
          if (v.size() != 4 || !parseTokens(v[0], t) || !parseTime(v[1], st.us1) ||
              !parseTime(v[2], st.us2) || !parseTime(v[3], st.common))
            return bad();
          r.times[t] = st;
        }
      } else {
        r.reason = f[3].str();
      }
      j->compiles[f[1].str()] = std::move(r);
    } else if (f[0] == "check" && f.size() == 7) {
      int64_t t;
      CheckRecord r;
      if (!parseTokens(f[1], t) || (f[3] != "pass" && f[3] != "fail") ||
          !parseFraction(f[4], r.err1) || !parseFraction(f[5], r.err2))
        return bad();
      r.passed = f[3] == "pass";
      r.detail = f[6].str();
      j->checks[{t, f[2].str()}] = std::move(r);
    } else if (f[0] == "timed" && f.size() == 5) {
      int64_t t;
      StageTimes st;
      if (!parseTokens(f[1], t) || !parseTime(f[3], st.us1) || !parseTime(f[4], st.us2))
        return bad();
      j->timings[{t, f[2].str()}] = st;
    } else if (f[0] == "graphed" && f.size() == 4) {
      int64_t t;
      double us;
      if (!parseTokens(f[1], t) || !parseTime(f[3], us))
        return bad();
      j->graphs[{t, f[2].str()}] = us;
    } else {
      return bad();
    }
    ++j->resumed;
  }
  if (!complete) {
    // Cut the torn record off so that the next one starts its own line. A
    // header without its newline (the run stopped right after writing it)
    // is kept whole.
    size_t cut = text.rfind('\n');
    std::string kept = cut == llvm::StringRef::npos ? header + "\n" : text.substr(0, cut + 1).str();
    std::error_code ec;
    {
      llvm::raw_fd_ostream os(path, ec);
      if (!ec) {
        os << kept;
        os.close();
        ec = os.error();
        os.clear_error();
      }
    }
    if (ec)
      return llvm::createStringError(ec, "%s: cannot rewrite the journal: %s", path.str().c_str(),
                                     ec.message().c_str());
  }
  return j;
}

const CompileRecord *Journal::compiled(llvm::StringRef id) const {
  auto it = compiles.find(id.str());
  return it == compiles.end() ? nullptr : &it->second;
}

const CheckRecord *Journal::checked(int64_t tokens, llvm::StringRef id) const {
  auto it = checks.find({tokens, id.str()});
  return it == checks.end() ? nullptr : &it->second;
}

llvm::Error Journal::append(const std::string &line) {
  std::error_code ec;
  llvm::raw_fd_ostream os(file, ec, llvm::sys::fs::OF_Append | llvm::sys::fs::OF_Text);
  if (ec)
    return llvm::createStringError(ec, "%s: cannot write the journal: %s", file.c_str(),
                                   ec.message().c_str());
  os << line << "\n";
  os.close();
  if (os.has_error())
    return llvm::createStringError(os.error(), "%s: cannot write the journal: %s", file.c_str(),
                                   os.error().message().c_str());
  return llvm::Error::success();
}

llvm::Error Journal::recordCompile(llvm::StringRef id, const CompileRecord &r) {
  std::string line = "compile\t" + oneLine(id) + "\t" + (r.ok ? "ok" : "fail") + "\t";
  if (r.ok) {
    std::string times;
    for (const auto &[t, st] : r.times)
      times += (times.empty() ? "" : ";") + std::to_string(t) + "," + num(st.us1) + "," +
               num(st.us2) + "," + num(st.common);
    line += times;
  } else {
    line += oneLine(r.reason.empty() ? "failed" : r.reason);
  }
  compiles[id.str()] = r;
  return append(line);
}

llvm::Error Journal::recordCheck(int64_t tokens, llvm::StringRef id, const CheckRecord &r) {
  checks[{tokens, id.str()}] = r;
  return append("check\t" + std::to_string(tokens) + "\t" + oneLine(id) + "\t" +
                (r.passed ? "pass" : "fail") + "\t" + num(r.err1) + "\t" + num(r.err2) + "\t" +
                oneLine(r.detail.empty() ? "-" : r.detail));
}

} // namespace moegen::tune

namespace moegen::tune {

const StageTimes *Journal::timed(int64_t tokens, llvm::StringRef id) const {
  auto it = timings.find({tokens, id.str()});
  return it == timings.end() ? nullptr : &it->second;
}

llvm::Error Journal::recordTiming(int64_t tokens, llvm::StringRef id, const StageTimes &t) {
  timings[{tokens, id.str()}] = t;
  return append("timed\t" + std::to_string(tokens) + "\t" + oneLine(id) + "\t" + num(t.us1) + "\t" +
                num(t.us2));
}

const double *Journal::graphed(int64_t tokens, llvm::StringRef id) const {
  auto it = graphs.find({tokens, id.str()});
  return it == graphs.end() ? nullptr : &it->second;
}

llvm::Error Journal::recordGraph(int64_t tokens, llvm::StringRef id, double us) {
  graphs[{tokens, id.str()}] = us;
  return append("graphed\t" + std::to_string(tokens) + "\t" + oneLine(id) + "\t" + num(us));
}

} // namespace moegen::tune
