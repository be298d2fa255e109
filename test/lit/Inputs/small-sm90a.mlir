// small.moe (a4w4, 8 experts, top-2) for sm_90a, with quant_inter (no fused quantization).
module attributes {moe.target = #moe.target<chip = "sm_90a">} {
  moe.layer @small problem = <model_dim = 256, inter_dim = 128, experts = 8, topk = 2, gate_up = separated, doweight_stage1 = false> formats = <activation = !moe.mx<f4E2M1FN>, weight = !moe.mx<f4E2M1FN>, output = bf16> activation = <"situv2(beta = 4.0, linear_beta = 25.0)"> {
    moe.sort @sort block_m = 32
    moe.stage1 @stage1 schedule = <tile_m = 32, tile_n = 32, tile_k = 256, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
    moe.stage2 @stage2 schedule = <tile_m = 32, tile_n = 128, tile_k = 128, k_batch = 1, k_wave = 1, waves_per_eu = 0, k_batch_mode = atomic, fused_quant = none, reduce = atomic>
  }
}

