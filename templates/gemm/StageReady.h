//===- StageReady.h - Stage 2 beside stage 1's last round ------*- C++ -*-===//
//
// sm_90a, GemmPlan::stageReady (stagesOverlap, templates/TargetSupport.h):
// stage 1 lets stage 2 launch as soon as it has cleared the layer output, and
// hands it each sorted block's rows through a counter per block in the
// workspace (stage_ready, i32). The sort sets a block's counter to stage 1's
// N tiles where it writes the block's expert (SortPlan::stageReadyTiles);
// stage 1 takes from it the N tiles of the block it has written; stage 2
// reads a block's rows once the counter is down to zero, and waits for stage
// 1's grid before it exits, so that the kernels after it find both complete.
// The driver launches stage 2 only once every workgroup of stage 1 has
// triggered, that is has been resident: the workgroups stage 2 puts on the
// SMs never keep one of stage 1's waiting.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEMPLATES_GEMM_STAGEREADY_H
#define MOEGEN_TEMPLATES_GEMM_STAGEREADY_H

#include "templates/KernelBuilder.h"

namespace moegen {

/// Stage 2's tries at a block's counter, a nanosleep of
/// kStageReadySleepNs between them, before it waits for stage 1's whole
/// grid instead (about 4 ms): a counter that no stage 1 raises (stage 2
/// launched on its own over rows written otherwise) delays, never hangs, it.
inline constexpr int64_t kStageReadyTries = 8192;
inline constexpr int64_t kStageReadySleepNs = 256;

/// Stage 1 after the layer output's clear, every thread: its stores made
/// visible at GPU scope (fence.acq_rel.gpu), then
/// griddepcontrol.launch_dependents.
void emitStage2Launch(Arith &a);

/// Stage 1, one thread, after the barrier that ends an M tile: `tiles` (an
/// index) more N tiles of sorted block `block` written, released at GPU
/// scope (fence.acq_rel.gpu, then a relaxed atomic subtraction).
void emitStageReadyRelease(Arith &a, mlir::Value stageReady, mlir::Value block, mlir::Value tiles);

/// Stage 2, one thread, before the M tile's rows are read (a barrier must
/// follow): acquire loads of sorted block `block`'s counter (ld.acquire.gpu)
/// until it is down to zero, or after kStageReadyTries griddepcontrol.wait.
void emitStageReadyAcquire(Arith &a, mlir::Value stageReady, mlir::Value block);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_GEMM_STAGEREADY_H
