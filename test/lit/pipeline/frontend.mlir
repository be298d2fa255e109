// RUN: moegen-opt %s --moegen-frontend | FileCheck %s
// RUN: moegen-opt %s --moe-verify-schedule --moe-instantiate-templates | FileCheck %s

// moe-instantiate-templates replaces the layer with one gpu.module per
// kernel, targeted from moe.target; the sorting kernel is one workgroup of
// 256 threads with two LDS arrays of one i32 per expert.

// CHECK-NOT: moe.layer
// CHECK: gpu.module @moe_sort_e8_k2_bm32 [#rocdl.target<O = 3, chip = "gfx950", abi = "500">] attributes {moe.family = "sort"}
// CHECK: gpu.func @moe_sort_e8_k2_bm32(%[[IDS:.*]]: memref<536870912xi32, #gpu.address_space<global>>, %{{.*}}: memref<536870912xf32, #gpu.address_space<global>>, %{{.*}}: memref<536870912xi32, #gpu.address_space<global>>, %{{.*}}: memref<536870912xf32, #gpu.address_space<global>>, %{{.*}}: memref<536870912xi32, #gpu.address_space<global>>, %[[NVALID:.*]]: memref<536870912xi32, #gpu.address_space<global>>, %[[TOKENS:.*]]: i32)
// CHECK-SAME: workgroup(%[[COUNTS:.*]] : memref<8xi32, #gpu.address_space<workgroup>>, %[[OFFSETS:.*]] : memref<8xi32, #gpu.address_space<workgroup>>)
// CHECK-SAME: kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// CHECK: %[[TID:.*]] = gpu.thread_id x
// Phase 1: per-expert counts.
// CHECK: scf.for %[[E:.*]] = %[[TID]] to %c8 step %c256
// CHECK: memref.load %[[IDS]]
// CHECK: memref.store %{{.*}}, %[[COUNTS]][%[[E]]]
// CHECK: gpu.barrier
// Phase 2: thread 0 lays out the segments and writes num_valid_ids.
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[NVALID]][%c0]
// CHECK: memref.store %[[TOKENS]], %[[NVALID]][%c1]
// CHECK: gpu.barrier
// Phase 3: segments in entry order; padding rows get the sentinel (topk << 24) | tokens.
// CHECK: %[[SENTINEL:.*]] = arith.ori %c33554432_i32, %[[TOKENS]] : i32
// CHECK: scf.for
// CHECK: arith.shli
// CHECK: memref.store %[[SENTINEL]]
// CHECK: gpu.return

module attributes {moe.target = #moe.target<chip = "gfx950", abi = 5>} {
  moe.layer @small problem = #moe.problem<model_dim = 256, inter_dim = 128, experts = 8, topk = 2, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = fp4, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}
