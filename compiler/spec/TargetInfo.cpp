//===- TargetInfo.cpp - The targets moegen generates for ------------------===//

#include "compiler/spec/TargetInfo.h"

namespace moegen {

std::optional<TargetInfo> TargetInfo::forChip(llvm::StringRef chip, int64_t codeObjectVersion) {
  if (!isSupportedCodeObjectVersion(codeObjectVersion))
    return std::nullopt;
  TargetInfo t;
  t.chip = chip.str();
  t.codeObjectVersion = codeObjectVersion;
  if (chip == kDefaultChip) {
    // 160 KiB of LDS per workgroup on gfx950 (64 KiB on gfx942).
    t.ldsBytes = 163840;
    t.staticLdsBytes = t.ldsBytes;
    return t;
  }
  if (chip == kHopperChip) {
    // Compute capability 9.0: 32-thread warps, 1024 threads per block,
    // 227 KiB of shared memory per block (228 KiB per SM less 1 KiB the
    // driver reserves; above 48 KiB only as opted-in dynamic shared memory),
    // 64 warps per SM over 4 sub-partitions.
    t.arch = TargetArch::Nvptx;
    t.waveSize = 32;
    t.ldsBytes = 227 * 1024;
    t.staticLdsBytes = 48 * 1024;
    t.maxThreadsPerWorkgroup = 1024;
    t.maxWavesPerEU = 16;
    t.simdsPerCU = 4;
    t.hasMxMatrixOps = false; // no fp4/fp8 MX MMA before sm_100a
    return t;
  }
  return std::nullopt;
}

llvm::StringRef TargetInfo::triple() const {
  return isNvptx() ? "nvptx64-nvidia-cuda" : "amdgcn-amd-amdhsa";
}

llvm::StringRef TargetInfo::codeObjectExtension() const { return isNvptx() ? "ptx" : "hsaco"; }

llvm::Expected<TargetInfo> TargetInfo::get(llvm::StringRef chip, int64_t codeObjectVersion) {
  if (!isSupportedCodeObjectVersion(codeObjectVersion))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "code object version must be 5 or 6, got %lld",
                                   static_cast<long long>(codeObjectVersion));
  if (std::optional<TargetInfo> t = forChip(chip, codeObjectVersion))
    return *t;
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "unsupported target chip '%s'; moegen generates %s",
                                 chip.str().c_str(), supportedChips().c_str());
}

TargetInfo TargetInfo::defaultTarget() { return *forChip(kDefaultChip); }

std::string TargetInfo::supportedChips() { return (kDefaultChip + ", " + kHopperChip).str(); }

bool TargetInfo::isSupportedCodeObjectVersion(int64_t version) {
  return version == 5 || version == 6;
}

} // namespace moegen
