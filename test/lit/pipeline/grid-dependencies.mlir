// RUN: moegen-opt %s --pass-pipeline='builtin.module(gpu.module(moe-attach-grid-dependencies))' | FileCheck %s
// RUN: moegen-opt %inputs/small-sm90a.mlir --moegen-pipeline | FileCheck %s --check-prefix=LAYER

// Every kernel starts by waiting for the kernels before it, ahead of any other
// operation (the cuda runtime launches with programmatic stream
// serialization); no kernel lets its dependents start early; functions that
// are not kernels are left alone.

// CHECK-LABEL: gpu.func @kernel
// CHECK-NEXT: llvm.inline_asm has_side_effects "griddepcontrol.wait;", "~{memory}"
// CHECK-NEXT: gpu.thread_id x
// CHECK-NOT: launch_dependents
// CHECK-LABEL: gpu.func @helper
// CHECK-NOT: griddepcontrol
// CHECK: gpu.return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @kernel() kernel {
      %0 = gpu.thread_id x
      gpu.return
    }
    gpu.func @helper() {
      gpu.return
    }
  }
}

// Each of the sm_90a layer's kernels, after the whole pipeline.
// LAYER-COUNT-7: griddepcontrol.wait
// LAYER-NOT: griddepcontrol
