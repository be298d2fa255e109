//===- Commands.h - The moegen commands, callable in-process ----*- C++ -*-===//
//
// Each command is called with the arguments that follow `moegen` (argv[0] is
// the command's name) and returns the exit status, as runCommandLine does.
// For drivers and tests that link only some command files.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TOOLS_MOEGEN_COMMANDS_H
#define MOEGEN_TOOLS_MOEGEN_COMMANDS_H

namespace moegen::cli {

/// `moegen <argv[0]> <argv[1..]>`; the command must be linked in.
int runCommand(int argc, const char **argv);

inline int runCompile(int argc, const char **argv) { return runCommand(argc, argv); }
inline int runFmt(int argc, const char **argv) { return runCommand(argc, argv); }
inline int runInspect(int argc, const char **argv) { return runCommand(argc, argv); }
inline int runRef(int argc, const char **argv) { return runCommand(argc, argv); }
inline int runLookup(int argc, const char **argv) { return runCommand(argc, argv); }
inline int runRun(int argc, const char **argv) { return runCommand(argc, argv); }
inline int runCache(int argc, const char **argv) { return runCommand(argc, argv); }

} // namespace moegen::cli

#endif // MOEGEN_TOOLS_MOEGEN_COMMANDS_H
