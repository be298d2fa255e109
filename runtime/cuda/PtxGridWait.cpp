//===- PtxGridWait.cpp - Which PTX entries wait for their predecessors ----===//

#include "runtime/cuda/PtxGridWait.h"

#include <cctype>

namespace moegen::cuda {

namespace {

constexpr llvm::StringLiteral kWait = "griddepcontrol.wait";

/// `text` without `//` line comments and `/* */` block comments (each
/// replaced by one space).
std::string withoutComments(llvm::StringRef text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text.substr(i).starts_with("//")) {
      size_t end = text.find('\n', i);
      i = end == llvm::StringRef::npos ? text.size() : end;
      out += ' ';
    } else if (text.substr(i).starts_with("/*")) {
      size_t end = text.find("*/", i + 2);
      i = end == llvm::StringRef::npos ? text.size() : end + 2;
      out += ' ';
    } else {
      out += text[i++];
    }
  }
  return out;
}

bool isIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.';
}

} // namespace

llvm::StringSet<> ptxEntriesThatWait(llvm::StringRef ptx) {
  std::string code = withoutComments(ptx);
  llvm::StringRef text(code);
  llvm::StringSet<> waiting;
  for (size_t at = text.find(".entry"); at != llvm::StringRef::npos;
       at = text.find(".entry", at + 1)) {
    // `.entry` as a whole word, then the name.
    if ((at > 0 && isIdentChar(text[at - 1])) ||
        (at + 6 < text.size() && isIdentChar(text[at + 6])))
      continue;
    size_t nameStart = text.find_if_not(
        [](char c) { return std::isspace(static_cast<unsigned char>(c)); }, at + 6);
    if (nameStart == llvm::StringRef::npos)
      break;
    size_t nameEnd = nameStart;
    while (nameEnd < text.size() && isIdentChar(text[nameEnd]))
      ++nameEnd;
    llvm::StringRef name = text.slice(nameStart, nameEnd);
    // The body: the first `{` after the parameter list's `)`, to its match.
    size_t params = text.find('(', nameEnd);
    size_t paramsEnd = params == llvm::StringRef::npos ? params : text.find(')', params);
    size_t open = paramsEnd == llvm::StringRef::npos ? paramsEnd : text.find('{', paramsEnd);
    // A declaration (`.entry f(...);`) has no body.
    if (name.empty() || open == llvm::StringRef::npos || text.find(';', paramsEnd) < open)
      continue;
    int depth = 0;
    size_t close = llvm::StringRef::npos;
    for (size_t i = open; i < text.size(); ++i) {
      if (text[i] == '{')
        ++depth;
      else if (text[i] == '}' && --depth == 0) {
        close = i;
        break;
      }
    }
    if (close == llvm::StringRef::npos)
      continue;
    llvm::StringRef body = text.slice(open, close);
    for (size_t w = body.find(kWait); w != llvm::StringRef::npos; w = body.find(kWait, w + 1)) {
      size_t after = w + kWait.size();
      if ((w == 0 || !isIdentChar(body[w - 1])) &&
          (after >= body.size() || !isIdentChar(body[after]))) {
        waiting.insert(name);
        break;
      }
    }
    at = close;
  }
  return waiting;
}

} // namespace moegen::cuda
