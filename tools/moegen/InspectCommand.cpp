//===- InspectCommand.cpp - moegen inspect --------------------------------===//
//
//   moegen inspect FILE.hsaco [--disasm]
//
//===----------------------------------------------------------------------===//

#include "tools/moegen/Args.h"
#include "tools/moegen/Report.h"

#include "compiler/spec/InputFile.h"
#include "compiler/spec/TargetInfo.h"
#include "compiler/target/Disassembler.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"

namespace moegen::cli {

// A layer's code objects are tens of KiB.
constexpr uint64_t kMaxCodeObjectBytes = 256 << 20;

namespace cl = llvm::cl;

static int runInspect();
static cl::SubCommand command("inspect", "print the report (and --disasm the ISA) of a .hsaco");
static CommandRegistration registration(command, runInspect);

static cl::opt<std::string> fileArg(cl::Positional, cl::desc("<file.hsaco>"), cl::sub(command),
                                    cl::cat(moegenCategory()));
static cl::opt<bool> disasmArg("disasm", cl::desc("also print the ISA (LLVM MC, in-process)"),
                               cl::sub(command), cl::cat(moegenCategory()));

static int runInspect() {
  std::string path = fileArg;
  bool disasm = disasmArg;
  if (path.empty())
    return usageError("inspect",
                      "no code object given; usage: moegen inspect FILE.hsaco [--disasm]");
  auto fail = [&](const llvm::Twine &msg) {
    llvm::WithColor::error(llvm::errs(), "moegen inspect") << path << ": " << msg << "\n";
    return 1;
  };
  auto buffer = readInputFile(path, kMaxCodeObjectBytes, /*isText=*/false);
  if (!buffer) {
    llvm::WithColor::error(llvm::errs(), "moegen inspect")
        << llvm::toString(buffer.takeError()) << "\n";
    return 1;
  }
  llvm::ArrayRef<char> bytes((*buffer)->getBufferStart(), (*buffer)->getBufferSize());
  auto info = readCodeObjectInfo(bytes);
  if (!info)
    return fail(llvm::toString(info.takeError()));
  llvm::outs() << path << ": " << info->target << ", code object v" << info->codeObjectVersion
               << "\n";
  std::vector<ReportRow> rows;
  for (const KernelResources &k : info->kernels)
    rows.push_back({k, std::nullopt});
  printReport(llvm::outs(), rows);
  if (disasm) {
    llvm::StringRef chip = llvm::StringRef(info->target).rsplit('-').second;
    auto text = disassembleCodeObject(bytes, chip.empty() ? TargetInfo::kDefaultChip.str() : chip);
    if (!text)
      return fail(llvm::toString(text.takeError()));
    llvm::outs() << "\n" << *text;
  }
  return 0;
}

} // namespace moegen::cli
