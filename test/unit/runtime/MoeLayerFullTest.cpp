//===- MoeLayerFullTest.cpp - A whole layer through MoeLayer vs reference -===//
//
// MoeLayer::run on the emulator: every family (sort, input and inter-stage
// quantization, stage 1, the split-K finish, stage 2, the slot reduction)
// launched with the layer's own grids, bindings and workspace, and the
// output compared decode-first with the reference layer.
//
//===----------------------------------------------------------------------===//

#include "runtime/api/MoeLayer.h"
#include "runtime/jit/Compiler.h"

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
  const int64_t T = 13, K = spec->problem.modelDim;

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
  auto packed = num::packWeights(*spec, in->w1, in->w2);
  ASSERT_TRUE(bool(packed)) << llvm::toString(packed.takeError());
  auto hidden = num::makeBf16({T, K}, in->hidden).data;

  LayerArgs args;
  args.tokens = T;
  args.topkIds = upload(in->topkIds.data(), bytesOf(in->topkIds));
  args.topkWeights = upload(in->topkWeights.data(), bytesOf(in->topkWeights));
  args.hidden = upload(hidden.data(), hidden.size());
  args.w1 = upload(packed->w1.data(), packed->w1.size());
  args.w1Scale = upload(packed->w1Scale.data(), packed->w1Scale.size());
  args.w2 = upload(packed->w2.data(), packed->w2.size());
  args.w2Scale = upload(packed->w2Scale.data(), packed->w2Scale.size());
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
    num::CompareOptions tol = layerTolerance(*spec);
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
