//===- LayerSampler.cpp - Random layers near the schedule rules' edges ----===//

#include "runtime/check/LayerSampler.h"

#include <algorithm>

namespace moegen {

int64_t LayerSampler::likely(const std::vector<int64_t> &fits, const std::vector<int64_t> &any) {
  return !fits.empty() && coin(0.85) ? pick(fits) : pick(any);
}

std::string LayerSampler::stage(int64_t tileM, int64_t n, int64_t k, int64_t kAlign) {
  int64_t kBatch = pick<int64_t>({1, 1, 1, 2, 3, 4});
  int64_t kWave = pick<int64_t>({1, 1, 2, 3, 4});
  std::vector<int64_t> tileNs, tileKs;
  for (int64_t t = 16; t <= 256; t += 16)
    if (n % t == 0)
      tileNs.push_back(t);
  int64_t perWave = k % (kBatch * kWave) == 0 ? k / (kBatch * kWave) : 0;
  for (int64_t t = kAlign; t <= std::min<int64_t>(perWave, 512); t += kAlign)
    if (perWave % t == 0)
      tileKs.push_back(t);
  int64_t tileN = likely(tileNs, {16, 32, 48, 64, 96, 128, 160, 256});
  int64_t tileK = likely(tileKs, {32, 64, 128, 192, 256, 512});
  std::string s;
  s += "    tile = " + std::to_string(tileM) + "x" + std::to_string(tileN) + "x" +
       std::to_string(tileK) + "\n";
  s += "    k_batch = " + std::to_string(kBatch) + "\n";
  s += std::string("    k_batch_mode = ") + (coin() ? "atomic" : "deterministic") + "\n";
  s += "    k_wave = " + std::to_string(kWave) + "\n";
  s += "    waves_per_eu = " + std::to_string(range(0, 4)) + "\n";
  // sm_90a: every MXFP4 register-weight tile may decode by one product;
  // gfx950: the workgroups may be regrouped over the XCDs.
  if (nvptx && coin(0.35))
    s += "    weight_decode = arithmetic\n";
  // sm_90a: steps of register weights ahead in place of the plan's (refused
  // where deeper than a K-group's steps or where the tile stages its weights).
  if (nvptx && coin(0.3))
    s += "    prefetch = " + std::to_string(range(1, 3)) + "\n";
  if (!nvptx && coin(0.25))
    s += "    xcd_swizzle = " + std::to_string(pick<int64_t>({2, 3, 4, 8})) + "\n";
  return s;
}

SampledLayer LayerSampler::next() {
  int64_t modelDim = pick<int64_t>({128, 256, 384, 512});
  int64_t interDim = pick<int64_t>({64, 128, 192, 256, 384});
  int64_t experts = range(1, 12);
  int64_t topk = range(1, std::min<int64_t>(experts, 4));
  std::string adtype = pick<std::string>({"bf16", "mxfp8", "mxfp4"});
  // sm_90a stages weights of other formats through shared memory: drawn
  // more often there.
  std::string wdtype = coin(nvptx ? 0.7 : 0.85) ? "mxfp4" : pick<std::string>({"mxfp8", "bf16"});
  std::string fused = adtype == "mxfp4" ? "fp4" : adtype == "mxfp8" ? "fp8" : "none";
  if (coin(0.3))
    fused = pick<std::string>({"none", "fp4", "fp8"});
  // K alignment of a tile: the MX block and the MFMA K (128) for MX
  // operands, the bf16 MFMA K (32) otherwise.
  int64_t kAlign = adtype == "bf16" ? 32 : 128;
  // 256-row blocks: tiles whose waves split tile_m (GemmPlan::mWaves); 48,
  // 80, 96: blocks that are not powers of two; on sm_90a 128 and 256 rows
  // more often (warpgroup MMAs).
  int64_t sortBlock = nvptx ? pick<int64_t>({16, 32, 48, 64, 80, 96, 128, 128, 128, 256, 256})
                            : pick<int64_t>({16, 32, 48, 64, 80, 96, 128, 256});

  SampledLayer d;
  d.text = "moe property {\n";
  d.text += "  model_dim = " + std::to_string(modelDim) + "\n";
  d.text += "  inter_dim = " + std::to_string(interDim) + "\n";
  d.text += "  experts = " + std::to_string(experts) + "\n";
  d.text += "  topk = " + std::to_string(topk) + "\n";
  d.text += std::string("  gate_up = ") + (coin() ? "separated" : "interleaved") + "\n";
  d.text += std::string("  doweight = ") + (coin() ? "stage2" : "stage1") + "\n";
  d.text += "  activation_dtype = " + adtype + "\n";
  d.text += "  weight_dtype = " + wdtype + "\n";
  d.text += "  activation = " +
            pick<std::string>({
                "silu",
                "gelu_tanh",
                "gelu_erf",
                "swiglu(alpha = 1.702, limit = 7.0)",
                "situv2(beta = 4.0, linear_beta = 25.0)",
                "situv2(beta = 2.0)",
                "act(g, u; c = 0.75) = g * sigmoid(g) * (u + c)",
            }) +
            "\n";
  d.text += "  stage1 {\n" + stage(sortBlock, interDim, modelDim, kAlign) +
            "    fused_quant = " + fused + "\n  }\n";
  // Stage 2 on the block, or on M tiles dividing it (a multiple of 16, at
  // least a quarter of it); else any tile, which the rules may refuse.
  std::vector<int64_t> divisors;
  for (int64_t t = sortBlock; t >= 16 && 4 * t >= sortBlock; t -= 16)
    if (sortBlock % t == 0)
      divisors.push_back(t);
  int64_t tileM2 = coin(0.85) ? pick(divisors) : pick<int64_t>({16, 32, 64, 128});
  d.text += "  stage2 {\n" + stage(std::max<int64_t>(tileM2, 16), modelDim, interDim, kAlign);
  d.text += "    reduce = " + pick<std::string>({"atomic", "reduce"}) + "\n";
  // sm_90a: stage 2 sometimes after stage 1's whole grid instead of beside
  // its last round.
  if (nvptx && coin(0.25))
    d.text += "    wait = grid\n";
  d.text += "  }\n}\n";
  // Sometimes enough tokens that an expert's rows reach a split tile's
  // second M-wave.
  d.tokens = coin(0.1) ? range(41, 300) : range(1, 40);
  d.cuNum = nvptx ? pick<int64_t>({1, 2, 132}) : pick<int64_t>({1, 2, 256});
  return d;
}

} // namespace moegen
