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
/// sm_90a (programmatic dependent launch), stage 2's `wait = rows` (the
/// default), stage 1 without k_batch (whose partials a finish kernel sums
/// first). Each sorted block then has a stage_ready counter in the
/// workspace: the sort sets it to stageReadyCount, stage 1 counts down the
/// N tiles it has written of the block, the inter-stage quantization (where
/// it runs between the stages, interQuantCountsDown) its one pass over the
/// block, and stage 2 waits until it is down to zero before it reads the
/// block's rows (templates/gemm/StageReady.h).
bool stagesOverlap(const MoeSpec &spec, const TargetInfo &target);

/// stagesOverlap with the inter-stage quantization between the stages (MX
/// activations, stage 1 without a fused quantization): it quantizes a sorted
/// block once stage 1 has counted it down to 1, then takes that 1.
bool interQuantCountsDown(const MoeSpec &spec, const TargetInfo &target);

/// What the sort sets each sorted block's stage_ready counter to: stage 1's
/// N tiles, and one more for the inter-stage quantization where it counts
/// down (interQuantCountsDown); 0 without stagesOverlap.
int64_t stageReadyCount(const MoeSpec &spec, const TargetInfo &target);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_TARGETSUPPORT_H
