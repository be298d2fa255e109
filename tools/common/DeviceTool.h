//===- DeviceTool.h - What the device tools' mains share --------*- C++ -*-===//
//
// moegen-layer-check, moegen-tune-device and moegen-bench-h200 run kernels
// from a prefilled cache on a GPU machine. Each names itself in its errors,
// and its --version prints the build id, since a cache is read only by the
// build that filled it.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TOOLS_COMMON_DEVICETOOL_H
#define MOEGEN_TOOLS_COMMON_DEVICETOOL_H

#include "runtime/cache/CacheKey.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace moegen::tools {

/// Parses the command line of the tool `name`, whose --version prints
/// "`name` `version` (build <id>)".
inline void parseDeviceToolOptions(int argc, char **argv, llvm::StringRef name,
                                   llvm::StringRef version, const llvm::Twine &overview) {
  llvm::cl::SetVersionPrinter([tool = name.str(), version = version.str()](llvm::raw_ostream &os) {
    os << tool << " " << version << " (build " << cache::buildId() << ")\n";
  });
  llvm::cl::ParseCommandLineOptions(argc, argv, (name + ": " + overview + "\n").str());
}

/// Prints "`name`: error: `msg`"; returns 1, the tool's exit status.
inline int reportToolError(llvm::StringRef name, const llvm::Twine &msg) {
  llvm::WithColor::error(llvm::errs(), name) << msg << "\n";
  return 1;
}

} // namespace moegen::tools

#endif // MOEGEN_TOOLS_COMMON_DEVICETOOL_H
