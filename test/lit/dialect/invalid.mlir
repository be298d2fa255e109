// RUN: moegen-opt %s --split-input-file --verify-diagnostics

// expected-error @below {{MX elements must be f4E2M1FN or f8E4M3FN, got 'bf16'}}
func.func private @f() -> !moe.mx<bf16>

// -----

// expected-error @below {{MX scales must be f8E8M0FNU (e8m0), got 'f8E4M3FN'}}
func.func private @f() -> !moe.mx<f4E2M1FN, scale = f8E4M3FN>

// -----

// expected-error @below {{MX block must be 32 elements along K, got 16}}
func.func private @f() -> !moe.mx<f4E2M1FN, scale = f8E8M0FNU, block = 16>

// -----

// expected-error @below {{topk (9) exceeds the number of experts (8)}}
module attributes {p = #moe.problem<model_dim = 256, inter_dim = 128, experts = 8, topk = 9, gate_up = separated, doweight_stage1 = false>} {}

// -----

// expected-error @below {{model_dim, inter_dim, experts and topk must be positive}}
module attributes {p = #moe.problem<model_dim = 0, inter_dim = 128, experts = 8, topk = 2, gate_up = separated, doweight_stage1 = false>} {}

// -----

// expected-error @below {{output format must be bf16, got 'f32'}}
module attributes {p = #moe.formats<activation = bf16, weight = !moe.mx<f4E2M1FN>, output = f32>} {}

// -----

// expected-error @below {{activation format must be bf16, !moe.mx<f8E4M3FN> or !moe.mx<f4E2M1FN>, got 'f16'}}
module attributes {p = #moe.formats<activation = f16, weight = !moe.mx<f4E2M1FN>, output = bf16>} {}

// -----

// expected-error @below {{invalid activation: activation:1:1: error: unknown activation 'relu'}}
module attributes {p = #moe.activation<"relu">} {}

// -----

// expected-error @below {{invalid activation: activation:1:13: error: unknown name 'beta'}}
module attributes {p = #moe.activation<"act(g, u) = beta * g * u">} {}

// -----

// expected-error @below {{tile sizes must be positive, got 0x32x256}}
module attributes {p = #moe.schedule<tile_m = 0, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>} {}

// -----

// expected-error @below {{k_batch and k_wave must be positive, got k_batch=0 k_wave=1}}
module attributes {p = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 0, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>} {}

// -----

// expected-error @below {{waves_per_eu must be in [0, 8] (0 = unconstrained), got 9}}
module attributes {p = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 9, k_batch_mode = atomic, fused_quant = none, reduce = atomic>} {}

// -----

// expected-error @below {{xcd_swizzle must be in [1, 8] (1 = dispatch order), got 0}}
module attributes {p = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic, xcd_swizzle = 0>} {}

// -----

// expected-error @below {{unsupported target chip 'gfx942'; moegen generates gfx950, sm_90a}}
module attributes {moe.target = #moe.target<chip = "gfx942">} {}

// -----

// expected-error @below {{code object version must be 5 or 6, got 4}}
module attributes {moe.target = #moe.target<chip = "gfx950", abi = 4>} {}

// -----

moe.layer @l problem = #moe.problem<model_dim = 256, inter_dim = 128, experts = 8, topk = 2, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = bf16, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
  // expected-error @below {{block_m must be a positive multiple of 16, got 24}}
  moe.sort @sort block_m = 24
}

// -----

moe.layer @l problem = #moe.problem<model_dim = 256, inter_dim = 128, experts = 8, topk = 2, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = bf16, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
  // expected-error @below {{block_m (16) must equal stage1 tile_m (32)}}
  moe.sort @sort block_m = 16
  moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
}

// -----

moe.layer @l problem = #moe.problem<model_dim = 256, inter_dim = 128, experts = 8, topk = 2, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = bf16, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
  // expected-error @below {{'reduce' is a stage2 parameter; stage1 must leave it atomic}}
  moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = reduce>
}

// -----

moe.layer @l problem = #moe.problem<model_dim = 256, inter_dim = 128, experts = 8, topk = 2, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = bf16, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
  // expected-error @below {{'fused_quant' is a stage1 parameter; stage2 writes the bf16 output}}
  moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = fp4, reduce = atomic>
}

// -----

// expected-error @below {{holds at most one moe.sort, one moe.stage1 and one moe.stage2}}
moe.layer @l problem = #moe.problem<model_dim = 256, inter_dim = 128, experts = 8, topk = 2, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = bf16, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
  moe.sort @a block_m = 32
  moe.sort @b block_m = 32
}

// -----

// expected-error @below {{'moe.sort' op expects parent op 'moe.layer'}}
moe.sort @sort block_m = 32
