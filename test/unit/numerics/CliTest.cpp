//===- CliTest.cpp - moegen ref / moegen lookup end to end ----------------===//

#include "runtime/numerics/Npy.h"
#include "tools/moegen/Commands.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace moegen;

namespace {

constexpr const char *kSpec = R"(moe tiny_a4w4 {
  model_dim = 64
  inter_dim = 64
  experts = 4
  topk = 2
  gate_up = separated
  doweight = stage2
  activation_dtype = mxfp4
  weight_dtype = mxfp4
  output_dtype = bf16
  activation = situv2(beta = 4.0, linear_beta = 25.0)
  stage1 { tile = 32x32x256; k_wave = 2; waves_per_eu = 4; fused_quant = fp4 }
  stage2 { tile = 32x128x128; reduce = atomic }
}
)";

int call(int (*fn)(int, const char **), std::vector<std::string> args) {
  std::vector<const char *> argv;
  for (const std::string &a : args)
    argv.push_back(a.c_str());
  return fn(static_cast<int>(argv.size()), argv.data());
}

TEST(Cli, RefWritesReadableTensors) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("moegen-ref", dir));
  std::string spec = (dir + "/tiny.moe").str(), out = (dir + "/out").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(spec, ec);
    ASSERT_FALSE(ec);
    os << kSpec;
  }
  ASSERT_EQ(call(cli::runRef, {"ref", spec, "--tokens", "5", "--seed", "3", "--out", out}), 0);
  auto a1 = num::readTensor(out, "a1");
  ASSERT_TRUE(!!a1) << llvm::toString(a1.takeError());
  EXPECT_EQ(a1->format, num::ElemFormat::MXFP4);
  EXPECT_EQ(a1->shape, (std::vector<int64_t>{5, 64}));
  auto s1 = num::readTensor(out, "stage1_out");
  ASSERT_TRUE(!!s1) << llvm::toString(s1.takeError());
  EXPECT_EQ(s1->shape, (std::vector<int64_t>{5, 2, 64}));
  auto o = num::readTensor(out, "out");
  ASSERT_TRUE(!!o);
  EXPECT_EQ(o->format, num::ElemFormat::BF16);
  for (const char *f : {"w1_shuffled.npy", "w1_scale_shuffled.npy", "sorted_token_ids.npy",
                        "a1_scale_sorted_shuffled.npy", "stage1_out_scale_sorted.npy",
                        "out_exact_f64.npy", "manifest.json"})
    EXPECT_TRUE(llvm::sys::fs::exists(out + "/" + f)) << f;
  // The same seed gives the same bytes.
  std::string out2 = (dir + "/out2").str();
  ASSERT_EQ(call(cli::runRef, {"ref", spec, "--tokens", "5", "--seed", "3", "--out", out2}), 0);
  auto o2 = num::readTensor(out2, "out");
  ASSERT_TRUE(!!o2);
  EXPECT_EQ(o2->data, o->data);
  // Bad usage is reported, not crashed on.
  EXPECT_EQ(call(cli::runRef, {"ref", spec, "--tokens", "0", "--out", out}), 2);
  EXPECT_EQ(call(cli::runRef, {"ref", spec, "--tokens", "2"}), 2);
  EXPECT_EQ(call(cli::runRef, {"ref", (dir + "/missing.moe").str(), "--tokens", "2", "--out", out}),
            1);
  llvm::sys::fs::remove_directories(dir);
}

TEST(Cli, Lookup) {
  const char *src = std::getenv("MOEGEN_SOURCE_DIR");
  std::string table =
      std::string(src ? src : ".") + "/data/aiter-configs/kimik3_a4w4_tuned_fmoe.csv";
  std::vector<std::string> problem = {"--model-dim", "3584",   "--inter-dim", "384",   "--experts",
                                      "896",         "--topk", "16",          "--act", "situv2",
                                      "--a-dtype",   "mxfp4",  "--w-dtype",   "mxfp4"};
  std::vector<std::string> args = {"lookup", "--table", table, "--tokens", "200000"};
  args.insert(args.end(), problem.begin(), problem.end());
  EXPECT_EQ(call(cli::runLookup, args), 0);
  EXPECT_EQ(call(cli::runLookup, {"lookup", "--table", table, "--tokens", "3"}), 2);
  args[2] = table + ".missing";
  EXPECT_EQ(call(cli::runLookup, args), 1);
}

} // namespace
