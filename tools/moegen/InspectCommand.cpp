//===- InspectCommand.cpp - moegen inspect --------------------------------===//
//
//   moegen inspect FILE.hsaco [--disasm]
//
//===----------------------------------------------------------------------===//

#include "tools/moegen/Args.h"
#include "tools/moegen/Commands.h"
#include "tools/moegen/Report.h"

#include "compiler/spec/InputFile.h"
#include "compiler/target/Disassembler.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"

namespace moegen::cli {

// A layer's code objects are tens of KiB.
constexpr uint64_t kMaxCodeObjectBytes = 256 << 20;

int runInspect(int argc, const char **argv) {
  ArgReader args("inspect", argc, argv);
  std::string path;
  bool disasm = false;
  while (!args.done() && !args.failed()) {
    if (args.option("--disasm"))
      disasm = true;
    else if (auto p = args.positional())
      path = *p;
    else
      args.unknown();
  }
  if (!args.failed() && path.empty())
    args.error("no code object given; usage: moegen inspect FILE.hsaco [--disasm]");
  if (args.failed())
    return 2;
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
    auto text = disassembleCodeObject(bytes, chip.empty() ? "gfx950" : chip);
    if (!text)
      return fail(llvm::toString(text.takeError()));
    llvm::outs() << "\n" << *text;
  }
  return 0;
}

} // namespace moegen::cli
