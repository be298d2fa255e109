//===- CudaBackendTest.cpp - The cuda backend's loader --------------------===//
//
// No GPU in CI: these check that a missing or wrong driver library is a clear
// error. The device path is checked on a lent H200 (docs/sm90a.md).
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaBackend.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace moegen::runtime;

namespace {

/// Sets $MOEGEN_CUDA_LIB (the only place then tried) for one scope.
struct CudaLibEnv {
  explicit CudaLibEnv(const char *path) { ::setenv("MOEGEN_CUDA_LIB", path, 1); }
  ~CudaLibEnv() { ::unsetenv("MOEGEN_CUDA_LIB"); }
};

TEST(CudaBackend, WithoutADriverSaysWhatItLookedFor) {
  CudaLibEnv env("/nonexistent/libcuda.so.1");
  auto b = createCudaBackend();
  ASSERT_FALSE(bool(b));
  std::string msg = llvm::toString(b.takeError());
  EXPECT_NE(msg.find("no CUDA driver found"), std::string::npos) << msg;
  EXPECT_NE(msg.find("$MOEGEN_CUDA_LIB=/nonexistent/libcuda.so.1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("set MOEGEN_CUDA_LIB"), std::string::npos) << msg;
}

TEST(CudaBackend, ALibraryThatIsNotTheDriverIsNamed) {
  CudaLibEnv env("libm.so.6");
  auto b = createCudaBackend();
  ASSERT_FALSE(bool(b));
  std::string msg = llvm::toString(b.takeError());
  EXPECT_NE(msg.find("CUDA driver 'libm.so.6' lacks cuGetErrorName"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cuLaunchKernelEx"), std::string::npos) << msg;
}

TEST(CudaBackend, RefusesChipsThatAreNotNvidia) {
  CudaBackendOptions options;
  options.chip = "gfx950";
  auto b = createCudaBackend(options);
  ASSERT_FALSE(bool(b));
  EXPECT_EQ(llvm::toString(b.takeError()), "cuda backend: 'gfx950' is not an NVIDIA chip (sm_90a)");
}

TEST(CudaBackend, ComputeCapabilityOfChipNames) {
  EXPECT_EQ(computeCapabilityOf("sm_90a"), std::make_pair(9, 0));
  EXPECT_EQ(computeCapabilityOf("sm_90"), std::make_pair(9, 0));
  EXPECT_EQ(computeCapabilityOf("sm_100a"), std::make_pair(10, 0));
  EXPECT_FALSE(computeCapabilityOf("gfx950").has_value());
  EXPECT_FALSE(computeCapabilityOf("sm_").has_value());
  EXPECT_FALSE(computeCapabilityOf("sm_9x").has_value());
}

} // namespace
