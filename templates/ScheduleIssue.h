//===- ScheduleIssue.h - Why a schedule cannot be generated -----*- C++ -*-===//
#ifndef MOEGEN_TEMPLATES_SCHEDULEISSUE_H
#define MOEGEN_TEMPLATES_SCHEDULEISSUE_H

#include "compiler/spec/Spec.h"

#include <string>
#include <vector>

namespace moegen {

/// One violated rule: the kernel family ("sort", "stage1", "stage2"), the
/// parameter at fault ("k_batch", "tile_k", "formats", "lds", ...) and a
/// message with the numbers, e.g. "k_batch=3 does not divide K=3584 (model_dim)".
struct ScheduleIssue {
  std::string family;
  std::string parameter;
  std::string message;

  /// "stage1: k_batch=3 does not divide K=3584 (model_dim)"
  std::string str() const { return family + ": " + message; }
};
using ScheduleIssues = std::vector<ScheduleIssue>;

} // namespace moegen

#endif // MOEGEN_TEMPLATES_SCHEDULEISSUE_H
