//===- SchedulePropertyTest.cpp - Accepted schedules compute the right answer -===//
//
// The property behind moe-verify-schedule: every layer the verifier accepts
// compiles and computes the reference's answer. Layers are drawn at random
// over every parameter of the problem, the formats, the activation and both
// stages' schedules (small shapes), checked by the rules, and each accepted
// one is compiled and run on the emulator through the same check as
// `moegen run`. Rejected draws must be rejected by the compiler too.
//
// MOEGEN_PROPERTY_SCHEDULES (default 200) sets how many accepted layers are
// run in all, MOEGEN_PROPERTY_SEED (default 1) the seed, and
// MOEGEN_PROPERTY_VERBOSE=1 prints each layer before it runs. A longer session:
//   export MOEGEN_PROPERTY_SCHEDULES=2000 MOEGEN_PROPERTY_SEED=$RANDOM
//   build/bin/KernelMatrixTests --gtest_filter='Shards/ScheduleProperty.*'
//
//===----------------------------------------------------------------------===//

#include "compiler/Compiler.h"
#include "compiler/spec/DslParser.h"
#include "runtime/backend/EmuBackend.h"
#include "runtime/check/LayerCheck.h"
#include "runtime/jit/Compiler.h"
#include "templates/LayerRules.h"
#include "templates/gemm/GemmPlan.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <random>

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

struct Draw {
  std::string text;
  int64_t tokens = 0;
  int64_t cuNum = 256; // the launch's device: 1 or 2 CUs make persistent grids loop
};

/// Draws layers near the valid region: each parameter usually takes a value
/// that fits what was drawn before it (a divisor, an aligned size) and
/// sometimes any value of its range, so most draws are accepted and the
/// rules' edges are crossed from both sides. The verifier alone judges.
class Sampler {
public:
  explicit Sampler(uint64_t seed) : rng(seed) {}

  Draw layer() {
    Problem pr;
    pr.modelDim = pick<int64_t>({128, 256, 384, 512});
    pr.interDim = pick<int64_t>({64, 128, 192, 256, 384});
    pr.experts = range(1, 12);
    pr.topk = range(1, std::min<int64_t>(pr.experts, 4));
    std::string adtype = pick<std::string>({"bf16", "mxfp8", "mxfp4"});
    std::string wdtype = coin(0.85) ? "mxfp4" : pick<std::string>({"mxfp8", "bf16"});
    std::string fused = adtype == "mxfp4" ? "fp4" : adtype == "mxfp8" ? "fp8" : "none";
    if (coin(0.3))
      fused = pick<std::string>({"none", "fp4", "fp8"});
    // K alignment of a tile: the MX block and the MFMA K (128) for MX
    // operands, the bf16 MFMA K (32) otherwise.
    int64_t kAlign = adtype == "bf16" ? 32 : 128;
    // 256-row blocks: tiles whose waves split tile_m (GemmPlan::mWaves);
    // 48, 80, 96: blocks that are not powers of two.
    int64_t sortBlock = pick<int64_t>({16, 32, 48, 64, 80, 96, 128, 256});

    Draw d;
    d.text = "moe property {\n";
    d.text += "  model_dim = " + std::to_string(pr.modelDim) + "\n";
    d.text += "  inter_dim = " + std::to_string(pr.interDim) + "\n";
    d.text += "  experts = " + std::to_string(pr.experts) + "\n";
    d.text += "  topk = " + std::to_string(pr.topk) + "\n";
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
    d.text += "  stage1 {\n" + stage(sortBlock, pr.interDim, pr.modelDim, kAlign) +
              "    fused_quant = " + fused + "\n  }\n";
    // Stage 2 on the block, or on M tiles dividing it (a multiple of 16, at
    // least a quarter of it); else any tile, which the rules may refuse.
    std::vector<int64_t> divisors;
    for (int64_t d = sortBlock; d >= 16 && 4 * d >= sortBlock; d -= 16)
      if (sortBlock % d == 0)
        divisors.push_back(d);
    int64_t tileM2 = coin(0.85) ? pick(divisors) : pick<int64_t>({16, 32, 64, 128});
    d.text +=
        "  stage2 {\n" + stage(std::max<int64_t>(tileM2, 16), pr.modelDim, pr.interDim, kAlign);
    d.text += "    reduce = " + pick<std::string>({"atomic", "reduce"}) + "\n  }\n}\n";
    // Sometimes enough tokens that an expert's rows reach a split tile's
    // second M-wave.
    d.tokens = coin(0.1) ? range(41, 300) : range(1, 40);
    d.cuNum = pick<int64_t>({1, 2, 256});
    return d;
  }

private:
  template <typename T> const T &pick(const std::vector<T> &v) {
    return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
  }
  int64_t range(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }
  bool coin(double p = 0.5) { return std::bernoulli_distribution(p)(rng); }

  /// A value of `fits` usually, of `any` sometimes.
  int64_t likely(const std::vector<int64_t> &fits, const std::vector<int64_t> &any) {
    return !fits.empty() && coin(0.85) ? pick(fits) : pick(any);
  }

  /// One stage's schedule for N output columns and reduction length K.
  std::string stage(int64_t tileM, int64_t n, int64_t k, int64_t kAlign) {
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
    return s;
  }

  std::mt19937_64 rng;
};

class ScheduleProperty : public ::testing::TestWithParam<int> {};

TEST_P(ScheduleProperty, AcceptedSchedulesMatchTheReference) {
  const int shard = GetParam();
  const int64_t total = envInt("MOEGEN_PROPERTY_SCHEDULES", 200);
  const int64_t want = total / kShards + (shard < total % kShards ? 1 : 0);
  const uint64_t seed = static_cast<uint64_t>(envInt("MOEGEN_PROPERTY_SEED", 1));
  Sampler sampler(seed * 1000003 + static_cast<uint64_t>(shard));
  TargetInfo target = TargetInfo::defaultTarget();
  std::unique_ptr<runtime::Backend> backend = runtime::createEmuBackend();
  const bool verbose = envInt("MOEGEN_PROPERTY_VERBOSE", 0) > 0;

  int64_t accepted = 0, drawn = 0, mSplit = 0;
  std::map<std::string, int64_t> rejectedBy; // "stage1.k_wave" -> count
  while (accepted < want && drawn < want * 200) {
    Draw d = sampler.layer();
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
    LayerCheckOptions options;
    options.tokens = d.tokens;
    options.seed = drawn;
    // Few CUs make the persistent GEMM grids loop over several M tiles.
    options.cuNum = d.cuNum;
    runtime::CompilerOptions jit;
    jit.diskCache = false; // memory only
    options.kernels = std::make_shared<runtime::Compiler>(jit);
    auto result = runLayerCheck(*spec, *backend, options);
    ASSERT_TRUE(static_cast<bool>(result))
        << "accepted, but did not compile or run: " << llvm::toString(result.takeError());
    EXPECT_TRUE(result->passed()) << result->table();
    for (const StageCheck &s : result->stages)
      EXPECT_EQ(s.result.nonFinite, 0) << s.stage;
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

} // namespace
