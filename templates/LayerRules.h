//===- LayerRules.h - Every rule of every kernel of a layer -----*- C++ -*-===//
#ifndef MOEGEN_TEMPLATES_LAYERRULES_H
#define MOEGEN_TEMPLATES_LAYERRULES_H

#include "compiler/spec/TargetInfo.h"
#include "templates/ScheduleIssue.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

namespace moegen {

/// Asks each kernel template of the layer (sort, stage1, stage2) for the rules
/// `spec` breaks on `target`. Empty means every kernel can be generated. This
/// is the check behind moe-verify-schedule; a tuner calls it to enumerate.
/// Each kernel of the layer (of `families` only, when not empty) must also
/// have a template for `target` (TargetSupport.h); parameter "target".
ScheduleIssues checkLayer(const MoeSpec &spec, const TargetInfo &target,
                          llvm::ArrayRef<KernelFamily> families = {});

/// checkLayer as an error: one line per issue, "<file>:<line>:<col>: error:
/// stage1: k_batch=3 does not divide K=3584 (model_dim)", at the location of
/// the stage the rule's family serves ("<layer>.<stage>" for a spec built in
/// C++). Success when no rule is broken.
llvm::Error verifyLayerRules(const MoeSpec &spec, const TargetInfo &target,
                             llvm::ArrayRef<KernelFamily> families = {});

} // namespace moegen

#endif // MOEGEN_TEMPLATES_LAYERRULES_H
