//===- TargetInfo.h - The targets moegen generates for ----------*- C++ -*-===//
//
// The one target model: what the `#moe.target` attribute names, what the
// verifier and the kernel templates plan against, which chipset the
// pipeline lowers for and what the runtime keys its caches on. Adding a
// target starts here (forChip).
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_COMPILER_SPEC_TARGETINFO_H
#define MOEGEN_COMPILER_SPEC_TARGETINFO_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>

namespace moegen {

/// The instruction set a chip belongs to: what the pipeline lowers through
/// (rocdl or nvvm) and what kind of code object it emits (ELF or PTX).
enum class TargetArch : uint8_t {
  Amdgcn, // gfx950: AMDHSA ELF code objects
  Nvptx,  // sm_90a: PTX text, loaded (and compiled) by the CUDA driver
};

/// Hardware limits the templates plan against (docs/gfx950-facts.md §6-§7,
/// docs/sm90a.md). The AMD names are kept for both: a wave is a warp on
/// NVIDIA, LDS is shared memory, a CU is an SM, a SIMD an SM sub-partition.
struct TargetInfo {
  /// The chip moegen generates for when none is named.
  static constexpr llvm::StringLiteral kDefaultChip = "gfx950";
  /// NVIDIA Hopper (H100/H200) with the arch-specific features (wgmma,
  /// setmaxnreg).
  static constexpr llvm::StringLiteral kHopperChip = "sm_90a";

  std::string chip;
  TargetArch arch = TargetArch::Amdgcn;
  int64_t waveSize = 64;
  int64_t ldsBytes = 160 * 1024; // per workgroup
  /// LDS a kernel may declare statically (workgroup attributions, which is
  /// how the templates allocate it). Equal to ldsBytes on gfx950; 48 KiB on
  /// sm_90a, where more is dynamic shared memory only (KernelSignature::
  /// dynamicSharedBytes; the cuda backend opts each such kernel in).
  int64_t staticLdsBytes = 160 * 1024;
  int64_t maxThreadsPerWorkgroup = 1024;
  int64_t maxWavesPerEU = 8;
  int64_t simdsPerCU = 4;
  /// Matrix instructions that read MX operands (gfx950's scaled MFMA). A
  /// target without them (sm_90a) computes on bf16, so moegen carries MX
  /// activations there as bf16 of their decoded values (carriesDecodedMx).
  bool hasMxMatrixOps = true;
  /// AMDHSA code object version; recorded but unused for PTX targets.
  int64_t codeObjectVersion = 6;

  bool isNvptx() const { return arch == TargetArch::Nvptx; }
  /// "amdgcn-amd-amdhsa" or "nvptx64-nvidia-cuda".
  llvm::StringRef triple() const;
  /// The LLVM target features of the code objects: "+ptx81" for NVIDIA (PTX
  /// 8.1, the first ISA with the vector global reductions the sm_90a
  /// epilogues issue; CUDA 12.1 and later drivers load it), none for AMDGPU.
  llvm::StringRef llvmFeatures() const { return isNvptx() ? "+ptx81" : ""; }
  /// File extension of a code object: "hsaco" or "ptx".
  llvm::StringRef codeObjectExtension() const;

  /// The limits of `chip`, or nullopt if moegen does not generate for it.
  static std::optional<TargetInfo> forChip(llvm::StringRef chip, int64_t codeObjectVersion = 6);
  /// forChip as an error that names what is unsupported: "unsupported target
  /// chip 'gfx942'; moegen generates gfx950", "code object version must be 5
  /// or 6, got 4".
  static llvm::Expected<TargetInfo> get(llvm::StringRef chip, int64_t codeObjectVersion = 6);
  /// forChip(kDefaultChip).
  static TargetInfo defaultTarget();
  /// "gfx950, sm_90a": the chips forChip knows, for diagnostics.
  static std::string supportedChips();
  /// Whether `version` is a code object version moegen emits (5 or 6).
  static bool isSupportedCodeObjectVersion(int64_t version);
};

} // namespace moegen

#endif // MOEGEN_COMPILER_SPEC_TARGETINFO_H
