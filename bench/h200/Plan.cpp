//===- Plan.cpp - What moegen-bench-h200 runs -----------------------------===//

#include "bench/h200/Plan.h"

namespace moegen::bench {

llvm::ArrayRef<int64_t> defaultTokenCounts() {
  static const int64_t counts[] = {1, 4, 16, 64, 256, 1024, 2048, 4096, 8192, 16384};
  return counts;
}

int64_t rotatedSets(int64_t tokens) { return tokens <= 64 ? 8 : 2; }

llvm::ArrayRef<const char *> defaultSpecs() {
  static const char *const specs[] = {
      "examples/kimi_k3_tp8_a16w4.moe", "examples/kimi_k3_tp8_a4w4.moe",
      "examples/kimi_k3_tp8_a8w4.moe", "bench/h200/deepseek_v3_tp8_e256_a16w4.moe",
      "bench/h200/deepseek_v3_tp8_e256_a4w4.moe"};
  return specs;
}

} // namespace moegen::bench
