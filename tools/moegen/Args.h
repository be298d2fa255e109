//===- Args.h - Command-line plumbing of the moegen subcommands -*- C++ -*-===//
//
// Every subcommand is an llvm::cl::SubCommand whose options are declared in
// its own file with cl::sub(<its SubCommand>) and cl::cat(moegenCategory()),
// and registers itself with a CommandRegistration. runCommandLine parses
// argv (`moegen <command> [options]`) and runs the chosen command.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TOOLS_MOEGEN_ARGS_H
#define MOEGEN_TOOLS_MOEGEN_ARGS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace moegen::cli {

/// The category of every moegen option; LLVM's own options are hidden.
llvm::cl::OptionCategory &moegenCategory();

/// `--set key=value` (repeatable) of a command that reads a spec: the
/// overrides applied to it in order.
class SpecOverrideOption : public llvm::cl::list<std::string> {
public:
  explicit SpecOverrideOption(llvm::cl::SubCommand &sub);
  std::vector<std::string> values() const { return {begin(), end()}; }
};

/// Makes `sub` a moegen command run by `run` once its options are parsed.
/// Construct one per command, at namespace scope after the SubCommand. An
/// unlisted command (a child process's entry point) is left out of the
/// usage text.
struct CommandRegistration {
  CommandRegistration(llvm::cl::SubCommand &sub, int (*run)(), bool listed = true);
};

/// Parses `moegen <command> [options]` and runs the command; returns the
/// exit status: 2 for a command line that does not parse (nothing is done),
/// else what the command returns. `--help` and `--version` exit here.
int runCommandLine(int argc, const char **argv);

/// Reports a command-line problem found after parsing ("moegen <cmd>:
/// error: <msg>") and returns 2, the status of a bad command line.
int usageError(llvm::StringRef command, const llvm::Twine &msg);

/// Prints an error (a diagnostic that already names its file:line:col, or a
/// plain message) to stderr, ending with one newline.
void printError(llvm::Error error);

/// Writes `bytes` to `path` through a temporary file in the same directory
/// and a rename, so a reader never sees a half-written file.
llvm::Error writeFileAtomically(llvm::StringRef path, llvm::ArrayRef<char> bytes);

/// A parser of integers for cl::opt<T, false, IntParser<T, Min>>: `N` in
/// the help; a value that is not an integer (decimal, or 0x hexadecimal) or
/// is below `Min` is a parse error naming the option. T is long long or
/// unsigned long long, whose LLVM parsers can be derived from.
template <typename T, T Min> class IntParser : public llvm::cl::parser<T> {
public:
  IntParser(llvm::cl::Option &o) : llvm::cl::parser<T>(o) {}
  bool parse(llvm::cl::Option &o, llvm::StringRef, llvm::StringRef arg, T &value) {
    bool hex = arg.starts_with_insensitive("0x");
    if (!arg.drop_front(hex ? 2 : 0).getAsInteger(hex ? 16 : 10, value) && value >= Min)
      return false;
    return o.error(llvm::Twine("expected ") +
                   (Min > 0 ? "a positive integer" : "an unsigned integer") + ", got '" + arg +
                   "'");
  }
  llvm::StringRef getValueName() const override { return "N"; }
};
using PositiveParser = IntParser<long long, 1>;
using UnsignedParser = IntParser<unsigned long long, 0>;

} // namespace moegen::cli

#endif // MOEGEN_TOOLS_MOEGEN_ARGS_H
