// RUN: moegen-opt %s --pass-pipeline='builtin.module(gpu.module(moe-attach-grid-dependencies))' | FileCheck %s
// RUN: moegen-opt %inputs/small-sm90a.mlir --moegen-pipeline | FileCheck %s --check-prefix=LAYER

// Every kernel starts by waiting for the kernels before it, ahead of any other
// operation (the cuda runtime launches with programmatic stream
// serialization); the pass lets no kernel's dependents start early (only the
// sort template does, when one workgroup sorts alone); functions that are not
// kernels are left alone.

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

// Each of the sm_90a layer's kernels, after the whole pipeline; the sort
// kernel triggers its dependents after its wait.
// LAYER: llvm.func @moe_sort_count_e8_k2(
// LAYER: griddepcontrol.wait
// LAYER-NOT: launch_dependents
// LAYER: llvm.func @moe_sort_scan_e8(
// LAYER: griddepcontrol.wait
// LAYER-NOT: launch_dependents
// LAYER: llvm.func @moe_sort_e8_k2_bm32(
// LAYER: griddepcontrol.wait
// LAYER: nvvm.griddepcontrol launch_dependents
// LAYER-COUNT-4: griddepcontrol.wait
// LAYER-NOT: griddepcontrol
