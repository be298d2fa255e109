//===- main.cpp - The moegen command-line tool ----------------------------===//

#include "tools/moegen/Commands.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

namespace {

struct Command {
  const char *name;
  const char *summary;
  int (*run)(int, const char **);
};

const Command kCommands[] = {
    {"compile", "compile a .moe layer into gfx950 code objects and print the report",
     moegen::cli::runCompile},
    {"fmt", "print a .moe file in canonical form, or as the moe dialect (--emit mlir)",
     moegen::cli::runFmt},
    {"inspect", "print the report (and --disasm the ISA) of a .hsaco", moegen::cli::runInspect},
#ifdef MOEGEN_HAVE_REF_COMMAND
    {"ref", "generate inputs and reference outputs of a layer as .npy files", moegen::cli::runRef},
#endif
#ifdef MOEGEN_HAVE_LOOKUP_COMMAND
    {"lookup", "show which aiter tuned-table row a token count uses", moegen::cli::runLookup},
#endif
#ifdef MOEGEN_HAVE_CACHE_COMMAND
    {"cache", "list, clear or prefill the kernel cache", moegen::cli::runCache},
#endif
#ifdef MOEGEN_HAVE_RUN_COMMAND
    {"run", "run a layer on a backend and compare it with the reference", moegen::cli::runRun},
#endif
};

void usage(llvm::raw_ostream &os) {
  os << "usage: moegen <command> [args]\n\ncommands:\n";
  for (const Command &c : kCommands)
    os << "  " << llvm::left_justify(c.name, 9) << c.summary << "\n";
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  if (argc < 2) {
    usage(llvm::errs());
    return 2;
  }
  llvm::StringRef name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    usage(llvm::outs());
    return 0;
  }
  for (const Command &c : kCommands)
    if (name == c.name)
      return c.run(argc - 1, const_cast<const char **>(argv + 1));
  llvm::errs() << "moegen: unknown command '" << name << "'\n";
  usage(llvm::errs());
  return 2;
}
