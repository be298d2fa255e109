//===- TargetSupport.h - Which kernel families each target has -*- C++ -*-===//
//
// A kernel family is generated for a target only where its template has been
// written for that target. Every other (family, target) pair is refused by
// moe-verify-schedule with an error naming both, never built from a template
// meant for another chip. And the form MX activations take between kernels
// on a target. MLIR-free: the verifier, codegen and the runtime ask the same
// functions.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEMPLATES_TARGETSUPPORT_H
#define MOEGEN_TEMPLATES_TARGETSUPPORT_H

#include "compiler/spec/KernelFamily.h"
#include "compiler/spec/Spec.h"
#include "compiler/spec/TargetInfo.h"

#include <string>

namespace moegen {

/// Whether moegen has a template of `family` for `target`.
bool hasTemplateFor(KernelFamily family, const TargetInfo &target);

/// "quant_input, quant_inter, reduce": the families `target` has templates for, in
/// launch order, for diagnostics.
std::string familiesWithTemplates(const TargetInfo &target);

/// Whether the layer's MX activations travel between its kernels as bf16 of
/// their decoded values: an MX activation format on a target without MX
/// matrix instructions. The quantizing kernels (quant_input, quant_inter,
/// stage 1's fused quantization, finish) still round every value to the MX
/// format with its block scale, and write the value that code decodes to
/// instead of the code and the scale; the GEMMs then read bf16 A. The GEMMs
/// would otherwise decode A again for every N tile of the output (12 to 56
/// times per element on the bench layers), and their MMAs take bf16 either
/// way, so the results are the same bits.
bool carriesDecodedMx(const MoeSpec &spec, const TargetInfo &target);

/// Whether stage 2 starts beside stage 1's last round instead of after it:
/// sm_90a (programmatic dependent launch), stage 1 writing the rows stage 2
/// reads itself (no split-K finish, no inter-stage quantization kernel
/// between them). Each sorted block then has a stage_ready counter in the
/// workspace: the sort zeroes it, stage 1 adds the N tiles it has written of
/// the block, stage 2 waits until it holds all of them before it reads the
/// block's rows (templates/gemm/StageReady.h).
bool stagesOverlap(const MoeSpec &spec, const TargetInfo &target);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_TARGETSUPPORT_H
