//===- CodeObjectInfo.h - Read kernel resources from a code object -*- C++ -*-===//
#ifndef MOEGEN_COMPILER_TARGET_CODEOBJECTINFO_H
#define MOEGEN_COMPILER_TARGET_CODEOBJECTINFO_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace moegen {

/// One kernel's resources as the AMDGPU metadata note (NT_AMDGPU_METADATA)
/// of the code object records them.
struct KernelResources {
  std::string symbol;
  int64_t vgprs = 0, agprs = 0, sgprs = 0;
  int64_t ldsBytes = 0;     // .group_segment_fixed_size
  int64_t scratchBytes = 0; // .private_segment_fixed_size
  int64_t vgprSpills = 0, sgprSpills = 0;
  int64_t kernargBytes = 0;
  int64_t maxFlatWorkgroupSize = 0;
  int64_t wavefrontSize = 0;
  int64_t codeBytes = 0; // size of the kernel's function symbol in .text
};

struct CodeObjectInfo {
  std::string target; // amdhsa.target, e.g. "amdgcn-amd-amdhsa--gfx950"
  int64_t codeObjectVersion = 0;
  std::vector<KernelResources> kernels;
};

/// Parses an AMDGPU code object (ELF with an AMDGPU metadata note).
llvm::Expected<CodeObjectInfo> readCodeObjectInfo(llvm::ArrayRef<char> hsaco);

/// Waves per SIMD the kernel's registers allow on gfx950 (docs/gfx950-facts.md §7.1).
int64_t occupancyFromRegisters(const KernelResources &k);

} // namespace moegen

#endif // MOEGEN_COMPILER_TARGET_CODEOBJECTINFO_H
