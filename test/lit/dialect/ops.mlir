// RUN: moegen-opt %s | FileCheck %s
// RUN: moegen-opt %s | moegen-opt | FileCheck %s
// RUN: moegen-opt %s --mlir-print-op-generic | moegen-opt | FileCheck %s

// CHECK: module attributes {moe.target = #moe.target<chip = "gfx950", abi = 5>}
module attributes {moe.target = #moe.target<chip = "gfx950", abi = 5>} {
  // CHECK: moe.layer @kimi problem = <model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false>
  // CHECK-SAME: formats = <activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16>
  // CHECK-SAME: activation = <"situv2(beta = 4.0, linear_beta = 25.0)">
  moe.layer @kimi problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN, scale = f8E8M0FNU, block = 32>, output = bf16> activation = #moe.activation<"situv2(beta = 4.0, linear_beta = 25.0)"> {
    // CHECK-NEXT: moe.sort @sort block_m = 32
    moe.sort @sort block_m = 32
    // CHECK-NEXT: moe.stage1 @stage1 schedule = <tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 2, waves_per_eu = 4, k_batch_mode = atomic, fused_quant = fp4, reduce = atomic>
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 2, waves_per_eu = 4, k_batch_mode = atomic, fused_quant = fp4, reduce = atomic>
    // xcd_swizzle is printed where it is not the default (1).
    // CHECK-NEXT: moe.stage2 @stage2 schedule = <tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = deterministic, fused_quant = none, reduce = reduce, xcd_swizzle = 4>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = deterministic, fused_quant = none, reduce = reduce, xcd_swizzle = 4>
  }
  // A user-written activation is kept in canonical form; mxfp8 x mxfp4, interleaved gate/up.
  // CHECK: moe.layer @custom
  // CHECK-SAME: gate_up = interleaved, doweight_stage1 = true
  // CHECK-SAME: activation = !moe.mx<f8E4M3FN>, weight = !moe.mx<f4E2M1FN>
  // CHECK-SAME: activation = <"act(g, u; b = 2.0) = g * sigmoid(b * g) * u">
  moe.layer @custom problem = #moe.problem<model_dim = 256, inter_dim = 128, experts = 8, topk = 2, gate_up = interleaved, doweight_stage1 = true> formats = #moe.formats<activation = !moe.mx<f8E4M3FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"act(g, u; b = 2.0) = g * sigmoid(b * g) * u"> {
    // weight_decode is printed where it is not the default (mixed).
    // CHECK: moe.stage1 @stage1 schedule = <tile_m = 16, tile_n = 64, tile_k = 128, k_batch = 2, k_wave = 1, waves_per_eu = 0, k_batch_mode = deterministic, fused_quant = fp8, reduce = atomic, weight_decode = arithmetic>
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 16, tile_n = 64, tile_k = 128, k_batch = 2, k_wave = 1, waves_per_eu = 0, k_batch_mode = deterministic, fused_quant = fp8, reduce = atomic, weight_decode = arithmetic>
  }
}
