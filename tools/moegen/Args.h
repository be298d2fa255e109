//===- Args.h - Flag parsing for the moegen subcommands ---------*- C++ -*-===//
#ifndef MOEGEN_TOOLS_MOEGEN_ARGS_H
#define MOEGEN_TOOLS_MOEGEN_ARGS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace moegen::cli {

/// Walks a subcommand's arguments: `--flag value`, `--flag=value`, `-o value`
/// and positional arguments. Unknown flags are errors that name the flag.
class ArgReader {
public:
  ArgReader(llvm::StringRef command, int argc, const char **argv)
      : command(command), args(argv + 1, argv + argc) {}

  bool done() const { return pos >= args.size(); }
  /// If the next argument is `name` (or `name=...`), consumes it and its
  /// value into `value`; a missing value is an error.
  bool flag(llvm::StringRef name, std::string &value);
  /// If the next argument is the boolean flag `name`, consumes it.
  bool option(llvm::StringRef name);
  /// The next argument if it is positional.
  std::optional<std::string> positional();
  /// Reports the current argument as unknown.
  void unknown();

  bool failed() const { return hadError; }
  void error(const llvm::Twine &msg);

private:
  std::string command;
  std::vector<llvm::StringRef> args;
  size_t pos = 0;
  bool hadError = false;
};

/// Prints an error (a diagnostic that already names its file:line:col, or a
/// plain message) to stderr, ending with one newline.
void printError(llvm::Error error);

/// Parses a positive integer flag value; reports "--name: ..." on failure.
std::optional<int64_t> parsePositive(ArgReader &reader, llvm::StringRef name,
                                     llvm::StringRef value);

} // namespace moegen::cli

#endif // MOEGEN_TOOLS_MOEGEN_ARGS_H
