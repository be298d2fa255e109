//===- HipBackendTest.cpp - The HIP backend's loader ----------------------===//

#include "runtime/hip/HipBackend.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <dlfcn.h>

using namespace moegen::runtime;

namespace {

bool hipRuntimePresent() {
  for (const char *n :
       {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "/opt/rocm/lib/libamdhip64.so"})
    if (void *h = dlopen(n, RTLD_NOW | RTLD_LOCAL)) {
      dlclose(h);
      return true;
    }
  return false;
}

TEST(HipBackend, WithoutAHipRuntimeSaysWhatItLookedFor) {
  ::setenv("MOEGEN_HIP_LIB", "/nonexistent/libamdhip64.so", 1);
  auto b = createHipBackend();
  ::unsetenv("MOEGEN_HIP_LIB");
  if (hipRuntimePresent()) {
    // On a ROCm machine the outcome is a backend, or an error about devices.
    if (!b)
      EXPECT_NE(llvm::toString(b.takeError()).find("device"), std::string::npos);
    return;
  }
  ASSERT_FALSE(bool(b));
  std::string msg = llvm::toString(b.takeError());
  EXPECT_NE(msg.find("no HIP runtime found"), std::string::npos) << msg;
  EXPECT_NE(msg.find("already loaded"), std::string::npos) << msg;
  EXPECT_NE(msg.find("$MOEGEN_HIP_LIB=/nonexistent/libamdhip64.so"), std::string::npos) << msg;
  EXPECT_NE(msg.find("libamdhip64.so.6"), std::string::npos) << msg;
  EXPECT_NE(msg.find("/opt/rocm/lib/libamdhip64.so"), std::string::npos) << msg;
}

} // namespace
