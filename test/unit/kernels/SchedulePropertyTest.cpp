//===- SchedulePropertyTest.cpp - Accepted schedules compute the right answer -===//
//
// The property behind moe-verify-schedule: every layer the verifier accepts
// compiles and computes the reference's answer. Layers are drawn at random
// (runtime/check/LayerSampler.h), checked by the rules, and each accepted one
// is compiled and run on the emulator through the same check as `moegen run`.
// Rejected draws must be rejected by the compiler too. sm_90a's draws run on
// the emulator's warps of 32 lanes the same way, warpgroup-MMA tiles
// included; `moegen draw` writes such layers for a GPU (docs/sm90a.md).
//
// MOEGEN_PROPERTY_SCHEDULES (default 200) sets how many accepted gfx950
// layers are run in all, MOEGEN_PROPERTY_SM90A_SCHEDULES (default 24) how
// many sm_90a ones, MOEGEN_PROPERTY_SEED (default 1) the seed, and
// MOEGEN_PROPERTY_VERBOSE=1 prints each layer before it runs. A longer session:
//   export MOEGEN_PROPERTY_SCHEDULES=2000 MOEGEN_PROPERTY_SEED=$RANDOM
//   build/bin/KernelMatrixTests --gtest_filter='Shards/ScheduleProperty.*'
//
//===----------------------------------------------------------------------===//

#include "compiler/Compiler.h"
#include "compiler/spec/DslParser.h"
#include "runtime/backend/EmuBackend.h"
#include "runtime/check/LayerCheck.h"
#include "runtime/check/LayerSampler.h"
#include "runtime/jit/Compiler.h"
#include "templates/LayerRules.h"
#include "templates/gemm/GemmPlan.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

using namespace moegen;

namespace {

constexpr int kShards = 8;

int64_t envInt(const char *name, int64_t fallback) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return fallback;
  char *end = nullptr;
  long long x = std::strtoll(v, &end, 10);
  return (end && *end == '\0' && x > 0) ? x : fallback;
}

/// Runs an accepted layer for `chip` on the emulator through the same check
/// as `moegen run`, at the draw's token and CU counts; fails the test unless
/// every stage matches the reference with finite values.
void expectMatchesReference(const MoeSpec &spec, const SampledLayer &d, int64_t seed,
                            llvm::StringRef chip, runtime::Backend &backend) {
  LayerCheckOptions options;
  options.tokens = d.tokens;
  options.seed = static_cast<uint64_t>(seed);
  // Few CUs make the persistent GEMM grids loop over several M tiles.
  options.cuNum = d.cuNum;
  options.target.chip = chip.str();
  runtime::CompilerOptions jit;
  jit.diskCache = false; // memory only
  options.kernels = std::make_shared<runtime::Compiler>(jit);
  auto result = runLayerCheck(spec, backend, options);
  ASSERT_TRUE(static_cast<bool>(result))
      << "accepted, but did not compile or run: " << llvm::toString(result.takeError());
  EXPECT_TRUE(result->passed()) << result->table();
  for (const StageCheck &s : result->stages)
    EXPECT_EQ(s.result.nonFinite, 0) << s.stage;
}

class ScheduleProperty : public ::testing::TestWithParam<int> {};

TEST_P(ScheduleProperty, AcceptedSchedulesMatchTheReference) {
  const int shard = GetParam();
  const int64_t total = envInt("MOEGEN_PROPERTY_SCHEDULES", 200);
  const int64_t want = total / kShards + (shard < total % kShards ? 1 : 0);
  const uint64_t seed = static_cast<uint64_t>(envInt("MOEGEN_PROPERTY_SEED", 1));
  LayerSampler sampler(seed * 1000003 + static_cast<uint64_t>(shard), /*nvptx=*/false);
  TargetInfo target = TargetInfo::defaultTarget();
  std::unique_ptr<runtime::Backend> backend = runtime::createEmuBackend();
  const bool verbose = envInt("MOEGEN_PROPERTY_VERBOSE", 0) > 0;

  int64_t accepted = 0, drawn = 0, mSplit = 0;
  std::map<std::string, int64_t> rejectedBy; // "stage1.k_wave" -> count
  while (accepted < want && drawn < want * 200) {
    SampledLayer d = sampler.next();
    ++drawn;
    auto spec = parseMoeSpec(d.text, "property.moe");
    ASSERT_TRUE(static_cast<bool>(spec)) << llvm::toString(spec.takeError()) << "\n" << d.text;
    ScheduleIssues issues = checkLayer(*spec, target);
    llvm::Error verified = verifyLayer(*spec, CompileOptions());
    if (!issues.empty()) {
      // The rules and the compiler's verifier are the same rules.
      EXPECT_TRUE(static_cast<bool>(verified)) << "rules reject, verifier accepts:\n" << d.text;
      llvm::consumeError(std::move(verified));
      for (const ScheduleIssue &i : issues)
        ++rejectedBy[(toString(i.family) + "." + i.parameter).str()];
      continue;
    }
    ASSERT_FALSE(static_cast<bool>(verified))
        << "rules accept, verifier rejects: " << llvm::toString(std::move(verified)) << "\n"
        << d.text;
    ++accepted;
    for (StageId stage : {StageId::Stage1, StageId::Stage2}) {
      ScheduleIssues none;
      mSplit += planGemm(*spec, stage, target, none).mWaves > 1;
    }
    SCOPED_TRACE("draw " + std::to_string(drawn) + ", " + std::to_string(d.tokens) + " tokens, " +
                 std::to_string(d.cuNum) + " CUs:\n" + printMoeSpec(*spec));
    if (verbose)
      std::fprintf(stderr, "draw %lld, %lld tokens, %lld CUs:\n%s", static_cast<long long>(drawn),
                   static_cast<long long>(d.tokens), static_cast<long long>(d.cuNum),
                   printMoeSpec(*spec).c_str());
    expectMatchesReference(*spec, d, drawn, target.chip, *backend);
    if (HasFailure())
      return; // one counterexample is enough to read
  }
  EXPECT_EQ(accepted, want) << "only " << accepted << " of " << drawn << " draws were accepted";
  std::string summary = "shard " + std::to_string(shard) + ": " + std::to_string(accepted) +
                        " accepted layers run, " + std::to_string(drawn - accepted) +
                        " rejected draws, " + std::to_string(mSplit) +
                        " stages with tile_m split across waves;";
  for (const auto &[rule, n] : rejectedBy)
    summary += " " + rule + "=" + std::to_string(n);
  std::printf("%s\n", summary.c_str());
}

INSTANTIATE_TEST_SUITE_P(Shards, ScheduleProperty, ::testing::Range(0, kShards));

/// Whether a stage of the layer runs on warpgroup MMAs.
bool usesWgmma(const MoeSpec &spec, const TargetInfo &target) {
  for (StageId stage : {StageId::Stage1, StageId::Stage2}) {
    ScheduleIssues none;
    if (planGemm(spec, stage, target, none).sm90.wgmma)
      return true;
  }
  return false;
}

// sm_90a: the rules and the compiler's verifier judge every draw alike, the
// first accepted layers compile to PTX, and accepted layers run on the
// emulator through the same check as `moegen run --target sm_90a` (`moegen
// draw` writes such layers for a GPU; tools/layer-check/check-draws.sh).
TEST(ScheduleProperty, Sm90aRulesAndVerifierAgreeAndAcceptedLayersMatchTheReference) {
  const TargetInfo target = *TargetInfo::get("sm_90a");
  const int64_t wantRun = envInt("MOEGEN_PROPERTY_SM90A_SCHEDULES", 24);
  LayerSampler sampler(static_cast<uint64_t>(envInt("MOEGEN_PROPERTY_SEED", 1)), /*nvptx=*/true);
  CompileOptions options;
  options.chip = "sm_90a";
  std::unique_ptr<runtime::Backend> backend = runtime::createEmuBackend();
  int64_t accepted = 0, compiled = 0, run = 0, wgmma = 0;
  for (int drawn = 0; drawn < 600 || (run < wantRun && drawn < 200 * wantRun); ++drawn) {
    SampledLayer d = sampler.next();
    auto spec = parseMoeSpec(d.text, "draw.moe");
    ASSERT_TRUE(static_cast<bool>(spec)) << llvm::toString(spec.takeError()) << "\n" << d.text;
    bool rulesAccept = checkLayer(*spec, target).empty();
    llvm::Error verified = verifyLayer(*spec, options);
    bool verifierAccepts = !verified;
    std::string why = verified ? llvm::toString(std::move(verified)) : "";
    ASSERT_EQ(rulesAccept, verifierAccepts) << why << "\n" << d.text;
    if (!rulesAccept)
      continue;
    ++accepted;
    if (compiled < 3) {
      auto layer = compileLayer(*spec, options);
      ASSERT_TRUE(static_cast<bool>(layer))
          << "accepted, but does not compile: " << llvm::toString(layer.takeError()) << "\n"
          << d.text;
      for (const CompiledKernel &k : layer->kernels)
        EXPECT_NE(k.code.hsaco.size(), 0u) << k.signature.symbol;
      ++compiled;
    }
    if (run == wantRun)
      continue;
    wgmma += usesWgmma(*spec, target);
    SCOPED_TRACE("draw " + std::to_string(drawn) + ", " + std::to_string(d.tokens) + " tokens, " +
                 std::to_string(d.cuNum) + " SMs:\n" + printMoeSpec(*spec));
    expectMatchesReference(*spec, d, drawn, options.chip, *backend);
    if (HasFailure())
      return;
    ++run;
  }
  EXPECT_GE(accepted, 10);
  EXPECT_EQ(compiled, 3);
  EXPECT_EQ(run, wantRun);
  std::printf("sm_90a: %lld accepted layers, %lld run on the emulator, %lld of them with "
              "warpgroup MMAs\n",
              static_cast<long long>(accepted), static_cast<long long>(run),
              static_cast<long long>(wgmma));
}

} // namespace
