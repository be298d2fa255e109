//===- StageReady.h - Stage 2 beside stage 1's last round ------*- C++ -*-===//
//
// sm_90a, GemmPlan::stageReady (stagesOverlap, templates/TargetSupport.h):
// stage 1 lets the next kernel launch as soon as it has cleared the layer
// output, and hands each sorted block's rows on through a counter per block
// in the workspace (stage_ready, i32). The sort sets a block's counter where
// it writes the block's expert (SortPlan::stageReadyCount); stage 1 takes
// from it the N tiles of the block it has written; where the inter-stage
// quantization runs between the stages (interQuantCountsDown) it quantizes a
// block once the counter is down to 1, lets stage 2 launch at its start and
// takes the last 1 (QuantPlan::stageReady); stage 2 reads a block's rows
// once the counter is down to zero. Each kernel after stage 1 waits for the
// grid before it at its exit, so that the kernels after stage 2 find all of
// them complete. The driver launches a kernel only once every workgroup of
// the one before it has triggered, that is has been resident: the
// workgroups a later kernel puts on the SMs never keep one they wait for
// from being placed.
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

/// Stage 2 (or the inter-stage quantization), one thread, before the M
/// tile's rows are read (a barrier must follow): acquire loads of sorted
/// block `block`'s counter (ld.acquire.gpu) until it is down to `readyAt`
/// (0 for stage 2, 1 for the quantization, whose own pass is the last
/// count), or after kStageReadyTries griddepcontrol.wait.
void emitStageReadyAcquire(Arith &a, mlir::Value stageReady, mlir::Value block,
                           int64_t readyAt = 0);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_GEMM_STAGEREADY_H
