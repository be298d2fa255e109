//===- TargetInfo.cpp - The targets moegen generates for ------------------===//

#include "compiler/spec/TargetInfo.h"

namespace moegen {

std::optional<TargetInfo> TargetInfo::forChip(llvm::StringRef chip, int64_t codeObjectVersion) {
  if (chip != kDefaultChip || !isSupportedCodeObjectVersion(codeObjectVersion))
    return std::nullopt;
  TargetInfo t;
  t.chip = chip.str();
  // 160 KiB of LDS per workgroup on gfx950 (64 KiB on gfx942).
  t.ldsBytes = 163840;
  t.codeObjectVersion = codeObjectVersion;
  return t;
}

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

std::string TargetInfo::supportedChips() { return kDefaultChip.str(); }

bool TargetInfo::isSupportedCodeObjectVersion(int64_t version) {
  return version == 5 || version == 6;
}

} // namespace moegen
