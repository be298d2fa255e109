//===- Args.cpp - Flag parsing for the moegen subcommands -----------------===//

#include "tools/moegen/Args.h"

#include "llvm/Support/WithColor.h"

namespace moegen::cli {

void ArgReader::error(const llvm::Twine &msg) {
  llvm::WithColor::error(llvm::errs(), "moegen " + command) << msg << "\n";
  hadError = true;
}

bool ArgReader::flag(llvm::StringRef name, std::string &value) {
  if (done())
    return false;
  llvm::StringRef arg = args[pos];
  if (arg == name) {
    if (pos + 1 >= args.size()) {
      error(name + " needs a value");
      pos = args.size();
      return true;
    }
    value = args[pos + 1].str();
    pos += 2;
    return true;
  }
  if (arg.starts_with(name) && arg.size() > name.size() && arg[name.size()] == '=') {
    value = arg.drop_front(name.size() + 1).str();
    ++pos;
    return true;
  }
  return false;
}

bool ArgReader::option(llvm::StringRef name) {
  if (done() || args[pos] != name)
    return false;
  ++pos;
  return true;
}

std::optional<std::string> ArgReader::positional() {
  if (done() || (args[pos].starts_with("-") && args[pos] != "-"))
    return std::nullopt;
  return args[pos++].str();
}

void ArgReader::unknown() {
  error("unknown argument '" + args[pos] + "'");
  ++pos;
}

void printError(llvm::Error error) {
  std::string text = llvm::toString(std::move(error));
  llvm::errs() << text;
  if (text.empty() || text.back() != '\n')
    llvm::errs() << "\n";
}

std::optional<int64_t> parsePositive(ArgReader &reader, llvm::StringRef name,
                                     llvm::StringRef value) {
  int64_t v;
  if (value.getAsInteger(10, v) || v <= 0) {
    reader.error(name + ": expected a positive integer, got '" + value + "'");
    return std::nullopt;
  }
  return v;
}

} // namespace moegen::cli
