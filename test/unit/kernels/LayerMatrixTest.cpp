//===- LayerMatrixTest.cpp - The kernels on the emulator vs the reference -===//
//
// Every kernel of a layer compiled for gfx950, run on the emulator with its
// race/bounds checks on, and compared decode-first with the reference built
// from the same spec. Small shapes; each axis of the schedule takes every
// value somewhere, and the pairs that interact (k_wave x tile_m, dtype x
// layout, fused quant x dtype) meet.
//
//===----------------------------------------------------------------------===//

#include "compiler/spec/DslParser.h"
#include "runtime/backend/EmuBackend.h"
#include "runtime/check/LayerCheck.h"
#include "runtime/jit/Compiler.h"

#include <gtest/gtest.h>

using namespace moegen;

namespace {

struct Case {
  const char *name;
  const char *dtype;      // activation_dtype
  const char *fusedQuant; // stage1.fused_quant
  std::vector<std::string> sets;
  int64_t tokens;
  int64_t cuNum = 256; // 1 or 2: persistent grids loop over M tiles
};

// gtest prints the case by name.
void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

std::string baseSpec(const Case &c) {
  return std::string("moe t {\n  model_dim = 256\n  inter_dim = 128\n  experts = 8\n  topk = 2\n"
                     "  activation_dtype = ") +
         c.dtype +
         "\n  activation = silu\n  stage1 { tile = 32x32x256; fused_quant = " + c.fusedQuant +
         " }\n  stage2 { tile = 32x64x128 }\n}\n";
}

class LayerMatrix : public ::testing::TestWithParam<Case> {};

TEST_P(LayerMatrix, MatchesReference) {
  const Case &c = GetParam();
  auto spec = parseMoeSpec(baseSpec(c), "matrix.moe");
  ASSERT_TRUE(static_cast<bool>(spec)) << llvm::toString(spec.takeError());
  for (const std::string &s : c.sets)
    ASSERT_FALSE(static_cast<bool>(applySpecOverride(*spec, s))) << s;
  std::unique_ptr<runtime::Backend> backend = runtime::createEmuBackend();
  LayerCheckOptions options;
  options.tokens = c.tokens;
  options.seed = 7;
  options.cuNum = c.cuNum;
  runtime::CompilerOptions jit;
  jit.diskCache = false; // memory only
  options.kernels = std::make_shared<runtime::Compiler>(jit);
  auto result = runLayerCheck(*spec, *backend, options);
  ASSERT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
  EXPECT_TRUE(result->passed()) << printMoeSpec(*spec) << result->table();
  for (const StageCheck &s : result->stages)
    EXPECT_EQ(s.result.nonFinite, 0) << s.stage;
}

std::vector<Case> cases() {
  return {
      // dtype x gate/up layout, with each dtype's fused quantization.
      {"a4w4_separated", "mxfp4", "fp4", {}, 13},
      {"a4w4_interleaved", "mxfp4", "fp4", {"gate_up=interleaved"}, 13},
      {"a8w4_separated", "mxfp8", "fp8", {}, 13},
      {"a8w4_interleaved", "mxfp8", "fp8", {"gate_up=interleaved"}, 13},
      {"a16w4_separated", "bf16", "none", {}, 13},
      {"a16w4_interleaved", "bf16", "none", {"gate_up=interleaved"}, 13},
      // MX activations without fused quantization: the inter-stage kernel.
      {"a4w4_unfused", "mxfp4", "none", {}, 13},
      {"a8w4_unfused_interleaved", "mxfp8", "none", {"gate_up=interleaved"}, 13},
      {"a4w4_unfused_kb2_reduce",
       "mxfp4",
       "none",
       {"stage1.tile=32x32x128", "stage1.k_batch=2", "stage2.reduce=reduce"},
       13},
      // Activations.
      {"a4w4_situv2", "mxfp4", "fp4", {"activation=situv2(beta = 4.0, linear_beta = 25.0)"}, 9},
      {"a16w4_situv2", "bf16", "none", {"activation=situv2(beta = 4.0, linear_beta = 25.0)"}, 9},
      {"a8w4_swiglu", "mxfp8", "fp8", {"activation=swiglu"}, 9},
      {"a16w4_swiglu", "bf16", "none", {"activation=swiglu"}, 9},
      // tile_m (M not a multiple of tile_m; experts with no tokens at 1 token).
      {"a4w4_tm16", "mxfp4", "fp4", {"stage1.tile=16x32x256", "stage2.tile=16x64x128"}, 5},
      {"a4w4_tm64", "mxfp4", "fp4", {"stage1.tile=64x64x128", "stage2.tile=64x128x128"}, 37},
      {"a16w4_tm128", "bf16", "none", {"stage1.tile=128x32x256", "stage2.tile=128x64x128"}, 70},
      // Stage 2 cutting the sorting block (stage1 tile_m) into smaller M
      // tiles, as aiter's _sbm kernels do: each tile finds its block's expert.
      {"a4w4_sbm32_tm16", "mxfp4", "fp4", {"stage2.tile=16x64x128"}, 13},
      {"a8w4_sbm128_tm32_reduce",
       "mxfp8",
       "fp8",
       {"stage1.tile=128x32x256", "stage2.tile=32x64x128", "stage2.reduce=reduce"},
       37},
      // The 32x32x64 scaled MFMA (waves with 128x32 outputs or more), both MX dtypes.
      {"a4w4_tm128_mfma32",
       "mxfp4",
       "fp4",
       {"stage1.tile=128x32x256", "stage2.tile=128x64x128"},
       70},
      {"a8w4_tm128_mfma32_interleaved",
       "mxfp8",
       "fp8",
       {"gate_up=interleaved", "stage1.tile=128x64x128", "stage1.k_wave=2",
        "stage2.tile=128x64x128", "stage2.reduce=reduce"},
       70},
      // Waves splitting tile_m (accumulators over the register budget): each
      // M-wave's rows hold tokens (an expert has all of them at experts = topk).
      {"a8w4_msplit_tm128_fp8",
       "mxfp8",
       "fp8",
       {"inter_dim=256", "experts=2", "stage1.tile=128x256x256"},
       100},
      {"a16w4_msplit_tm128_unfused",
       "bf16",
       "none",
       {"inter_dim=256", "experts=2", "stage1.tile=128x256x64"},
       100},
      {"a4w4_msplit_kw2_unfused",
       "mxfp4",
       "none",
       {"inter_dim=384", "experts=2", "stage1.tile=128x48x128", "stage1.k_wave=2"},
       100},
      {"a4w4_msplit_tm256_atomic",
       "mxfp4",
       "fp4",
       {"experts=2", "stage1.tile=256x64x256", "stage2.tile=256x256x128"},
       200},
      {"a4w4_msplit_tm256_reduce",
       "mxfp4",
       "fp4",
       {"experts=2", "stage1.tile=256x64x256", "stage2.tile=256x256x128", "stage2.reduce=reduce"},
       200},
      {"a4w4_one_token", "mxfp4", "fp4", {}, 1},
      // k_wave x tile_m.
      {"a4w4_kw2", "mxfp4", "fp4", {"stage1.tile=32x32x128", "stage1.k_wave=2"}, 11},
      {"a16w4_kw2_tm64",
       "bf16",
       "none",
       {"stage1.tile=64x32x128", "stage1.k_wave=2", "stage2.tile=64x64x128"},
       21},
      {"a16w4_kw4", "bf16", "none", {"stage1.tile=32x32x64", "stage1.k_wave=4"}, 11},
      {"a4w4_kw4",
       "mxfp4",
       "fp4",
       {"model_dim=512", "stage1.tile=32x32x128", "stage1.k_wave=4"},
       7},
      // k_batch: atomic and deterministic split-K, with each fused quantization.
      {"a4w4_kb2", "mxfp4", "fp4", {"stage1.tile=32x32x128", "stage1.k_batch=2"}, 13},
      {"a4w4_kb4_det",
       "mxfp4",
       "fp4",
       {"model_dim=512", "stage1.tile=32x32x128", "stage1.k_batch=4",
        "stage1.k_batch_mode=deterministic"},
       13},
      {"a8w4_kb2_det",
       "mxfp8",
       "fp8",
       {"stage1.tile=32x32x128", "stage1.k_batch=2", "stage1.k_batch_mode=deterministic"},
       13},
      {"a4w4_kb7_uneven",
       "mxfp4",
       "fp4",
       {"model_dim=896", "stage1.tile=32x32x128", "stage1.k_batch=7"},
       11},
      {"a16w4_kb8",
       "bf16",
       "none",
       {"stage1.tile=32x32x32", "stage1.k_batch=8",
        "activation=situv2(beta = 4.0, linear_beta = 25.0)"},
       13},
      {"a16w4_kb2_kw2_doweight1",
       "bf16",
       "none",
       {"stage1.tile=32x32x64", "stage1.k_batch=2", "stage1.k_wave=2", "doweight=stage1"},
       13},
      {"a4w4_stage2_kb2", "mxfp4", "fp4", {"inter_dim=256", "stage2.k_batch=2"}, 13},
      // Stage 2: reduce mode, doweight in stage 1.
      {"a4w4_reduce", "mxfp4", "fp4", {"stage2.reduce=reduce"}, 13},
      {"a16w4_reduce_doweight1", "bf16", "none", {"stage2.reduce=reduce", "doweight=stage1"}, 13},
      {"a8w4_doweight1", "mxfp8", "fp8", {"doweight=stage1"}, 13},
      // xcd_swizzle: the workgroups regrouped (any group count, dividing the
      // grid or not; persistent grids looping over M tiles; split K).
      {"a4w4_xcd8", "mxfp4", "fp4", {"stage1.xcd_swizzle=8", "stage2.xcd_swizzle=8"}, 37},
      {"a4w4_xcd4_kb2_cu1",
       "mxfp4",
       "fp4",
       {"stage1.tile=32x32x128", "stage1.k_batch=2", "stage1.xcd_swizzle=4",
        "stage2.xcd_swizzle=3"},
       37,
       1},
      {"a16w4_xcd_tm64_reduce_cu2",
       "bf16",
       "none",
       {"stage1.tile=64x32x128", "stage1.xcd_swizzle=8", "stage2.tile=64x64x128",
        "stage2.xcd_swizzle=5", "stage2.reduce=reduce"},
       70,
       2},
  };
}

INSTANTIATE_TEST_SUITE_P(Gfx950, LayerMatrix, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           return std::string(info.param.name);
                         });

} // namespace
