//===- RuntimeBench.cpp - Costs of the runtime's paths --------------------===//
//
//   moegen-bench-runtime [SOURCE_DIR]
//
// Prints, for the layers of examples/*.moe and their tier variants:
//   cold compile   ms per kernel (compile on a miss: verify, lower, LLVM, link)
//   disk hit       ms per layer (fresh process state, warm disk cache)
//   memory hit     ns per getKernels of a prepared layer (key computed
//                  once), and per getKernels(spec) (canonical text + key)
//   layer call     ns of host work per MoeLayer::run (tier, checks, argument
//                  packing) with a backend whose launch does nothing
// Goals (issue 5): cold <= 250 ms median, disk <= 2 ms, memory <= 1 us,
// layer call <= 5 us.
//
//===----------------------------------------------------------------------===//

#include "compiler/spec/DslParser.h"
#include "runtime/api/MoeLayer.h"
#include "runtime/jit/Compiler.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>

using namespace moegen;
using namespace moegen::runtime;
using Clock = std::chrono::steady_clock;

namespace {

double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

/// Accepts launches and does nothing: what remains is the layer's own cost.
class NullBackend final : public Backend {
public:
  llvm::StringRef name() const override { return "null"; }
  llvm::Expected<ModuleHandle> loadCode(const CodeBundle &) override { return ModuleHandle{0}; }
  llvm::Expected<KernelHandle> getKernel(ModuleHandle, llvm::StringRef s) override {
    return KernelHandle{0, s.str(), 0};
  }
  llvm::Expected<DevicePtr> allocate(size_t) override { return DevicePtr(next += 1 << 20); }
  llvm::Error free(DevicePtr) override { return llvm::Error::success(); }
  llvm::Error copyToDevice(DevicePtr, const void *, size_t) override {
    return llvm::Error::success();
  }
  llvm::Error copyToHost(void *, DevicePtr, size_t) override { return llvm::Error::success(); }
  llvm::Error memset(DevicePtr, uint8_t, size_t) override {
    ++memsets;
    return llvm::Error::success();
  }
  llvm::Error launch(const KernelHandle &, Dim3, Dim3, uint32_t,
                     llvm::ArrayRef<uint8_t> kernarg) override {
    launches += kernarg.size() != 0;
    return llvm::Error::success();
  }
  llvm::Error synchronize() override { return llvm::Error::success(); }
  uint64_t launches = 0, memsets = 0;

private:
  DevicePtr next = 1 << 20;
};

void row(llvm::StringRef what, double value, llvm::StringRef unit, llvm::StringRef detail) {
  llvm::outs() << llvm::left_justify(what, 32) << llvm::format("%12.3f ", value)
               << llvm::left_justify(unit, 4) << detail << "\n";
}

} // namespace

int main(int argc, char **argv) {
  std::string src = argc > 1 ? argv[1] : ".";
  std::vector<MoeSpec> specs;
  for (const char *name :
       {"kimi_k3_tp8_a4w4", "kimi_k3_tp8_a8w4", "kimi_k3_tp8_a16w4", "deepseek_v3_tp8_a4w4"}) {
    auto s = parseMoeSpecFile(src + "/examples/" + name + ".moe");
    if (!s) {
      llvm::errs() << llvm::toString(s.takeError()) << "\n";
      return 1;
    }
    // The block sizes the tuned tables and the heuristic use.
    for (int64_t bm : {32, 64, 128}) {
      MoeSpec v = *s;
      v.stage1.tileM = bm;
      specs.push_back(v);
    }
  }
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("moegen-bench-cache", dir)) {
    llvm::errs() << "cannot create a temporary directory\n";
    return 1;
  }
  CompilerOptions options;
  options.cacheDir = std::string(dir);

  // Cold: every layer compiled once, the cache empty. Variants the schedule
  // rules reject (e.g. an LDS budget) are left out.
  std::vector<double> cold;
  size_t kernels = 0, rejected = 0;
  {
    Compiler jit(options);
    std::vector<MoeSpec> valid;
    for (const MoeSpec &s : specs) {
      auto t = Clock::now();
      auto k = jit.getKernels(s);
      double ms = msSince(t);
      if (!k) {
        llvm::consumeError(k.takeError());
        ++rejected;
        continue;
      }
      valid.push_back(s);
      kernels += (*k)->kernels.size();
      cold.push_back(ms / double((*k)->kernels.size()));
    }
    specs = std::move(valid);
  }
  if (specs.empty()) {
    llvm::errs() << "no layer compiled\n";
    return 1;
  }
  // Disk hits: a fresh compiler (empty memory cache) per layer.
  std::vector<double> disk;
  for (int rep = 0; rep < 5; ++rep)
    for (const MoeSpec &s : specs) {
      Compiler jit(options);
      auto t = Clock::now();
      auto k = jit.getKernels(s);
      disk.push_back(msSince(t));
      if (!k || jit.stats().compiles != 0) {
        llvm::errs() << "expected a disk hit\n";
        return 1;
      }
    }
  // Memory hits.
  Compiler jit(options);
  for (const MoeSpec &s : specs)
    llvm::cantFail(jit.getKernels(s).takeError());
  const int n = 20000;
  auto t = Clock::now();
  for (int i = 0; i < n; ++i)
    llvm::cantFail(jit.getKernels(specs[i % specs.size()]).takeError());
  double memNs = msSince(t) * 1e6 / n;
  std::vector<PreparedLayer> prepared;
  for (const MoeSpec &s : specs)
    prepared.push_back(jit.prepare(s));
  t = Clock::now();
  size_t found = 0;
  for (int i = 0; i < n * 10; ++i)
    found += bool(*jit.getKernels(prepared[i % prepared.size()]));
  double lookupNs = msSince(t) * 1e6 / (n * 10);
  t = Clock::now();
  for (int i = 0; i < n; ++i)
    found += jit.prepare(specs[i % specs.size()]).key.digest[0] & 1;
  double keyNs = msSince(t) * 1e6 / n;

  // Layer call overhead.
  NullBackend backend;
  auto jitShared = std::make_shared<Compiler>(options);
  auto layer = MoeLayer::create(jitShared, backend, specs[0]);
  if (!layer) {
    llvm::errs() << llvm::toString(layer.takeError()) << "\n";
    return 1;
  }
  LayerArgs args;
  args.tokens = 16;
  DevicePtr next = DevicePtr(1) << 32;
  for (DevicePtr *p : {&args.topkIds, &args.topkWeights, &args.hidden, &args.w1, &args.w1Scale,
                       &args.w2, &args.w2Scale, &args.output, &args.workspace})
    *p = next += DevicePtr(1) << 28;
  args.workspaceBytes = size_t(1) << 28;
  llvm::cantFail((*layer)->run(args)); // resolve the tier
  const int calls = 200000;
  t = Clock::now();
  for (int i = 0; i < calls; ++i)
    llvm::cantFail((*layer)->run(args));
  double callNs = msSince(t) * 1e6 / calls;

  llvm::outs() << "moegen runtime bench: " << specs.size() << " layers (" << kernels
               << " kernels) from examples/*.moe x block_m {32,64,128}";
  if (rejected)
    llvm::outs() << ", " << rejected << " variant(s) rejected by the schedule rules";
  llvm::outs() << "\n";
  llvm::outs() << llvm::left_justify("path", 32) << llvm::right_justify("value", 12) << " unit"
               << "  detail\n";
  row("cold compile per kernel", median(cold), "ms",
      "median; min " + std::to_string(*std::min_element(cold.begin(), cold.end())) + ", max " +
          std::to_string(*std::max_element(cold.begin(), cold.end())) + " (goal <= 250)");
  row("disk-cache hit per layer", median(disk), "ms",
      "median of " + std::to_string(disk.size()) + " (goal <= 2)");
  row("memory hit, prepared layer", lookupNs, "ns",
      "mean; getKernels(PreparedLayer): key computed once (goal <= 1000)");
  row("memory hit, getKernels(spec)", memNs, "ns",
      "mean; the spec's key from a memo (structural hash + equality) (goal <= 1000)");
  row("prepare(spec)", keyNs, "ns", "mean; the memoized key plus a copy of the spec");
  row("MoeLayer::run host overhead", callNs, "ns",
      "mean; " + std::to_string(backend.launches / (calls + 1)) + " launches + " +
          std::to_string(backend.memsets / (calls + 1)) +
          " memsets per call, null backend (goal <= 5000)");
  llvm::sys::fs::remove_directories(dir);
  return found ? 0 : 1;
}
