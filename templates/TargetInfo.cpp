//===- TargetInfo.cpp - Target limits -------------------------------------===//

#include "templates/TargetInfo.h"

namespace moegen {

std::optional<TargetInfo> TargetInfo::forChip(llvm::StringRef chip, int64_t codeObjectVersion) {
  if (chip != "gfx950")
    return std::nullopt;
  TargetInfo t;
  t.chip = chip.str();
  // 160 KiB of LDS per workgroup on gfx950 (64 KiB on gfx942).
  t.ldsBytes = 163840;
  t.codeObjectVersion = codeObjectVersion;
  return t;
}

} // namespace moegen
