//===- Args.cpp - Command-line plumbing of the moegen subcommands ---------===//

#include "tools/moegen/Args.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

#include "tools/moegen/Commands.h"

#ifdef MOEGEN_HAVE_BUILD_ID
#include "runtime/cache/CacheKey.h"
#endif

// The moegen target defines it; drivers built from some command files only
// (unit tests) may not.
#ifndef MOEGEN_VERSION
#define MOEGEN_VERSION "(version unknown)"
#endif

#include <algorithm>
#include <string>
#include <vector>

namespace moegen::cli {
namespace {

struct Registered {
  llvm::cl::SubCommand *sub;
  int (*run)();
  bool listed;
};

// A function-local static: registrations run during static initialization,
// in any order of the command files.
llvm::SmallVector<Registered, 8> &registry() {
  static llvm::SmallVector<Registered, 8> commands;
  return commands;
}

void usage(llvm::raw_ostream &os) {
  os << "usage: moegen <command> [options]\n\ncommands:\n";
  llvm::SmallVector<Registered, 8> sorted(registry());
  llvm::sort(sorted, [](const Registered &a, const Registered &b) {
    return a.sub->getName() < b.sub->getName();
  });
  for (const Registered &c : sorted)
    if (c.listed)
      os << "  " << llvm::left_justify(c.sub->getName(), 9) << c.sub->getDescription() << "\n";
  os << "\n'moegen <command> --help' lists the options of a command; 'moegen --version' prints "
        "the version.\n";
}

void printVersion(llvm::raw_ostream &os) {
  os << "moegen " << MOEGEN_VERSION;
#ifdef MOEGEN_HAVE_BUILD_ID
  os << " (build " << cache::buildId() << ")";
#endif
  os << "\nLLVM " << LLVM_VERSION_STRING << ", targets gfx950, sm_90a\n";
}

/// LLVM's parse errors name the program by argv[0] ("moegen: Unknown command
/// line argument '--x'.  Try: 'build/bin/moegen --help'"); say which command
/// and point at its own --help instead.
std::string rewriteParseErrors(llvm::StringRef errors, llvm::StringRef argv0,
                               const std::string &command) {
  std::string program = llvm::sys::path::filename(argv0).str();
  llvm::SmallVector<llvm::StringRef, 4> lines;
  errors.rtrim('\n').split(lines, '\n');
  std::string out;
  for (llvm::StringRef line : lines) {
    std::string text = line.str();
    for (size_t at; (at = text.find(argv0.str() + " --help")) != std::string::npos;)
      text.replace(at, argv0.size(), command);
    if (llvm::StringRef(text).starts_with(program + ": ")) {
      llvm::StringRef rest = llvm::StringRef(text).drop_front(program.size() + 2);
      text = command + (rest.starts_with("Did you mean") ? ": " : ": error: ") + rest.str();
    }
    out += text + "\n";
  }
  return out;
}

} // namespace

llvm::cl::OptionCategory &moegenCategory() {
  static llvm::cl::OptionCategory category("moegen options");
  return category;
}

SpecOverrideOption::SpecOverrideOption(llvm::cl::SubCommand &sub)
    : llvm::cl::list<std::string>("set",
                                  llvm::cl::desc("override a spec key, e.g. stage1.k_batch=2 "
                                                 "(repeatable; 'a=1; b=2' sets several)"),
                                  llvm::cl::value_desc("key=value"), llvm::cl::sub(sub),
                                  llvm::cl::cat(moegenCategory())) {}

CommandRegistration::CommandRegistration(llvm::cl::SubCommand &sub, int (*run)(), bool listed) {
  registry().push_back({&sub, run, listed});
}

int runCommandLine(int argc, const char **argv) {
  if (argc < 2) {
    usage(llvm::errs());
    return 2;
  }
  llvm::StringRef name = argv[1];
  if (name == "help") {
    usage(llvm::outs());
    return 0;
  }
  auto command =
      llvm::find_if(registry(), [&](const Registered &c) { return c.sub->getName() == name; });
  if (!name.starts_with("-") && command == registry().end()) {
    llvm::errs() << "moegen: unknown command '" << name << "'\n";
    usage(llvm::errs());
    return 2;
  }
  // Options keep their values between parses (a test may run several
  // command lines in one process): start from the defaults.
  llvm::cl::ResetAllOptionOccurrences();
  // Only moegen's options are listed by --help; LLVM's own stay usable for
  // debugging (e.g. --print-after-all) but are not advertised.
  llvm::cl::HideUnrelatedOptions(moegenCategory());
  for (const Registered &c : registry())
    llvm::cl::HideUnrelatedOptions(moegenCategory(), *c.sub);
  llvm::cl::SetVersionPrinter(printVersion);
  // Errors are collected so that a failed parse can point at the command's
  // own --help rather than the top level's.
  std::string errors;
  llvm::raw_string_ostream errs(errors);
  bool parsed = llvm::cl::ParseCommandLineOptions(
      argc, argv, "moegen: MoE GEMM kernels for gfx950\n", &errs, /*VFS=*/nullptr,
      /*EnvVar=*/nullptr, /*LongOptionsUseDoubleDash=*/true);
  if (!parsed) {
    llvm::errs() << rewriteParseErrors(
        errors, argv[0], command != registry().end() ? "moegen " + name.str() : "moegen");
    return 2;
  }
  for (const Registered &c : registry())
    if (*c.sub)
      return c.run();
  usage(llvm::errs()); // options but no command
  return 2;
}

int runCommand(int argc, const char **argv) {
  std::vector<const char *> args{"moegen"};
  args.insert(args.end(), argv, argv + argc);
  return runCommandLine(static_cast<int>(args.size()), args.data());
}

int usageError(llvm::StringRef command, const llvm::Twine &msg) {
  llvm::WithColor::error(llvm::errs(), ("moegen " + command).str()) << msg << "\n";
  return 2;
}

void printError(llvm::Error error) {
  std::string text = llvm::toString(std::move(error));
  llvm::errs() << text;
  if (text.empty() || text.back() != '\n')
    llvm::errs() << "\n";
}

llvm::Error writeFileAtomically(llvm::StringRef path, llvm::ArrayRef<char> bytes) {
  llvm::SmallString<256> tmp;
  int fd;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd, tmp))
    return llvm::createStringError(ec, "cannot create '" + path + "': " + ec.message());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os.write(bytes.data(), bytes.size());
    os.flush();
    if (os.has_error()) {
      llvm::sys::fs::remove(tmp);
      return llvm::createStringError(os.error(), "cannot write '" + path + "'");
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    return llvm::createStringError(ec, "cannot write '" + path + "': " + ec.message());
  }
  return llvm::Error::success();
}

} // namespace moegen::cli
