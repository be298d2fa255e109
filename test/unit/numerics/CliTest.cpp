//===- CliTest.cpp - moegen ref / moegen lookup end to end ----------------===//

#include "runtime/numerics/Npy.h"
#include "tools/moegen/Commands.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

using namespace moegen;

namespace {

constexpr const char *kSpec = R"(moe tiny_a4w4 {
  model_dim = 128
  inter_dim = 128
  experts = 4
  topk = 2
  gate_up = separated
  doweight = stage2
  activation_dtype = mxfp4
  weight_dtype = mxfp4
  output_dtype = bf16
  activation = situv2(beta = 4.0, linear_beta = 25.0)
  stage1 { tile = 32x32x128; waves_per_eu = 4; fused_quant = fp4 }
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
  EXPECT_EQ(a1->shape, (std::vector<int64_t>{5, 128}));
  auto s1 = num::readTensor(out, "stage1_out");
  ASSERT_TRUE(!!s1) << llvm::toString(s1.takeError());
  EXPECT_EQ(s1->shape, (std::vector<int64_t>{5, 2, 128}));
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
  // The manifest is valid UTF-8 JSON and labels each weight as what it is.
  auto manifestText = llvm::MemoryBuffer::getFile(out + "/manifest.json");
  ASSERT_TRUE(!!manifestText);
  auto manifest = llvm::json::parse((*manifestText)->getBuffer());
  ASSERT_TRUE(!!manifest) << llvm::toString(manifest.takeError());
  const llvm::json::Array *tensors = manifest->getAsObject()->getArray("tensors");
  ASSERT_NE(tensors, nullptr);
  std::map<std::string, std::string> described;
  for (const llvm::json::Value &t : *tensors)
    described[t.getAsObject()->getString("name")->str()] =
        t.getAsObject()->getString("description")->str();
  EXPECT_EQ(described["w1"], "stage-1 logical weights [E, 2 * inter_dim, model_dim], gate rows "
                             "then up rows (GGUU)");
  EXPECT_EQ(described["w2"], "stage-2 logical weights [E, model_dim, inter_dim]");
  EXPECT_EQ(described["a1_scale_sorted_shuffled"],
            "a1 scales by sorted position, e8m0_shuffle layout");
  // A schedule compile rejects is rejected here too, before anything is written.
  std::string out3 = (dir + "/out3").str();
  EXPECT_EQ(
      call(cli::runRef, {"ref", spec, "--tokens", "5", "--set", "stage1.k_batch=3", "--out", out3}),
      1);
  EXPECT_FALSE(llvm::sys::fs::exists(out3));
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
