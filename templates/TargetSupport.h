//===- TargetSupport.h - Which kernel families each target has -*- C++ -*-===//
//
// A kernel family is generated for a target only where its template has been
// written for that target. Every other (family, target) pair is refused by
// moe-verify-schedule with an error naming both, never built from a template
// meant for another chip. MLIR-free: the verifier, codegen and the runtime
// ask the same table.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEMPLATES_TARGETSUPPORT_H
#define MOEGEN_TEMPLATES_TARGETSUPPORT_H

#include "compiler/spec/KernelFamily.h"
#include "compiler/spec/TargetInfo.h"

#include <string>

namespace moegen {

/// Whether moegen has a template of `family` for `target`.
bool hasTemplateFor(KernelFamily family, const TargetInfo &target);

/// "quant_input, quant_inter, reduce": the families `target` has templates for, in
/// launch order, for diagnostics.
std::string familiesWithTemplates(const TargetInfo &target);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_TARGETSUPPORT_H
