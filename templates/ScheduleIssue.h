//===- ScheduleIssue.h - Why a schedule cannot be generated -----*- C++ -*-===//
#ifndef MOEGEN_TEMPLATES_SCHEDULEISSUE_H
#define MOEGEN_TEMPLATES_SCHEDULEISSUE_H

#include "compiler/spec/KernelFamily.h"

#include "llvm/ADT/Twine.h"

#include <string>
#include <vector>

namespace moegen {

/// One violated rule: the kernel family whose rule it is (Sort, Stage1 or Stage2: the
/// `moe` ops diagnostics point at), the
/// parameter at fault ("k_batch", "tile_k", "formats", "lds", ...) and a
/// message with the numbers, e.g. "k_batch=3 does not divide K=3584 (model_dim)".
struct ScheduleIssue {
  KernelFamily family;
  std::string parameter;
  std::string message;

  /// "stage1: k_batch=3 does not divide K=3584 (model_dim)"
  std::string str() const { return (toString(family) + ": " + message).str(); }
};
using ScheduleIssues = std::vector<ScheduleIssue>;

} // namespace moegen

#endif // MOEGEN_TEMPLATES_SCHEDULEISSUE_H
