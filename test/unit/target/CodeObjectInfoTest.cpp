//===- CodeObjectInfoTest.cpp - The code-object metadata reader -----------===//
//
// Minimal ELF64 files with one AMDGPU metadata note: well-formed metadata is
// read; malformed metadata (found by test/fuzz) is an error, not a crash.
//
//===----------------------------------------------------------------------===//

#include "compiler/target/CodeObjectInfo.h"

#include "llvm/BinaryFormat/ELF.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

using namespace moegen;

namespace {

template <typename T> void put(std::string &out, T v) {
  out.append(reinterpret_cast<const char *>(&v), sizeof(T));
}

void pad4(std::string &out) { out.append((4 - out.size() % 4) % 4, '\0'); }

/// An ELF64 little-endian file: header, one SHT_NOTE section holding an
/// AMDGPU NT_AMDGPU_METADATA note with `msgpack` as its descriptor, then the
/// section headers (null, note).
std::string elfWithNote(const std::string &msgpack) {
  std::string note;
  put<uint32_t>(note, 7); // "AMDGPU\0"
  put<uint32_t>(note, msgpack.size());
  put<uint32_t>(note, llvm::ELF::NT_AMDGPU_METADATA);
  note.append("AMDGPU", 7);
  pad4(note);
  note += msgpack;
  pad4(note);

  llvm::ELF::Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, llvm::ELF::ElfMagic, 4);
  eh.e_ident[llvm::ELF::EI_CLASS] = llvm::ELF::ELFCLASS64;
  eh.e_ident[llvm::ELF::EI_DATA] = llvm::ELF::ELFDATA2LSB;
  eh.e_ident[llvm::ELF::EI_VERSION] = llvm::ELF::EV_CURRENT;
  eh.e_ident[llvm::ELF::EI_OSABI] = llvm::ELF::ELFOSABI_AMDGPU_HSA;
  eh.e_ident[llvm::ELF::EI_ABIVERSION] = llvm::ELF::ELFABIVERSION_AMDGPU_HSA_V6;
  eh.e_type = llvm::ELF::ET_DYN;
  eh.e_machine = llvm::ELF::EM_AMDGPU;
  eh.e_version = llvm::ELF::EV_CURRENT;
  eh.e_ehsize = sizeof(eh);
  eh.e_shentsize = sizeof(llvm::ELF::Elf64_Shdr);
  eh.e_shnum = 2;
  uint64_t noteOffset = sizeof(eh);
  eh.e_shoff = (noteOffset + note.size() + 7) / 8 * 8;

  std::string out(reinterpret_cast<const char *>(&eh), sizeof(eh));
  out += note;
  out.append(eh.e_shoff - out.size(), '\0');
  llvm::ELF::Elf64_Shdr null{}, sh{};
  sh.sh_type = llvm::ELF::SHT_NOTE;
  sh.sh_offset = noteOffset;
  sh.sh_size = note.size();
  sh.sh_addralign = 4;
  out.append(reinterpret_cast<const char *>(&null), sizeof(null));
  out.append(reinterpret_cast<const char *>(&sh), sizeof(sh));
  return out;
}

llvm::Expected<CodeObjectInfo> read(const std::string &msgpack) {
  // Held in 8-byte aligned storage, as a file read into memory is.
  std::string elf = elfWithNote(msgpack);
  static std::vector<uint64_t> storage;
  storage.assign((elf.size() + 7) / 8, 0);
  std::memcpy(storage.data(), elf.data(), elf.size());
  return readCodeObjectInfo(
      llvm::ArrayRef<char>(reinterpret_cast<const char *>(storage.data()), elf.size()));
}

std::string errorOf(const std::string &msgpack) {
  auto info = read(msgpack);
  if (info)
    return "";
  return llvm::toString(info.takeError());
}

} // namespace

TEST(CodeObjectInfo, ReadsKernelResources) {
  // {"amdhsa.target": "gfx", "amdhsa.kernels": [{".name": "k", ".vgpr_count": 40}]}
  std::string mp = "\x82"
                   "\xad"
                   "amdhsa.target"
                   "\xa3"
                   "gfx"
                   "\xae"
                   "amdhsa.kernels"
                   "\x91\x82"
                   "\xa5.name"
                   "\xa1k"
                   "\xab.vgpr_count"
                   "\x28";
  auto info = read(mp);
  ASSERT_TRUE(bool(info)) << llvm::toString(info.takeError());
  EXPECT_EQ(info->target, "gfx");
  EXPECT_EQ(info->codeObjectVersion, 6);
  ASSERT_EQ(info->kernels.size(), 1u);
  EXPECT_EQ(info->kernels[0].symbol, "k");
  EXPECT_EQ(info->kernels[0].vgprs, 40);
}

TEST(CodeObjectInfo, MalformedMetadataIsAnError) {
  // A map as a map key crashed msgpack::Document (test/fuzz crash-msgpack-map-key).
  EXPECT_NE(errorOf("\x81\x81\xa1"
                    "a\x01\x01"),
            "");
  EXPECT_NE(errorOf("\x81\x91\x01\x01"), ""); // an array as a map key
  EXPECT_NE(errorOf("\x82\xa1"
                    "a\x01"),
            "");                      // truncated
  EXPECT_NE(errorOf("\x80\x02"), ""); // data after the root
  EXPECT_NE(errorOf("\x81\xa1"
                    "a" +
                    std::string(100, '\x91') + "\x01"),
            ""); // nested too deep
  // Wrong kinds where the reader expects a map, a string or an array.
  EXPECT_NE(errorOf("\x01"), "");
  EXPECT_NE(errorOf("\x92\x01\x02").find("the root is not a map"), std::string::npos);
  EXPECT_NE(errorOf("\x81\xad"
                    "amdhsa.target\x01"),
            "");
  EXPECT_NE(errorOf("\x81\xae"
                    "amdhsa.kernels\x01"),
            "");
  EXPECT_NE(errorOf("\x81\xae"
                    "amdhsa.kernels\x91\x01"),
            "");
  EXPECT_NE(errorOf("\x81\xae"
                    "amdhsa.kernels\x91\x81\xa5.name\x01"),
            "");
}

TEST(CodeObjectInfo, OccupancyCountsTheUnifiedRegisterFile) {
  // .vgpr_count is the unified total on gfx950: 512 VGPRs next to 256 AGPRs
  // is one wave, not an impossible 768 registers.
  KernelResources k;
  k.vgprs = 512;
  k.agprs = 256;
  EXPECT_EQ(occupancyFromRegisters(k), 1);
  k.vgprs = 162;
  k.agprs = 0;
  EXPECT_EQ(occupancyFromRegisters(k), 3);
  k.vgprs = 256;
  k.agprs = 128;
  EXPECT_EQ(occupancyFromRegisters(k), 2);
  k.vgprs = 3;
  k.agprs = 0;
  EXPECT_EQ(occupancyFromRegisters(k), 8);
}
