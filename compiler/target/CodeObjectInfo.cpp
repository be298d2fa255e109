//===- CodeObjectInfo.cpp - Read kernel resources from a code object ------===//

#include "compiler/target/CodeObjectInfo.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/BinaryFormat/MsgPackReader.h"
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

/// Checks that `blob` is one well-formed msgpack map, nested at most
/// kMaxDepth deep, whose map keys are scalars. msgpack::Document trusts its
/// input: a map or an array as a map key crashes it.
static llvm::Error checkMsgPack(llvm::StringRef blob) {
  constexpr size_t kMaxDepth = 64;
  struct Level {
    uint64_t left; // items (maps: keys and values) still to read
    bool map;
  };
  llvm::SmallVector<Level, 8> open;
  llvm::msgpack::Reader reader(blob);
  bool readRoot = false;
  while (true) {
    llvm::msgpack::Object obj;
    llvm::Expected<bool> more = reader.read(obj);
    if (!more)
      return makeError("malformed AMDGPU metadata note: " + llvm::toString(more.takeError()));
    if (!*more)
      break;
    bool isKey = false;
    if (open.empty()) {
      if (readRoot)
        return makeError("malformed AMDGPU metadata note: data after the root object");
      readRoot = true;
      if (obj.Kind != llvm::msgpack::Type::Map)
        return makeError("malformed AMDGPU metadata note: the root is not a map");
    } else {
      isKey = open.back().map && open.back().left % 2 == 0;
      --open.back().left;
    }
    bool nested = obj.Kind == llvm::msgpack::Type::Map || obj.Kind == llvm::msgpack::Type::Array;
    if (isKey && nested)
      return makeError("malformed AMDGPU metadata note: a map key is a map or an array");
    if (nested) {
      if (open.size() == kMaxDepth)
        return makeError("malformed AMDGPU metadata note: nested deeper than " +
                         llvm::Twine(kMaxDepth));
      bool map = obj.Kind == llvm::msgpack::Type::Map;
      open.push_back({uint64_t(obj.Length) * (map ? 2 : 1), map});
    }
    while (!open.empty() && open.back().left == 0)
      open.pop_back();
  }
  if (!readRoot || !open.empty())
    return makeError("malformed AMDGPU metadata note: truncated");
  return llvm::Error::success();
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
      llvm::StringRef blob(reinterpret_cast<const char *>(desc.data()), desc.size());
      llvm::Error bad = checkMsgPack(blob);
      if (!bad && !doc.readFromBlob(blob, /*Multi=*/false))
        bad = makeError("malformed AMDGPU metadata note");
      if (bad) {
        llvm::consumeError(std::move(err));
        return std::move(bad);
      }
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
  // On gfx90a and later the metadata's .vgpr_count is the unified total
  // (ArchVGPRs rounded up to 4, then the AGPRs): a kernel reports 512 VGPRs
  // next to 256 AGPRs. The file holds 512 registers per lane, allocated in
  // granules of 8.
  int64_t total = std::max<int64_t>(8, (std::max(k.vgprs, k.agprs) + 7) / 8 * 8);
  return std::min<int64_t>(8, 512 / total);
}

} // namespace moegen
