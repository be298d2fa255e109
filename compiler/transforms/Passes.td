//===- Passes.td - moegen compiler passes ------------------*- tablegen -*-===//
#ifndef MOEGEN_COMPILER_TRANSFORMS_PASSES_TD
#define MOEGEN_COMPILER_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def MoeVerifySchedule : Pass<"moe-verify-schedule", "::mlir::ModuleOp"> {
  let summary = "Reject schedules the kernel templates cannot generate";
  let description = [{
    Asks each kernel template of every `moe.layer` (sort, stage1, stage2)
    whether the layer's problem, formats and schedules are valid on the
    module's `moe.target`: k_batch and k_wave dividing K, K per wave a
    multiple of tile_k, tile_k a multiple of the MX block and MFMA K, tiles
    fitting the MFMA shape, LDS within the chip's limit, supported format
    pairs. Each violation is an error naming the stage, the parameter and the
    numbers. Runs before any code is generated. Each kernel (of `families`
    only, when given) must have a template for the target: sm_90a has fewer
    families than gfx950 so far, and the others are refused by name.
  }];
  let options = [
    ListOption<"families", "families", "std::string",
               "only these kernel families (e.g. quant_input): the others are not built">
  ];
  let dependentDialects = ["::moegen::moe::MoeDialect"];
}

def MoeInstantiateTemplates : Pass<"moe-instantiate-templates", "::mlir::ModuleOp"> {
  let summary = "Expand every moe.layer into gpu.module kernels";
  let description = [{
    Replaces each `moe.layer` with one `gpu.module` per kernel (sorting, and
    the stage kernels as their templates land), each carrying a
    `#rocdl.target` or `#nvvm.target` built from the module's `moe.target`.
    Expects a verified schedule (run moe-verify-schedule first).
  }];
  let options = [
    ListOption<"families", "families", "std::string",
               "only these kernel families (e.g. quant_input): the others are not built">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::ROCDL::ROCDLDialect", "::mlir::NVVM::NVVMDialect",
                           "::mlir::amdgpu::AMDGPUDialect", "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect", "::mlir::LLVM::LLVMDialect"];
}

def MoeLowerToTarget : Pass<"moe-lower-to-target", "::mlir::ModuleOp"> {
  let summary = "Lower every kernel gpu.module to the LLVM dialect for the module's target";
  let description = [{
    Reads the module's `moe.target`, and runs that target's lowering
    (buildTargetLoweringPipeline: for gfx950, on each gpu.module scf -> cf,
    amdgpu -> rocdl, gpu -> rocdl with bare-pointer kernel arguments and the
    templates' loop hints as LLVM loop metadata (moe-attach-loop-annotations);
    for sm_90a, scf -> cf and gpu -> nvvm likewise; then cast reconciliation
    and canonicalization). The chip is never a pass
    option: the target attribute is the one source.
  }];
}

def MoeAttachGridDependencies : Pass<"moe-attach-grid-dependencies", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Make every NVPTX kernel wait for its predecessors first "
                "(programmatic dependent launch)";
  let description = [{
    The cuda runtime launches every kernel that executes
    `griddepcontrol.wait` with programmatic stream serialization: the driver
    may launch it as the kernel ahead of it in the stream finishes, before
    that one's completion is flushed, instead of after. Such a kernel must
    not touch memory before the wait returns (its predecessors complete,
    their memory visible); this pass puts the wait at the entry of every
    kernel of the module, ahead of any other operation, as inline PTX with a
    memory clobber so that no load or store moves above it; a kernel marked
    `moe.grid_wait_at_exit` (its template's promise that no earlier kernel of
    the layer touches its memory) waits before each return instead,
    so that its work overlaps theirs and its grid still completes after
    them. The pass lets no kernel trigger its dependents early
    (`griddepcontrol.launch_dependents`): workgroups that wait at their
    entry would hold the SMs beside the running kernel's, which measured
    slower from 16 tokens on (docs/sm90a.md). The templates trigger where
    that cannot happen: grids of a few workgroups at decode sizes (the sort
    sorting alone, the input quantization), and stage 1 for a stage 2 that
    waits per sorted block instead (templates/gemm/StageReady.h).
    Launched without the attribute, the wait returns at once.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def MoeAttachLoopAnnotations : Pass<"moe-attach-loop-annotations"> {
  let summary = "Turn the loop hints the templates put on scf.for into LLVM loop metadata";
  let description = [{
    A template marks a loop with `llvm.loop_annotation` (for instance
    `unroll = <disable = true>` on a main loop it pipelines by hand);
    scf-to-cf and cf-to-llvm carry that attribute to the loop's back edge as
    a plain attribute, which translation to LLVM IR ignores. This pass moves
    it into the `loop_annotation` of the `llvm.br` / `llvm.cond_br`, which
    becomes `!llvm.loop` metadata.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // MOEGEN_COMPILER_TRANSFORMS_PASSES_TD
