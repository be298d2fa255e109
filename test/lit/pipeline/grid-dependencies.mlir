// RUN: moegen-opt %s --pass-pipeline='builtin.module(gpu.module(moe-attach-grid-dependencies))' | FileCheck %s
// RUN: moegen-opt %inputs/small-sm90a.mlir --moegen-pipeline | FileCheck %s --check-prefix=LAYER

// Every kernel starts by waiting for the kernels before it, ahead of any other
// operation (the cuda runtime launches with programmatic stream
// serialization); the pass lets no kernel's dependents start early (only the
// sort and input quantization templates do, at decode sizes); functions that
// are not kernels are left alone.

// CHECK-LABEL: gpu.func @kernel
// CHECK-NEXT: llvm.inline_asm has_side_effects "griddepcontrol.wait;", "~{memory}"
// CHECK-NEXT: gpu.thread_id x
// CHECK-NOT: launch_dependents
// CHECK-LABEL: gpu.func @helper
// CHECK-NOT: griddepcontrol
// CHECK: gpu.return

// A kernel marked moe.grid_wait_at_exit waits before each of its returns
// instead, and nowhere else.
// CHECK-LABEL: gpu.func @quantizer
// CHECK-NEXT: gpu.thread_id x
// CHECK-NOT: griddepcontrol
// CHECK: cf.cond_br
// CHECK-NEXT: ^bb1:
// CHECK-NEXT: llvm.inline_asm has_side_effects "griddepcontrol.wait;", "~{memory}"
// CHECK-NEXT: gpu.return
// CHECK-NEXT: ^bb2:
// CHECK-NOT: griddepcontrol
// CHECK: memref.store
// CHECK-NEXT: llvm.inline_asm has_side_effects "griddepcontrol.wait;", "~{memory}"
// CHECK-NEXT: gpu.return
// CHECK-NEXT: }
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @kernel() kernel {
      %0 = gpu.thread_id x
      gpu.return
    }
    gpu.func @helper() {
      gpu.return
    }
    gpu.func @quantizer(%out: memref<4xi32>) kernel attributes {moe.grid_wait_at_exit} {
      %0 = gpu.thread_id x
      %c4 = arith.constant 4 : index
      %far = arith.cmpi uge, %0, %c4 : index
      cf.cond_br %far, ^bb1, ^bb2
    ^bb1:
      gpu.return
    ^bb2:
      %c1 = arith.constant 1 : i32
      memref.store %c1, %out[%0] : memref<4xi32>
      gpu.return
    }
  }
}

// Each of the sm_90a layer's kernels, after the whole pipeline; the sort
// kernel triggers its dependents after its wait, and the input quantization
// (rows in token order) waits at its exit and, as a grid of at most 16
// workgroups, lets its dependents launch first thing. Stage 1 waits at its
// entry and triggers its dependents after clearing the output; the sorted
// quantization (stage 2's A) and stage 2 wait for their rows a sorted block
// at a time (templates/gemm/StageReady.h): at their exits, and only after a
// counter's last try before.
// LAYER: llvm.func @moe_sort_count_e8_k2(
// LAYER: griddepcontrol.wait
// LAYER-NOT: launch_dependents
// LAYER: llvm.func @moe_sort_scan_e8(
// LAYER: griddepcontrol.wait
// LAYER-NOT: launch_dependents
// LAYER: llvm.func @moe_sort_e8_k2_bm32_ready5(
// LAYER: griddepcontrol.wait
// LAYER: nvvm.griddepcontrol launch_dependents
// LAYER: llvm.func @moe_quant_mxfp4_c256_bf16({{.*}}moe.grid_wait_at_exit
// LAYER-NOT: griddepcontrol
// LAYER: %[[GRID:.*]] = nvvm.read.ptx.sreg.nctaid.x
// LAYER: %[[WIDE:.*]] = llvm.sext %[[GRID]]
// LAYER: %[[FEW:.*]] = llvm.icmp "ule" %[[WIDE]]
// LAYER: llvm.cond_br %[[FEW]]
// LAYER-NEXT: ^bb{{[0-9]+}}:
// LAYER-NEXT: nvvm.griddepcontrol launch_dependents
// LAYER-NOT: griddepcontrol
// LAYER: griddepcontrol.wait
// LAYER-NEXT: llvm.return
// LAYER-NEXT: }
// LAYER: llvm.func @moe_stage1_
// LAYER-NOT: llvm.return
// LAYER: griddepcontrol.wait
// LAYER-NOT: llvm.return
// LAYER: nvvm.griddepcontrol launch_dependents
// LAYER: llvm.func @moe_quant_mxfp4_c128_sorted_k2_bf16_ready_bm32({{.*}}moe.grid_wait_at_exit
// LAYER-NOT: griddepcontrol
// LAYER: nvvm.griddepcontrol launch_dependents
// LAYER-NOT: griddepcontrol
// LAYER: griddepcontrol.wait
// LAYER-NOT: griddepcontrol
// LAYER: griddepcontrol.wait
// LAYER-NEXT: llvm.return
// LAYER-NEXT: }
// LAYER: llvm.func @moe_stage2_{{.*}}moe.grid_wait_at_exit
// LAYER-NOT: griddepcontrol
// LAYER: griddepcontrol.wait
// LAYER-NOT: griddepcontrol
// LAYER: griddepcontrol.wait
// LAYER-NEXT: llvm.return
// LAYER-NOT: griddepcontrol
