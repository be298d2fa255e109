//===- main.cpp - A host application that runs a MoE layer with moegen ----===//
//
//   host_app LAYER.moe [--table TUNED.csv] [--backend emu|hip] [--tokens N]
//            [--set key=value]...
//
// Compiles (or loads from the kernel cache) the layer's kernels, runs the
// whole layer (sort, quantization, stage 1, stage 2) through MoeLayer on the
// chosen backend with deterministic inputs, and checks the output against
// moegen's reference. Exit status 0 when it matches. --set scales a layer
// down (e.g. Kimi-K3's shape with fewer experts) for the CPU emulator.
//
// Built twice: host_app links moegen::jit and compiles on first use;
// host_app_aot (MOEGEN_HOST_APP_AOT) links moegen::runtime only and runs
// from a cache that `moegen cache prefill` or host_app filled.
//
//===----------------------------------------------------------------------===//

#include "compiler/spec/DslParser.h"
#include "runtime/api/Backends.h"
#include "runtime/api/MoeLayer.h"
#ifndef MOEGEN_HOST_APP_AOT
#include "runtime/jit/Compiler.h"
#endif
#include "runtime/numerics/Compare.h"
#include "runtime/numerics/InputGen.h"
#include "runtime/numerics/Preshuffle.h"
#include "runtime/numerics/Reference.h"

#include <cstdio>
#include <string>

using namespace moegen;

namespace {

int fail(const std::string &what, llvm::Error e) {
  std::fprintf(stderr, "host_app: %s: %s\n", what.c_str(), llvm::toString(std::move(e)).c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  std::string specPath, table, backendName = "emu";
  std::vector<std::string> sets;
  int64_t tokens = 7;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool hasValue = i + 1 < argc;
    if (a == "--backend" && hasValue)
      backendName = argv[++i];
    else if (a == "--tokens" && hasValue)
      tokens = std::stoll(argv[++i]);
    else if (a == "--table" && hasValue)
      table = argv[++i];
    else if (a == "--set" && hasValue)
      sets.push_back(argv[++i]);
    else
      specPath = a;
  }
  if (specPath.empty()) {
    std::fprintf(stderr, "usage: host_app LAYER.moe [--table CSV] [--backend emu|hip] "
                         "[--tokens N] [--set key=value]...\n");
    return 2;
  }

  auto spec = parseMoeSpecFile(specPath);
  if (!spec)
    return fail("spec", spec.takeError());
  for (const std::string &s : sets)
    if (llvm::Error e = applySpecOverride(*spec, s))
      return fail("--set " + s, std::move(e));
  auto backend = runtime::createBackend(backendName);
  if (!backend)
    return fail("backend", backend.takeError());
  runtime::Backend &b = **backend;
  // Cache: $MOEGEN_CACHE_DIR, else $XDG_CACHE_HOME/moegen, else ~/.cache/moegen.
#ifdef MOEGEN_HOST_APP_AOT
  auto kernels = std::make_shared<runtime::KernelSource>();
#else
  auto kernels = std::make_shared<runtime::Compiler>();
#endif
  runtime::LayerOptions options;
  if (!table.empty())
    options.tunedTables.push_back(table);
  auto layer = runtime::MoeLayer::create(kernels, b, *spec, options);
  if (!layer)
    return fail("layer", layer.takeError());
  auto dispatch = (*layer)->dispatch(tokens);
  if (!dispatch)
    return fail("dispatch", dispatch.takeError());
  // The inputs and the reference follow the schedule the layer runs (the
  // stage-1 tile sets the sorting block).
  const MoeSpec &ran = dispatch->spec;

  auto in = num::generateInputs(ran, tokens);
  if (!in)
    return fail("inputs", in.takeError());
  auto ref = num::referenceLayer(ran, in->a1, in->topkIds, in->topkWeights, in->w1, in->w2);
  if (!ref)
    return fail("reference", ref.takeError());

  // Device buffers in the layouts the kernels read.
  const int64_t E = ran.problem.experts, K = ran.problem.modelDim, I = ran.problem.interDim;
  auto packed = num::packWeights(ran, in->w1, in->w2);
  if (!packed)
    return fail("weights", packed.takeError());
  std::vector<uint8_t> hidden = num::makeBf16({tokens, K}, in->hidden).data;
  llvm::Error uploadError = llvm::Error::success();
  auto upload = [&](const void *data, size_t bytes) -> runtime::DevicePtr {
    auto p = b.allocate(bytes);
    if (!p) {
      uploadError = llvm::joinErrors(std::move(uploadError), p.takeError());
      return 0;
    }
    if (data)
      uploadError = llvm::joinErrors(std::move(uploadError), b.copyToDevice(*p, data, bytes));
    return *p;
  };
  auto ws = (*layer)->workspaceLayout(tokens);
  if (!ws)
    return fail("workspace", ws.takeError());
  runtime::LayerArgs args;
  args.tokens = tokens;
  args.topkIds = upload(in->topkIds.data(), in->topkIds.size() * 4);
  args.topkWeights = upload(in->topkWeights.data(), in->topkWeights.size() * 4);
  args.hidden = upload(hidden.data(), hidden.size());
  args.w1 = upload(packed->w1.data(), packed->w1.size());
  args.w1Scale = upload(packed->w1Scale.data(), packed->w1Scale.size());
  args.w2 = upload(packed->w2.data(), packed->w2.size());
  args.w2Scale = upload(packed->w2Scale.data(), packed->w2Scale.size());
  args.output = upload(nullptr, tokens * K * 2);
  args.workspace = upload(nullptr, ws->total);
  args.workspaceBytes = ws->total;
  if (uploadError)
    return fail("upload", std::move(uploadError));
  llvm::consumeError(std::move(uploadError));

  if (llvm::Error e = (*layer)->run(args))
    return fail("run", std::move(e));
  if (llvm::Error e = b.synchronize())
    return fail("synchronize", std::move(e));

  std::string origin =
      dispatch->origin == runtime::toString(dispatch->source) ? "" : " (" + dispatch->origin + ")";
  std::printf("%s (model_dim=%lld inter_dim=%lld experts=%lld topk=%lld, %s): %lld tokens -> "
              "tier %lld, %s%s\n",
              ran.name.c_str(), (long long)K, (long long)I, (long long)E,
              (long long)ran.problem.topk, precisionTag(ran.formats).c_str(), (long long)tokens,
              (long long)dispatch->tier, runtime::toString(dispatch->source).str().c_str(),
              origin.c_str());
  for (const auto &k : dispatch->kernels->kernels)
    std::printf("  ran %-11s %s\n", toString(k->meta.family).data(), k->meta.symbol.c_str());

  num::HostTensor out;
  out.format = num::ElemFormat::BF16;
  out.shape = {tokens, K};
  out.data.resize(tokens * K * 2);
  if (llvm::Error e = b.copyToHost(out.data.data(), args.output, out.data.size()))
    return fail("download", std::move(e));
  // Quantized intermediates may land one code away: the layer's bound is the
  // intermediate format's.
  bool quantized = ran.formats.activation != DType::BF16;
  num::CompareOptions tol;
  tol.rtol = quantized ? 0.25 : 5e-2;
  tol.atol = 1e-2;
  tol.maxMismatch = 5e-2;
  tol.maxCosineDiff = quantized ? 1e-2 : 1e-4;
  auto cmp = num::compareTensors(ref->stage2.out, out, {}, tol);
  if (!cmp)
    return fail("compare", cmp.takeError());
  std::printf("output vs reference: %lld values, cosine diff %.3g, %lld mismatches: %s\n",
              (long long)cmp->compared, cmp->cosineDiff, (long long)cmp->mismatches,
              cmp->passed ? "PASS" : "FAIL");
  return cmp->passed && cmp->nonFinite == 0 ? 0 : 1;
}
