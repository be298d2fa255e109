// RUN: moegen-opt %s --moegen-frontend | FileCheck %s
// RUN: moegen-opt %s --moe-verify-schedule --moe-instantiate-templates | FileCheck %s

// moe-instantiate-templates replaces the layer with one gpu.module per
// kernel, targeted from moe.target; the sorting runs as sort_count (a
// histogram per token chunk: one i32 per expert and a spare), sort_scan (one
// wave per expert) and sort (segment starts, a histogram and an owner row per
// wave, a total per wave for the workgroup scan).

// CHECK-NOT: moe.layer
// CHECK: gpu.module @moe_sort_count_e8_k2 [#rocdl.target<O = 3, chip = "gfx950", abi = "500">] attributes {moe.family = "sort_count"}
// CHECK: gpu.func @moe_sort_count_e8_k2(%[[IDS:.*]]: memref<536870912xi32, #gpu.address_space<global>>, %[[COUNTS:.*]]: memref<536870912xi32, #gpu.address_space<global>>, %{{.*}}: i32)
// CHECK-SAME: workgroup(%[[HIST:.*]] : memref<9xi32, #gpu.address_space<workgroup>>)
// CHECK-SAME: kernel attributes {known_block_size = array<i32: 512, 1, 1>}
// CHECK: memref.load %[[IDS]]
// CHECK: memref.atomic_rmw addi
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[COUNTS]]
// CHECK: gpu.return
// CHECK: gpu.module @moe_sort_scan_e8 [#rocdl.target<O = 3, chip = "gfx950", abi = "500">] attributes {moe.family = "sort_scan"}
// CHECK: gpu.func @moe_sort_scan_e8(
// CHECK-NOT: workgroup(
// CHECK-SAME: kernel attributes {known_block_size = array<i32: 64, 1, 1>}
// CHECK: gpu.return
// CHECK: gpu.module @moe_sort_e8_k2_bm32 [#rocdl.target<O = 3, chip = "gfx950", abi = "500">] attributes {moe.family = "sort"}
// CHECK: gpu.func @moe_sort_e8_k2_bm32(%{{.*}}: memref<536870912xi32, #gpu.address_space<global>>, %{{.*}}: memref<536870912xf32, #gpu.address_space<global>>, %{{.*}}: memref<536870912xi32, #gpu.address_space<global>>, %{{.*}}: memref<536870912xi32, #gpu.address_space<global>>, %{{.*}}: memref<536870912xi32, #gpu.address_space<global>>, %{{.*}}: memref<536870912xf32, #gpu.address_space<global>>, %{{.*}}: memref<536870912xi32, #gpu.address_space<global>>, %[[NVALID:.*]]: memref<536870912xi32, #gpu.address_space<global>>, %[[TOKENS:.*]]: i32)
// CHECK-SAME: workgroup(%{{.*}} : memref<8xi32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<72xi32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<72xi32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<8xi32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK-SAME: kernel attributes {known_block_size = array<i32: 512, 1, 1>}
// Workgroup 0 writes num_valid_ids; padding rows get the sentinel (topk << 24) | tokens.
// CHECK: memref.store %[[TOKENS]], %[[NVALID]][%c1{{.*}}]
// CHECK: arith.ori %c33554432_i32, %[[TOKENS]] : i32
// The placing steps: an atomic min of lane ids per expert, a ballot of the lanes left.
// CHECK: scf.while
// CHECK: memref.atomic_rmw minu
// CHECK: rocdl.ballot
// CHECK: gpu.return

module attributes {moe.target = #moe.target<chip = "gfx950", abi = 5>} {
  moe.layer @small problem = #moe.problem<model_dim = 256, inter_dim = 128, experts = 8, topk = 2, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = fp4, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}
