//===- TargetInfo.h - What the kernel templates know of a target -*- C++ -*-===//
#ifndef MOEGEN_TEMPLATES_TARGETINFO_H
#define MOEGEN_TEMPLATES_TARGETINFO_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace moegen {

/// Hardware limits the templates plan against (docs/gfx950-facts.md §6-§7).
struct TargetInfo {
  std::string chip;
  int64_t waveSize = 64;
  int64_t ldsBytes = 160 * 1024; // per workgroup
  int64_t maxThreadsPerWorkgroup = 1024;
  int64_t maxWavesPerEU = 8;
  int64_t codeObjectVersion = 6;

  /// The limits of `chip`, or nullopt if moegen does not generate for it.
  static std::optional<TargetInfo> forChip(llvm::StringRef chip, int64_t codeObjectVersion = 6);
};

} // namespace moegen

#endif // MOEGEN_TEMPLATES_TARGETINFO_H
