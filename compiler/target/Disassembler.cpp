//===- Disassembler.cpp - In-process ISA listing of a code object ---------===//

#include "compiler/target/Disassembler.h"

#include "compiler/target/CodeObject.h"

#include "llvm/MC/MCAsmInfo.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCDisassembler/MCDisassembler.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstPrinter.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/MCTargetOptions.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/Format.h"

#include <map>

namespace moegen {

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

llvm::Expected<std::string> disassembleCodeObject(llvm::ArrayRef<char> hsaco,
                                                  llvm::StringRef chip) {
  initializeAMDGPUTarget();
  llvm::Triple triple("amdgcn-amd-amdhsa");
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return makeError(error);
  std::unique_ptr<llvm::MCRegisterInfo> mri(target->createMCRegInfo(triple));
  llvm::MCTargetOptions mcOptions;
  std::unique_ptr<llvm::MCAsmInfo> mai(target->createMCAsmInfo(*mri, triple, mcOptions));
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(triple, chip, ""));
  std::unique_ptr<llvm::MCInstrInfo> mii(target->createMCInstrInfo());
  if (!mri || !mai || !sti || !mii)
    return makeError("cannot set up the AMDGPU disassembler for " + chip);
  // The chip comes from the code object's metadata, which may be damaged.
  if (!sti->isCPUStringValid(chip))
    return makeError("unknown AMDGPU processor '" + chip + "' in the code object's target");
  llvm::MCContext ctx(triple, mai.get(), mri.get(), sti.get());
  std::unique_ptr<llvm::MCDisassembler> disasm(target->createMCDisassembler(*sti, ctx));
  std::unique_ptr<llvm::MCInstPrinter> printer(
      target->createMCInstPrinter(triple, mai->getAssemblerDialect(), *mai, *mii, *mri));
  if (!disasm || !printer)
    return makeError("cannot create the AMDGPU disassembler");

  llvm::StringRef bytes(hsaco.data(), hsaco.size());
  auto buffer = llvm::MemoryBufferRef(bytes, "code object");
  auto objOrErr = llvm::object::ObjectFile::createELFObjectFile(buffer);
  if (!objOrErr)
    return makeError("not an ELF code object: " + llvm::toString(objOrErr.takeError()));
  llvm::object::ObjectFile &obj = **objOrErr;

  std::string out;
  llvm::raw_string_ostream os(out);
  for (const llvm::object::SectionRef &section : obj.sections()) {
    if (!section.isText())
      continue;
    auto contents = section.getContents();
    if (!contents)
      return contents.takeError();
    uint64_t base = section.getAddress();
    std::map<uint64_t, std::string> labels;
    for (const llvm::object::SymbolRef &sym : obj.symbols()) {
      auto addr = sym.getAddress();
      auto name = sym.getName();
      auto type = sym.getType();
      if (!addr || !name || !type) {
        llvm::consumeError(addr.takeError());
        llvm::consumeError(name.takeError());
        llvm::consumeError(type.takeError());
        continue;
      }
      if (*type == llvm::object::SymbolRef::ST_Function)
        labels[*addr] = name->str();
    }
    llvm::ArrayRef<uint8_t> code(reinterpret_cast<const uint8_t *>(contents->data()),
                                 contents->size());
    for (uint64_t offset = 0; offset < code.size();) {
      if (auto it = labels.find(base + offset); it != labels.end())
        os << it->second << ":\n";
      llvm::MCInst inst;
      uint64_t size = 0;
      auto status =
          disasm->getInstruction(inst, size, code.slice(offset), base + offset, llvm::nulls());
      if (status != llvm::MCDisassembler::Success || size == 0) {
        os << "  <unknown>  // " << llvm::format_hex_no_prefix(base + offset, 12) << "\n";
        offset += 4;
        continue;
      }
      std::string text;
      llvm::raw_string_ostream is(text);
      printer->printInst(&inst, base + offset, "", *sti, is);
      llvm::StringRef trimmed = llvm::StringRef(text).trim();
      os << "  " << trimmed << "  // " << llvm::format_hex_no_prefix(base + offset, 12) << "\n";
      offset += size;
    }
  }
  return out;
}

} // namespace moegen
