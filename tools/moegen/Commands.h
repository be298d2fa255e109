//===- Commands.h - Subcommands of the moegen CLI ---------------*- C++ -*-===//
//
// Each subcommand lives in its own file and is called with the arguments that
// follow its name (argv[0] is the subcommand name). It returns the process
// exit status and prints its own diagnostics.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TOOLS_MOEGEN_COMMANDS_H
#define MOEGEN_TOOLS_MOEGEN_COMMANDS_H

namespace moegen::cli {

int runCompile(int argc, const char **argv); // CompileCommand.cpp
int runFmt(int argc, const char **argv);     // FmtCommand.cpp
int runInspect(int argc, const char **argv); // InspectCommand.cpp
int runRef(int argc, const char **argv);     // RefCommand.cpp
int runLookup(int argc, const char **argv);  // LookupCommand.cpp
int runRun(int argc, const char **argv);     // RunCommand.cpp
int runCache(int argc, const char **argv);   // CacheCommand.cpp

} // namespace moegen::cli

#endif // MOEGEN_TOOLS_MOEGEN_COMMANDS_H
