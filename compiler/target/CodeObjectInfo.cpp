//===- CodeObjectInfo.cpp - Read kernel resources from a code object ------===//

#include "compiler/target/CodeObjectInfo.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/Object/ELFObjectFile.h"

#include <algorithm>

namespace moegen {

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

// The metadata note comes from a file: every node's kind is checked before it
// is read, since DocNode's accessors assume the kind.
static bool isKind(const llvm::msgpack::DocNode &n, llvm::msgpack::Type kind) {
  return n.getKind() == kind;
}

/// The string at `key`, "" when absent; false when present but not a string.
static bool stringField(llvm::msgpack::MapDocNode &map, llvm::StringRef key, std::string &out) {
  auto it = map.find(key);
  if (it == map.end())
    return true;
  if (!isKind(it->second, llvm::msgpack::Type::String))
    return false;
  out = it->second.getString().str();
  return true;
}

static int64_t intField(llvm::msgpack::MapDocNode &map, llvm::StringRef key) {
  auto it = map.find(key);
  if (it == map.end())
    return 0;
  llvm::msgpack::DocNode &n = it->second;
  if (n.getKind() == llvm::msgpack::Type::Int)
    return n.getInt();
  if (n.getKind() == llvm::msgpack::Type::UInt)
    return static_cast<int64_t>(n.getUInt());
  return 0;
}

llvm::Expected<CodeObjectInfo> readCodeObjectInfo(llvm::ArrayRef<char> hsaco) {
  llvm::StringRef bytes(hsaco.data(), hsaco.size());
  auto elf = llvm::object::ELF64LEFile::create(bytes);
  if (!elf)
    return makeError("not an ELF64 code object: " + llvm::toString(elf.takeError()));
  CodeObjectInfo info;
  llvm::msgpack::Document doc;
  bool found = false;
  auto sections = elf->sections();
  if (!sections)
    return sections.takeError();
  for (const auto &shdr : *sections) {
    if (shdr.sh_type != llvm::ELF::SHT_NOTE)
      continue;
    llvm::Error err = llvm::Error::success();
    for (const auto &note : elf->notes(shdr, err)) {
      if (note.getName() != "AMDGPU" || note.getType() != llvm::ELF::NT_AMDGPU_METADATA)
        continue;
      llvm::ArrayRef<uint8_t> desc = note.getDesc(shdr.sh_addralign);
      if (!doc.readFromBlob(
              llvm::StringRef(reinterpret_cast<const char *>(desc.data()), desc.size()),
              /*Multi=*/false))
        return makeError("malformed AMDGPU metadata note");
      found = true;
    }
    if (err)
      return std::move(err);
  }
  if (!found)
    return makeError("the code object has no AMDGPU metadata note");

  if (!isKind(doc.getRoot(), llvm::msgpack::Type::Map))
    return makeError("malformed AMDGPU metadata note: the root is not a map");
  llvm::msgpack::MapDocNode root = doc.getRoot().getMap();
  if (!stringField(root, "amdhsa.target", info.target))
    return makeError("malformed AMDGPU metadata note: amdhsa.target is not a string");
  // The metadata version is 1.2 for both v5 and v6; the ELF header's ABI
  // version tells them apart (ELFABIVERSION_AMDGPU_HSA_V5 = 3, V6 = 4).
  uint8_t abiVersion = elf->getHeader().e_ident[llvm::ELF::EI_ABIVERSION];
  if (abiVersion >= llvm::ELF::ELFABIVERSION_AMDGPU_HSA_V2)
    info.codeObjectVersion = abiVersion + 2;
  auto kernelsIt = root.find("amdhsa.kernels");
  if (kernelsIt == root.end())
    return info;
  if (!isKind(kernelsIt->second, llvm::msgpack::Type::Array))
    return makeError("malformed AMDGPU metadata note: amdhsa.kernels is not an array");

  // Function sizes from the symbol table give each kernel's code bytes.
  llvm::StringMap<int64_t> symbolSizes;
  for (const auto &shdr : *sections) {
    if (shdr.sh_type != llvm::ELF::SHT_SYMTAB && shdr.sh_type != llvm::ELF::SHT_DYNSYM)
      continue;
    auto syms = elf->symbols(&shdr);
    auto strtab = elf->getStringTableForSymtab(shdr);
    if (!syms || !strtab) {
      llvm::consumeError(syms.takeError());
      llvm::consumeError(strtab.takeError());
      continue;
    }
    for (const auto &sym : *syms) {
      if (sym.getType() != llvm::ELF::STT_FUNC)
        continue;
      if (auto name = sym.getName(*strtab))
        symbolSizes[*name] = sym.st_size;
      else
        llvm::consumeError(name.takeError());
    }
  }

  for (llvm::msgpack::DocNode &kn : kernelsIt->second.getArray()) {
    if (!isKind(kn, llvm::msgpack::Type::Map))
      return makeError("malformed AMDGPU metadata note: a kernel entry is not a map");
    llvm::msgpack::MapDocNode &k = kn.getMap();
    KernelResources r;
    if (!stringField(k, ".name", r.symbol))
      return makeError("malformed AMDGPU metadata note: a kernel's .name is not a string");
    r.vgprs = intField(k, ".vgpr_count");
    r.agprs = intField(k, ".agpr_count");
    r.sgprs = intField(k, ".sgpr_count");
    r.ldsBytes = intField(k, ".group_segment_fixed_size");
    r.scratchBytes = intField(k, ".private_segment_fixed_size");
    r.vgprSpills = intField(k, ".vgpr_spill_count");
    r.sgprSpills = intField(k, ".sgpr_spill_count");
    r.kernargBytes = intField(k, ".kernarg_segment_size");
    r.maxFlatWorkgroupSize = intField(k, ".max_flat_workgroup_size");
    r.wavefrontSize = intField(k, ".wavefront_size");
    r.codeBytes = symbolSizes.lookup(r.symbol);
    info.kernels.push_back(std::move(r));
  }
  return info;
}

int64_t occupancyFromRegisters(const KernelResources &k) {
  // AGPRs start after the ArchVGPRs rounded up to 4; the unified file holds
  // 512 registers per lane, allocated in granules of 8.
  int64_t accumOffset = (k.vgprs + 3) / 4 * 4;
  int64_t total = std::max<int64_t>(8, (accumOffset + k.agprs + 7) / 8 * 8);
  return std::min<int64_t>(8, 512 / total);
}

} // namespace moegen
