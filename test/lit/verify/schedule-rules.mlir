// RUN: moegen-opt %s --moe-verify-schedule --split-input-file --verify-diagnostics | FileCheck %s
// Each rule of the kernel templates, once failing and once passing at its edge.
// Passing layers come out unchanged:
// CHECK-COUNT-17: moe.layer @l
// The Kimi-K3 TP8 a4w4 schedule passes.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 2, waves_per_eu = 4, k_batch_mode = atomic, fused_quant = fp4, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// k_batch must divide K of its stage (stage1 K = model_dim).
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    // expected-error @below {{stage1: k_batch=3 does not divide K=3584 (model_dim)}}
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 3, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// Edge: k_batch=7 divides 3584 and leaves 512 = 2 * 256 per workgroup.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 7, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// stage2 K = inter_dim.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    // expected-error @below {{stage2: k_batch=5 does not divide K=384 (inter_dim)}}
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 5, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// Edge: k_batch=3 splits inter_dim 384 into 128 = tile_k.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 3, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// k_wave must divide K/k_batch.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    // expected-error @below {{stage1: k_wave=3 does not divide K/k_batch=3584/7=512}}
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 7, k_wave = 3, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// Edge: k_wave=2 of 512.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 7, k_wave = 2, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// K/(k_batch*k_wave) must be a multiple of tile_k.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    // expected-error @below {{stage1: K/(k_batch*k_wave)=3584/(14*1)=256 is not a multiple of tile_k=512}}
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 512, k_batch = 14, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// Edge: exactly one tile_k per workgroup.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 14, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// tile_k must be a multiple of the MX block (32) and the scaled MFMA K (128).
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    // expected-error @below {{stage1: tile_k=192 is not a multiple of 128 (the MX block of 32 and the MFMA K=128)}}
    // expected-error @below {{stage1: K/(k_batch*k_wave)=3584/(1*1)=3584 is not a multiple of tile_k=192}}
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 192, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// Edge: tile_k=128, one scaled MFMA K step.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// bf16 activations use the bf16 MFMA (K=32): tile_k a multiple of 32.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = bf16, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    // expected-error @below {{stage1: tile_k=48 is not a multiple of 32 (the MX block of 32 and the MFMA K=32)}}
    // expected-error @below {{stage1: K/(k_batch*k_wave)=3584/(1*1)=3584 is not a multiple of tile_k=48}}
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 48, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// Edge: bf16 activations with tile_k=32.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = bf16, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 32, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// tile_m must be a multiple of the MFMA M (16).
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    // expected-error @below {{'moe.sort' op block_m must be a positive multiple of 16, got 24}}
    moe.sort @sort block_m = 24
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 24, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// tile_m of stage2 must be a multiple of the MFMA M (16).
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    // expected-error @below {{stage2: tile_m=40 is not a multiple of the MFMA M=16}}
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 40, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// Edge: tile_m=16.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 16, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// tile_n must be a multiple of the MFMA N (16).
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    // expected-error @below {{stage2: tile_n=24 is not a multiple of the MFMA N=16}}
    // expected-error @below {{stage2: tile_n=24 does not divide N=3584 (model_dim)}}
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 24, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// tile_n must divide N (stage1 N = inter_dim).
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    // expected-error @below {{stage1: tile_n=256 does not divide N=384 (inter_dim)}}
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 256, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// Edge: tile_n=128 divides 384.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// Output tiles are at most 256x256.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    // expected-error @below {{stage2: tile 32x512 exceeds the template's 256x256 output tile}}
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 512, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// Edge: tile_n=256.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 256, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// At most 1024 threads per workgroup: 4 N-waves x k_wave.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 5120, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    // expected-error @below {{stage1: k_wave=5 with tile_n=128 needs 20 waves (1280 threads), over the workgroup limit of 1024}}
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 256, k_batch = 1, k_wave = 5, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// Edge: 16 waves = 1024 threads.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 4096, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 256, k_batch = 1, k_wave = 4, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// stage1's tile_m is also the sorting block, so it must be a multiple of 16 (the
// MMA M); 48-, 80-, 96-row blocks are fine, powers of two or not.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 2304, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = bf16, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    // expected-error @below {{'moe.sort' op block_m must be a positive multiple of 16, got 40}}
    moe.sort @sort block_m = 40
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 40, tile_n = 32, tile_k = 288, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// LDS over 160 KiB: bf16 A tiles double-buffered, 2 * 128 rows * (352 * 2 + 16) bytes.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3520, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = bf16, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 128
    // expected-error @below {{stage1: needs 184320 bytes of LDS (double-buffered A tiles 184320, k_wave reduction 0), over the 163840-byte limit of gfx950}}
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 128, tile_n = 32, tile_k = 352, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 64, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// The k_wave reduction scratch (reusing the A tiles' LDS): 16 waves * 64 lanes * 8 m-tiles * 2 n-tiles * 16 bytes.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 512, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 128
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 128, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    // expected-error @below {{stage2: needs 262144 bytes of LDS (double-buffered A tiles 81920, k_wave reduction 262144), over the 163840-byte limit of gfx950}}
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 128, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 4, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// Edge: exactly 163840 bytes: 2 buffers * 8 K-groups * 128 rows * (64 + 16) bytes.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 1024, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 128
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 128, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 128, tile_n = 32, tile_k = 128, k_batch = 1, k_wave = 8, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// A stage-2 M tile reads one expert: its tile_m must divide the sorting block (stage1 tile_m).
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    // expected-error @below {{stage2: tile_m=64 does not divide the sorting block of stage1 tile_m=32 (an M tile must read the rows of one expert)}}
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 64, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// The sort kernel keeps seventeen i32 per expert in LDS (the segment start, a
// histogram and an owner row per wave of 8, each row with a spare) and the 8
// waves' totals of its scan: 4 * (17 * experts + 16 + 8) bytes.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 2409, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    // expected-error @below {{sort: experts=2409 need 163920 bytes of LDS, over the 163840-byte limit}}
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// Edge: 2408 experts.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 2408, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// Format pairs the target does not support.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f4E2M1FN>, weight = bf16, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    // expected-error @below {{stage1: activation_dtype=mxfp4 with weight_dtype=bf16 is not supported on gfx950}}
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    // expected-error @below {{stage2: activation_dtype=mxfp4 with weight_dtype=bf16 is not supported on gfx950}}
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// Supported: mxfp8 x mxfp8, and bf16 x bf16.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f8E4M3FN>, weight = !moe.mx<f8E4M3FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = bf16, weight = bf16, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 64, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// A fused quantization must produce the activation dtype stage2 reads.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f8E4M3FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    // expected-error @below {{stage1: fused_quant=fp4 writes the intermediate as mxfp4, but stage2 reads activation_dtype=mxfp8}}
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = fp4, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// Edge: fp8 fused quantization for mxfp8 activations.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 3584, inter_dim = 384, experts = 896, topk = 16, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = !moe.mx<f8E4M3FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = fp8, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// The weights' (16,16) preshuffle: stage 2's mxfp4 rows of inter_dim/2 bytes must be a multiple
// of 32 (inter_dim = 96: 48 bytes).
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 256, inter_dim = 96, experts = 8, topk = 2, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = bf16, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    // expected-error @below {{stage2: the mxfp4 weights are 256 rows of 48 bytes; the (16,16) preshuffle needs rows in groups of 16 and row bytes a multiple of 32 (inter_dim=96)}}
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 32, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

// -----

// Edge: inter_dim = 192 gives 96-byte rows.
module attributes {moe.target = #moe.target<chip = "gfx950">} {
  moe.layer @l problem = #moe.problem<model_dim = 256, inter_dim = 192, experts = 8, topk = 2, gate_up = separated, doweight_stage1 = false> formats = #moe.formats<activation = bf16, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = #moe.activation<"silu"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = #moe.schedule<tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = #moe.schedule<tile_m = 32, tile_n = 128, tile_k = 32, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}
