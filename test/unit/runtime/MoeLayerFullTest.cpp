//===- MoeLayerFullTest.cpp - A whole layer through MoeLayer vs reference -===//
//
// MoeLayer::run on the emulator: every family (sort, input and inter-stage
// quantization, stage 1, the split-K finish, stage 2, the slot reduction)
// launched with the layer's own grids, bindings and workspace, and the
// output compared decode-first with the reference layer.
//
//===----------------------------------------------------------------------===//

#include "runtime/api/MoeLayer.h"

#include "compiler/spec/DslParser.h"
#include "runtime/api/Backends.h"
#include "runtime/check/LayerCheck.h"
#include "runtime/numerics/InputGen.h"
#include "runtime/numerics/Preshuffle.h"
#include "runtime/numerics/Reference.h"

#include <gtest/gtest.h>

using namespace moegen;
using namespace moegen::runtime;

namespace {

struct LayerCase {
  const char *name;
  const char *dtype, *fusedQuant;
  std::vector<std::string> sets;
};

void PrintTo(const LayerCase &c, std::ostream *os) { *os << c.name; }

/// Weight scales in the weight's row order, e8m0_shuffle layout.
std::vector<uint8_t> weightScales(const num::HostTensor &w, int64_t experts, int64_t rows,
                                  bool interleave) {
  std::vector<uint8_t> scales = w.scales;
  if (interleave)
    scales = llvm::cantFail(num::interleaveGateUp(scales, experts, rows, w.scaleCols()));
  return num::e8m0Shuffle(scales, experts * rows, w.scaleCols());
}

class MoeLayerFull : public ::testing::TestWithParam<LayerCase> {};

TEST_P(MoeLayerFull, MatchesTheReferenceLayer) {
  const LayerCase &c = GetParam();
  std::string text =
      std::string("moe t {\n  model_dim = 256\n  inter_dim = 128\n  experts = 8\n"
                  "  topk = 2\n  activation_dtype = ") +
      c.dtype +
      "\n  activation = silu\n  stage1 { tile = 32x32x256; fused_quant = " + c.fusedQuant +
      " }\n  stage2 { tile = 32x64x128 }\n}\n";
  auto spec = parseMoeSpec(text, "layer.moe");
  ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  for (const std::string &s : c.sets)
    ASSERT_FALSE(bool(applySpecOverride(*spec, s))) << s;
  const int64_t T = 13, E = spec->problem.experts, K = spec->problem.modelDim,
                I = spec->problem.interDim;
  const bool interleave = spec->problem.gateUp == GateUpLayout::Interleaved;

  auto backend = createBackend("emu");
  ASSERT_TRUE(bool(backend));
  Backend &b = **backend;
  CompilerOptions o;
  o.diskCache = false;
  auto layer = MoeLayer::create(std::make_shared<Compiler>(o), b, *spec);
  ASSERT_TRUE(bool(layer)) << llvm::toString(layer.takeError());

  num::GenOptions gen;
  gen.seed = 7;
  auto in = num::generateInputs(*spec, T, gen);
  ASSERT_TRUE(bool(in)) << llvm::toString(in.takeError());
  auto ref = num::referenceLayer(*spec, in->a1, in->topkIds, in->topkWeights, in->w1, in->w2);
  ASSERT_TRUE(bool(ref)) << llvm::toString(ref.takeError());

  auto upload = [&](const void *data, size_t bytes) {
    DevicePtr p = llvm::cantFail(b.allocate(bytes));
    llvm::cantFail(b.copyToDevice(p, data, bytes));
    return p;
  };
  auto bytesOf = [](const auto &v) { return v.size() * sizeof(v[0]); };
  auto w1 = llvm::cantFail(num::shuffleWeight16x16(in->w1.data, E, 2 * I,
                                                   num::packedBytes(in->w1.format, K), interleave));
  auto w2 = llvm::cantFail(
      num::shuffleWeight16x16(in->w2.data, E, K, num::packedBytes(in->w2.format, I)));
  auto w1Scale = weightScales(in->w1, E, 2 * I, interleave);
  auto w2Scale = weightScales(in->w2, E, K, false);
  auto hidden = num::makeBf16({T, K}, in->hidden).data;

  LayerArgs args;
  args.tokens = T;
  args.topkIds = upload(in->topkIds.data(), bytesOf(in->topkIds));
  args.topkWeights = upload(in->topkWeights.data(), bytesOf(in->topkWeights));
  args.hidden = upload(hidden.data(), hidden.size());
  args.w1 = upload(w1.data(), w1.size());
  args.w1Scale = upload(w1Scale.data(), w1Scale.size());
  args.w2 = upload(w2.data(), w2.size());
  args.w2Scale = upload(w2Scale.data(), w2Scale.size());
  args.output = llvm::cantFail(b.allocate(T * K * 2));
  auto ws = (*layer)->workspaceLayout(T);
  ASSERT_TRUE(bool(ws));
  args.workspace = llvm::cantFail(b.allocate(ws->total));
  args.workspaceBytes = ws->total;
  // Garbage where the layer must clear: it may not rely on fresh memory.
  llvm::cantFail(b.memset(args.output, 0x5A, T * K * 2));
  llvm::cantFail(b.memset(args.workspace, 0x5A, ws->total));

  for (int run = 0; run < 2; ++run) { // the second run reuses dirty buffers
    ASSERT_FALSE(bool((*layer)->run(args)));
    ASSERT_FALSE(bool(b.synchronize()));
    num::HostTensor out;
    out.format = num::ElemFormat::BF16;
    out.shape = {T, K};
    out.data.resize(T * K * 2);
    llvm::cantFail(b.copyToHost(out.data.data(), args.output, out.data.size()));
    bool fused = spec->stage1.fusedQuant != FusedQuant::None;
    num::CompareOptions tol = stageTolerance(spec->formats.activation, fused);
    tol.maxCosineDiff = fused ? (spec->formats.activation == DType::MXFP4 ? 1e-2 : 1e-3) : 1e-4;
    tol.rtol = fused ? 0.25 : 5e-2;
    tol.atol = 1e-2;
    tol.maxMismatch = 5e-2;
    auto cmp = num::compareTensors(ref->stage2.out, out, {}, tol);
    ASSERT_TRUE(bool(cmp)) << llvm::toString(cmp.takeError());
    EXPECT_TRUE(cmp->passed) << "run " << run << ": cosine diff " << cmp->cosineDiff
                             << ", mismatches " << cmp->mismatches << " of " << cmp->compared;
    EXPECT_EQ(cmp->nonFinite, 0);
  }
  auto d = (*layer)->dispatch(T);
  ASSERT_TRUE(bool(d));
  EXPECT_TRUE(d->notLaunched.empty());
  EXPECT_EQ(d->source, ScheduleSource::SpecDefault); // no table: the spec's schedules run
  EXPECT_EQ(printMoeSpec(d->spec), printMoeSpec(*spec));
}

INSTANTIATE_TEST_SUITE_P(
    Layers, MoeLayerFull,
    ::testing::Values(
        // quant_input -> stage1 (fused fp4) -> stage2 (atomic)
        LayerCase{"a4w4_fused", "mxfp4", "fp4", {}},
        // bf16 A: no input quantization
        LayerCase{"a16w4_interleaved", "bf16", "none", {"gate_up=interleaved"}},
        // split-K finish, inter-stage quantization, per-slot rows + reduce
        LayerCase{"a4w4_kb2_reduce",
                  "mxfp4",
                  "none",
                  {"stage1.tile=32x32x128", "stage1.k_batch=2", "stage2.reduce=reduce"}}),
    [](const auto &info) { return std::string(info.param.name); });

} // namespace
