//===- ParallelCompileTest.cpp - compileLayer on one and several threads --===//
//
// The kernels of a layer are compiled on a thread pool; the code objects
// (and the bitcode the emulator runs) must not depend on how many threads
// did it, nor on which kernel finished first.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compiler.h"
#include "compiler/spec/DslParser.h"

#include <gtest/gtest.h>

using namespace moegen;

namespace {

MoeSpec example(const std::string &name, const std::vector<std::string> &overrides = {}) {
  const char *src = std::getenv("MOEGEN_SOURCE_DIR");
  auto spec = loadMoeSpec(std::string(src ? src : ".") + "/examples/" + name, overrides);
  EXPECT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  return spec ? *spec : MoeSpec();
}

CompiledLayer compile(const MoeSpec &spec, unsigned threads) {
  CompileOptions options;
  options.threads = threads;
  auto layer = compileLayer(spec, options);
  EXPECT_TRUE(bool(layer)) << llvm::toString(layer.takeError());
  return layer ? std::move(*layer) : CompiledLayer();
}

void expectSameBytes(const CompiledLayer &a, const CompiledLayer &b) {
  ASSERT_EQ(a.kernels.size(), b.kernels.size());
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    SCOPED_TRACE(a.kernels[i].signature.symbol);
    EXPECT_EQ(a.kernels[i].signature.symbol, b.kernels[i].signature.symbol);
    EXPECT_FALSE(a.kernels[i].code.hsaco.empty());
    EXPECT_TRUE(a.kernels[i].code.hsaco == b.kernels[i].code.hsaco);
    EXPECT_TRUE(a.kernels[i].code.bitcode == b.kernels[i].code.bitcode);
    EXPECT_EQ(a.kernels[i].code.isa, b.kernels[i].code.isa);
  }
}

TEST(ParallelCompile, SameBytesOnOneAndSeveralThreads) {
  // Split-K adds a finishing kernel: six kernels of different sizes.
  MoeSpec spec = example("kimi_k3_tp8_a4w4.moe", {"stage1.k_batch=7", "stage1.fused_quant=none"});
  CompiledLayer serial = compile(spec, 1);
  ASSERT_GE(serial.kernels.size(), 5u);
  CompiledLayer parallel = compile(spec, 4);
  expectSameBytes(serial, parallel);
  // All threads the machine has, and more threads than kernels.
  expectSameBytes(serial, compile(spec, 0));
  expectSameBytes(serial, compile(spec, 16));
}

TEST(ParallelCompile, KernelsKeepThePlannedOrder) {
  MoeSpec spec = example("kimi_k3_tp8_a8w4.moe");
  CompiledLayer layer = compile(spec, 8);
  ASSERT_FALSE(layer.kernels.empty());
  EXPECT_EQ(layer.kernels.front().family, KernelFamily::SortCount);
  EXPECT_EQ(layer.kernels.back().family, KernelFamily::Stage2);
}

TEST(ParallelCompile, AnUnwritableDumpDirectoryIsAnErrorOnAnyThreadCount) {
  MoeSpec spec = example("kimi_k3_tp8_a4w4.moe");
  for (unsigned threads : {1u, 4u}) {
    CompileOptions options;
    options.threads = threads;
    options.dumpDir = "/dev/null/ir"; // below a file: cannot be created
    auto layer = compileLayer(spec, options);
    ASSERT_FALSE(bool(layer));
    EXPECT_NE(llvm::toString(layer.takeError()).find("/dev/null/ir"), std::string::npos);
  }
}

} // namespace
