//===- QuantKernelTest.cpp - The activation quantization kernel ----------===//

#include "KernelTestUtil.h"

#include "templates/quant/QuantKernel.h"

#include "runtime/numerics/Formats.h"
#include "runtime/numerics/MxQuant.h"
#include "runtime/numerics/Preshuffle.h"
#include "runtime/numerics/Sorting.h"
#include "runtime/numerics/Tensor.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <random>

using namespace moegen;
using namespace moegen::test;

namespace {

TargetInfo gfx950() { return TargetInfo::defaultTarget(); }

QuantPlan makePlan(DType format, int64_t cols, QuantScaleOrder order,
                   QuantSourceRows source = QuantSourceRows::Slots, int64_t topk = 1,
                   int64_t experts = 0, int64_t blockM = 0) {
  QuantPlan p;
  p.format = format;
  p.cols = cols;
  p.order = order;
  p.source = source;
  p.topk = topk;
  p.experts = experts;
  p.blockM = blockM;
  return p;
}

llvm::Expected<BuiltKernel> compileQuant(const QuantPlan &plan) {
  std::string symbol = quantKernelSymbol(plan);
  return compileKernel(symbol, [&](mlir::ImplicitLocOpBuilder &b, mlir::gpu::GPUModuleOp m) {
    buildQuantKernel(b, m, symbol, plan, TargetInfo::defaultTarget());
  });
}

MoeSpec a4w4Spec() {
  MoeSpec s;
  s.problem = {/*modelDim=*/3584, /*interDim=*/384, /*experts=*/896, /*topk=*/16};
  s.formats = {DType::MXFP4, DType::MXFP4, DType::BF16};
  s.stage1.tileM = 32;
  return s;
}

// ---- Plan and rules --------------------------------------------------------

TEST(QuantPlan, LayerPlansFollowTheFormats) {
  ScheduleIssues issues;
  MoeSpec spec = a4w4Spec();
  auto input = planInputQuant(spec, gfx950(), issues);
  ASSERT_TRUE(input);
  EXPECT_EQ(quantKernelSymbol(*input), "moe_quant_mxfp4_c3584");
  EXPECT_EQ(input->order, QuantScaleOrder::Rows);
  // Stage 1 quantizes its own output: no separate stage-2 A quantization.
  spec.stage1.fusedQuant = FusedQuant::FP4;
  EXPECT_FALSE(planInterQuant(spec, gfx950(), issues));
  spec.stage1.fusedQuant = FusedQuant::None;
  auto inter = planInterQuant(spec, gfx950(), issues);
  ASSERT_TRUE(inter);
  EXPECT_EQ(quantKernelSymbol(*inter), "moe_quant_mxfp4_c384_sorted_k16");
  EXPECT_EQ(inter->sourceRows(5), 80);
  EXPECT_EQ(inter->scaleRows(5), 5 * 16 + 896 * 32 - 16);
  EXPECT_TRUE(issues.empty());

  spec.formats.activation = DType::MXFP8;
  EXPECT_EQ(quantKernelSymbol(*planInterQuant(spec, gfx950(), issues)),
            "moe_quant_mxfp8_c384_sorted_k16");
  spec.formats.activation = DType::BF16;
  EXPECT_FALSE(planInputQuant(spec, gfx950(), issues));
  EXPECT_FALSE(planInterQuant(spec, gfx950(), issues));
}

TEST(QuantPlan, Sm90aInterQuantWaitsForStage1ABlockAtATime) {
  // Between the stages on sm_90a (interQuantCountsDown): a persistent grid
  // over the sorted blocks of 32 rows (two workgroups an SM, or one a block
  // where there are fewer), the counters before tokens; its symbol names the
  // block. Not with stage 2 waiting for the grid, nor split-K's finish.
  ScheduleIssues issues;
  TargetInfo sm90a = *TargetInfo::forChip(TargetInfo::kHopperChip);
  MoeSpec spec = a4w4Spec();
  auto inter = planInterQuant(spec, sm90a, issues);
  ASSERT_TRUE(inter);
  EXPECT_TRUE(inter->stageReady);
  EXPECT_TRUE(inter->decoded);
  EXPECT_EQ(quantKernelSymbol(*inter), "moe_quant_mxfp4_c384_sorted_k16_bf16_ready_bm32");
  const int64_t blocks = (5 * 16 + 896 * 32 - 16 + 31) / 32;
  EXPECT_EQ(inter->grid(5), (std::array<int64_t, 3>{blocks, 1, 1}));
  EXPECT_EQ(inter->grid(5, 132), (std::array<int64_t, 3>{264, 1, 1}));
  EXPECT_EQ(inter->grid(5, 1000)[0], blocks);
  KernelSignature sig = quantKernelSignature(quantKernelSymbol(*inter), *inter);
  ASSERT_GE(sig.args.size(), 2u);
  EXPECT_EQ(sig.args[sig.args.size() - 2].name, "stage_ready");
  EXPECT_EQ(sig.args.back().name, "tokens");
  EXPECT_TRUE(issues.empty());
  spec.stage2.wait = Stage2Wait::Grid;
  EXPECT_FALSE(planInterQuant(spec, sm90a, issues)->stageReady);
  spec.stage2.wait = Stage2Wait::Rows;
  spec.stage1.kBatch = 2;
  EXPECT_FALSE(planInterQuant(spec, sm90a, issues)->stageReady);
  EXPECT_FALSE(planInterQuant(a4w4Spec(), gfx950(), issues)->stageReady);
}

TEST(QuantPlan, GridCoversEveryBlockOfEveryScaleRow) {
  QuantPlan p = makePlan(DType::MXFP4, 384, QuantScaleOrder::Rows);
  // 12 blocks per row: 100 rows = 1200 items = 5 workgroups of 256.
  EXPECT_EQ(p.grid(100), (std::array<int64_t, 3>{5, 1, 1}));
  EXPECT_EQ(p.grid(0)[0], 1);
  EXPECT_EQ(p.scaleCols(), 16);
  EXPECT_EQ(p.scaleBytes(100), 256 * 16);
  QuantPlan s =
      makePlan(DType::MXFP8, 64, QuantScaleOrder::Sorted, QuantSourceRows::Tokens, 2, 4, 16);
  EXPECT_EQ(s.sourceRows(10), 10);
  EXPECT_EQ(s.scaleRows(10), 20 + 64 - 2);
  EXPECT_EQ(s.grid(10)[0], (82 * 2 + 255) / 256);
  EXPECT_EQ(quantKernelSymbol(s), "moe_quant_mxfp8_c64_sorted_tok_k2");
}

TEST(QuantPlan, RulesNameTheParameter) {
  ScheduleIssues issues;
  checkQuantPlan(makePlan(DType::MXFP4, 100, QuantScaleOrder::Rows), KernelFamily::Stage2, gfx950(),
                 issues);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].family, KernelFamily::Stage2);
  EXPECT_NE(issues[0].message.find("100"), std::string::npos);
  issues.clear();
  checkQuantPlan(makePlan(DType::BF16, 64, QuantScaleOrder::Sorted, QuantSourceRows::Slots, 256),
                 KernelFamily::Stage2, gfx950(), issues);
  ASSERT_EQ(issues.size(), 2u);
  EXPECT_EQ(issues[0].parameter, "formats");
  EXPECT_EQ(issues[1].parameter, "topk");
  issues.clear();
  QuantPlan odd = makePlan(DType::MXFP8, 64, QuantScaleOrder::Rows);
  odd.threads = 96;
  checkQuantPlan(odd, KernelFamily::Stage1, gfx950(), issues);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].parameter, "threads");
}

// ---- gfx950 code ---------------------------------------------------------

struct IsaCase {
  QuantPlan plan;
  const char *convert;
  int stores16; // 16-byte data stores per block
};

TEST(QuantKernel, CompilesForGfx950WithScaledConversions) {
  std::vector<IsaCase> cases = {
      {makePlan(DType::MXFP4, 384, QuantScaleOrder::Rows), "v_cvt_scalef32_pk_fp4_f32", 1},
      {makePlan(DType::MXFP4, 384, QuantScaleOrder::Sorted, QuantSourceRows::Slots, 16, 896, 32),
       "v_cvt_scalef32_pk_fp4_f32", 1},
      {makePlan(DType::MXFP8, 3584, QuantScaleOrder::Rows), "v_cvt_scalef32_pk_fp8_f32", 2},
      {makePlan(DType::MXFP8, 256, QuantScaleOrder::Sorted, QuantSourceRows::Tokens, 8, 64, 16),
       "v_cvt_scalef32_pk_fp8_f32", 2},
  };
  for (const IsaCase &c : cases) {
    SCOPED_TRACE(quantKernelSymbol(c.plan));
    auto k = compileQuant(c.plan);
    ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
    EXPECT_EQ(k->info.target, "amdgcn-amd-amdhsa--gfx950");
    const KernelResources &r = k->resources;
    EXPECT_EQ(r.scratchBytes, 0);
    EXPECT_EQ(r.vgprSpills + r.sgprSpills, 0);
    EXPECT_EQ(r.ldsBytes, 0);
    EXPECT_EQ(r.maxFlatWorkgroupSize, 256);
    EXPECT_EQ(r.wavefrontSize, 64);
    // 3 pointers + rows, or 5 pointers + tokens.
    EXPECT_EQ(r.kernargBytes, c.plan.order == QuantScaleOrder::Rows ? 28 : 44);
    const std::string &isa = k->code.isa;
    // 16 pairs per 32-element block, one scaled conversion each.
    EXPECT_EQ(countInstructions(isa, c.convert), 16);
    EXPECT_EQ(countInstructions(isa, "global_load_dwordx4"), 4);
    EXPECT_EQ(countInstructions(isa, "global_store_dwordx4"), c.stores16);
    EXPECT_GE(countInstructions(isa, "global_store_byte"), 1);
    EXPECT_EQ(isa.find("scratch_"), std::string::npos);
  }
}

// ---- Numerics on the emulator ----------------------------------------------

float bf16Value(uint16_t h) { return num::decodeBf16(h); }

/// bf16 rows with a different magnitude per block, plus blocks on the rule's
/// edges: all zero, amax exactly max_elem * 2^k and just above, subnormals,
/// and one with inf or NaN.
std::vector<uint16_t> makeRows(int64_t rows, int64_t cols, unsigned seed, float maxElem) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> expo(-30, 30);
  std::vector<uint16_t> x(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t blk = 0; blk < cols / 32; ++blk) {
      uint16_t *p = &x[r * cols + blk * 32];
      float mag = std::ldexp(1.0f, expo(rng));
      for (int i = 0; i < 32; ++i)
        p[i] = num::encodeBf16(unit(rng) * mag);
      switch ((r * 7 + blk) % 11) {
      case 0:
        std::fill(p, p + 32, 0);
        break;
      case 1:
        p[3] = num::encodeBf16(-maxElem * 8.0f);
        break; // m == max exactly
      case 2:
        p[5] = num::encodeBf16(maxElem * 8.0f) + 1;
        break; // next bf16 above
      case 3:
        for (int i = 0; i < 32; ++i) // subnormal f32 range
          p[i] = num::encodeBf16(unit(rng) * 1e-39f);
        break;
      case 4:
        p[7] = (r & 1) ? 0xFF80 : 0x7FC0; // -inf or NaN: scale 0xFF
        break;
      case 5:
        p[0] = 0x8000;
        break; // -0
      default:
        break;
      }
    }
  return x;
}

num::ElemFormat elemOf(DType t) {
  return t == DType::MXFP4 ? num::ElemFormat::MXFP4 : num::ElemFormat::MXFP8;
}

/// Decoded value of element `i` of row `r` of a quantized [rows, cols]
/// buffer with the given (logical) scale byte.
float decodeElement(DType fmt, llvm::ArrayRef<uint8_t> data, int64_t cols, int64_t r, int64_t i,
                    uint8_t scale) {
  float v = fmt == DType::MXFP4 ? num::decodeF4E2M1(num::fp4CodeAt(data.slice(r * cols / 2), i))
                                : num::decodeF8E4M3(data[r * cols + i]);
  return scale == num::kE8M0NaN ? NAN : v * num::decodeE8M0(scale);
}

/// Expects row `kr` of the kernel's data (scale `ks`) to decode exactly like
/// row `rr` of the reference (scale `rs`), block `blk`.
void expectBlockEqual(DType fmt, int64_t cols, llvm::ArrayRef<uint8_t> kernel, int64_t kr,
                      uint8_t ks, const num::HostTensor &ref, int64_t rr, int64_t blk) {
  uint8_t rs = ref.scales[rr * (cols / 32) + blk];
  ASSERT_EQ(ks, rs) << "scale of row " << rr << " block " << blk;
  for (int64_t i = blk * 32; i < blk * 32 + 32; ++i) {
    float got = decodeElement(fmt, kernel, cols, kr, i, ks);
    float want = decodeElement(fmt, ref.data, cols, rr, i, rs);
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(got)) << "row " << rr << " col " << i;
    else
      EXPECT_EQ(got, want) << "row " << rr << " col " << i;
  }
}

num::HostTensor reference(const std::vector<uint16_t> &x, int64_t rows, int64_t cols, DType fmt) {
  std::vector<float> f(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    f[i] = bf16Value(x[i]);
  auto t = num::quantizeMx(f, {rows, cols}, elemOf(fmt), num::ScaleRounding::RoundUp);
  EXPECT_TRUE(bool(t));
  return std::move(*t);
}

class QuantRowsOnEmulator : public testing::TestWithParam<DType> {};

TEST_P(QuantRowsOnEmulator, MatchesMxQuantRoundUp) {
  const DType fmt = GetParam();
  const int64_t rows = 37, cols = 96; // 3 blocks: the shuffle pads columns to 8
  QuantPlan plan = makePlan(fmt, cols, QuantScaleOrder::Rows);
  auto k = compileQuant(plan);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  auto emu = loadOnEmulator(*k);
  ASSERT_TRUE(emu);
  std::vector<uint16_t> x = makeRows(rows, cols, 7, fmt == DType::MXFP4 ? 6.0f : 448.0f);
  DeviceBuffer<uint16_t> dx(*emu, x);
  // One spare row of data: the kernel must stop at `rows`.
  DeviceBuffer<uint8_t> dq(*emu, std::vector<uint8_t>((rows + 1) * plan.rowBytes(), 0x5A));
  DeviceBuffer<uint8_t> ds(*emu, std::vector<uint8_t>(plan.scaleBytes(rows), 0));
  llvm::Error err = Launch().ptr(dx.addr).ptr(dq.addr).ptr(ds.addr).i32(rows).run(
      *emu, quantKernelSymbol(plan), plan.grid(rows), plan.threads);
  ASSERT_FALSE(bool(err)) << llvm::toString(std::move(err));

  num::HostTensor ref = reference(x, rows, cols, fmt);
  auto scales = num::e8m0Unshuffle(ds.host, rows, cols / 32);
  ASSERT_TRUE(bool(scales));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t blk = 0; blk < cols / 32; ++blk)
      expectBlockEqual(fmt, cols, dq.host, r, (*scales)[r * (cols / 32) + blk], ref, r, blk);
  for (int64_t i = rows * plan.rowBytes(); i < (rows + 1) * plan.rowBytes(); ++i)
    ASSERT_EQ(dq.host[i], 0x5A) << "byte " << i << " past the last row was written";
  // The same bytes as the host shuffle of the reference scales.
  EXPECT_EQ(ds.host, num::e8m0Shuffle(ref.scales, rows, cols / 32));
}

INSTANTIATE_TEST_SUITE_P(Formats, QuantRowsOnEmulator, testing::Values(DType::MXFP4, DType::MXFP8),
                         [](const auto &info) { return toString(info.param).str(); });

struct SortedCase {
  DType fmt;
  QuantSourceRows source;
};

class QuantSortedOnEmulator : public testing::TestWithParam<SortedCase> {};

TEST_P(QuantSortedOnEmulator, ScalesBySortedPositionDataBySourceRow) {
  const SortedCase c = GetParam();
  const int64_t tokens = 9, topk = 3, experts = 5, blockM = 16, cols = 64;
  QuantPlan plan = makePlan(c.fmt, cols, QuantScaleOrder::Sorted, c.source, topk, experts, blockM);
  auto k = compileQuant(plan);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  auto emu = loadOnEmulator(*k);
  ASSERT_TRUE(emu);

  // Distinct experts per token; expert 4 receives nothing.
  std::vector<int32_t> ids(tokens * topk);
  std::vector<float> weights(tokens * topk, 1.0f);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t s = 0; s < topk; ++s)
      ids[t * topk + s] = int32_t((t + s * 2) % 4);
  auto sorting = num::sortMoe(ids, weights, tokens, topk, experts, blockM);
  ASSERT_TRUE(bool(sorting)) << llvm::toString(sorting.takeError());
  const int64_t sortedRows = int64_t(sorting->sortedTokenIds.size());
  ASSERT_EQ(sortedRows, plan.scaleRows(tokens));
  const int64_t validRows = sorting->numValidIds[0];

  const int64_t srcRows = plan.sourceRows(tokens);
  std::vector<uint16_t> x = makeRows(srcRows, cols, 11, c.fmt == DType::MXFP4 ? 6.0f : 448.0f);
  DeviceBuffer<uint16_t> dx(*emu, x);
  DeviceBuffer<uint8_t> dq(*emu, std::vector<uint8_t>(srcRows * plan.rowBytes(), 0x5A));
  DeviceBuffer<uint8_t> ds(*emu, std::vector<uint8_t>(plan.scaleBytes(tokens), 0xA5));
  DeviceBuffer<int32_t> dids(*emu, sorting->sortedTokenIds);
  DeviceBuffer<int32_t> dvalid(*emu, {sorting->numValidIds[0], sorting->numValidIds[1]});
  llvm::Error err = Launch()
                        .ptr(dx.addr)
                        .ptr(dq.addr)
                        .ptr(ds.addr)
                        .ptr(dids.addr)
                        .ptr(dvalid.addr)
                        .i32(tokens)
                        .run(*emu, quantKernelSymbol(plan), plan.grid(tokens), plan.threads);
  ASSERT_FALSE(bool(err)) << llvm::toString(std::move(err));

  num::HostTensor ref = reference(x, srcRows, cols, c.fmt);
  const int64_t nb = cols / 32;
  for (int64_t pos = 0; pos < sortedRows; ++pos)
    for (int64_t blk = 0; blk < nb; ++blk) {
      uint8_t got = ds.host[num::e8m0ShuffleOffset(pos, blk, plan.scaleCols())];
      if (pos >= validRows) {
        ASSERT_EQ(got, 0xA5) << "sorted row " << pos << " past num_valid_ids was written";
        continue;
      }
      if (!sorting->isValidRow(pos)) {
        ASSERT_EQ(got, 0) << "padding row " << pos;
        continue;
      }
      int32_t id = sorting->sortedTokenIds[pos];
      int64_t token = num::MoeSorting::tokenOf(id), slot = num::MoeSorting::slotOf(id);
      int64_t src = c.source == QuantSourceRows::Slots ? token * topk + slot : token;
      expectBlockEqual(c.fmt, cols, dq.host, src, got, ref, src, blk);
    }
}

INSTANTIATE_TEST_SUITE_P(Sources, QuantSortedOnEmulator,
                         testing::Values(SortedCase{DType::MXFP4, QuantSourceRows::Slots},
                                         SortedCase{DType::MXFP8, QuantSourceRows::Slots},
                                         SortedCase{DType::MXFP4, QuantSourceRows::Tokens},
                                         SortedCase{DType::MXFP8, QuantSourceRows::Tokens}),
                         [](const auto &info) {
                           return toString(info.param.fmt).str() +
                                  (info.param.source == QuantSourceRows::Slots ? "_slots"
                                                                               : "_tokens");
                         });

} // namespace
