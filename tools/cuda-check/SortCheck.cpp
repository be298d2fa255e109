//===- SortCheck.cpp - moegen-cuda-check: the sorting kernels -------------===//

#include "tools/cuda-check/SortCheck.h"

#include "runtime/api/FamilyLaunchers.h"
#include "runtime/check/DeviceArena.h"
#include "runtime/numerics/Sorting.h"
#include "templates/sort/SortPlan.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"

#include <chrono>
#include <cstring>

namespace moegen::cudacheck {
namespace {

using namespace runtime;

llvm::Error fail(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

enum class Routing { Router, Hot };

const char *name(Routing r) { return r == Routing::Router ? "router" : "hot"; }

/// Router: distinct experts per token. Hot: three experts, repeats inside a
/// token too. Either way one entry in eight is -1 or `experts` (dropped).
std::vector<int32_t> route(Routing r, int64_t tokens, const SortPlan &p, std::mt19937 &rng) {
  std::vector<int32_t> ids(tokens * p.topk);
  std::uniform_int_distribution<int32_t> expert(0, int32_t(p.experts) - 1);
  std::uniform_int_distribution<int32_t> hot(0, int32_t(std::min<int64_t>(3, p.experts)) - 1);
  std::uniform_int_distribution<int> sixteenth(0, 15);
  for (int64_t t = 0; t < tokens; ++t) {
    int32_t *row = &ids[t * p.topk];
    for (int64_t k = 0; k < p.topk; ++k) {
      int u = sixteenth(rng);
      if (u < 2) {
        row[k] = u == 0 ? -1 : int32_t(p.experts);
      } else if (r == Routing::Hot) {
        row[k] = hot(rng);
      } else {
        do
          row[k] = expert(rng);
        while (std::find(row, row + k, row[k]) != row + k);
      }
    }
  }
  return ids;
}

/// One of the three kernels, loaded, with its launch as MoeLayer has it.
struct SortKernel {
  KernelSignature signature;
  KernelHandle handle;
  FamilyLaunch launch;
};

struct CaseResult {
  int64_t compared = 0, differ = 0, dropped = 0, launches = 0;
  double usPerSort = 0;
  std::string firstDiff;
  /// `what` names the element; only called for the first difference.
  void add(bool same, llvm::function_ref<std::string()> what) {
    ++compared;
    if (!same && differ++ == 0)
      firstDiff = what();
  }
};

llvm::Expected<CaseResult> runCase(Backend &backend, const MoeSpec &spec, const SortPlan &plan,
                                   const LayerPlan &layer, llvm::ArrayRef<SortKernel> kernels,
                                   int64_t tokens, Routing routing, unsigned repeat,
                                   std::mt19937 &rng) {
  std::vector<int32_t> ids = route(routing, tokens, plan, rng);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::vector<float> weights(ids.size());
  for (float &w : weights)
    w = unit(rng);
  auto want = num::sortMoe(ids, weights, tokens, plan.topk, plan.experts, plan.blockM,
                           num::OutsideIds::Drop);
  if (!want)
    return want.takeError();

  const WorkspaceLayout ws = layer.layout(tokens);
  DeviceArena owned(backend);
  auto dIds = owned.upload(ids);
  auto dW = owned.upload(weights);
  auto dWs = owned.alloc(ws.total, /*zero=*/true, 0xA5); // poisoned: unwritten rows show
  if (!dIds || !dW || !dWs)
    return fail("allocating the buffers: " + llvm::toString(!dIds ? dIds.takeError()
                                                            : !dW ? dW.takeError()
                                                                  : dWs.takeError()));
  auto valueOf = [&](ArgValue v) -> std::optional<uint64_t> {
    switch (v) {
    case ArgValue::TopkIds:
      return *dIds;
    case ArgValue::TopkWeights:
      return *dW;
    case ArgValue::SortedIds:
      return *dWs + ws.sortedIds.offset;
    case ArgValue::SortedWeights:
      return *dWs + ws.sortedWeights.offset;
    case ArgValue::SortedExperts:
      return *dWs + ws.sortedExperts.offset;
    case ArgValue::NumValidIds:
      return *dWs + ws.numValidIds.offset;
    case ArgValue::SortCounts:
      return *dWs + ws.sortCounts.offset;
    case ArgValue::SortTotals:
      return *dWs + ws.sortTotals.offset;
    case ArgValue::StageReady:
      return *dWs + ws.stageReady.offset;
    case ArgValue::Tokens:
      return uint64_t(tokens);
    default:
      return std::nullopt;
    }
  };
  // The sort grids do not depend on the persistent-kernel cap.
  LaunchShape shape{tokens, ws, /*maxWorkgroups=*/0};
  struct Ready {
    const SortKernel *kernel;
    Dim3 grid;
    KernargPacker args;
  };
  std::vector<Ready> ready;
  for (const SortKernel &k : kernels) {
    Dim3 grid = k.launch.grid(shape);
    if (uint64_t(grid.X) * grid.Y * grid.Z == 0)
      continue; // not launched at this size, as in MoeLayer::run
    KernargPacker args;
    for (const KernelArg &a : k.signature.args) {
      std::optional<ArgValue> bound = bindingOf(k.launch, a.name);
      std::optional<uint64_t> v = bound ? valueOf(*bound) : std::nullopt;
      if (!v)
        return fail(k.signature.symbol + ": argument '" + a.name + "' has no binding here");
      if (a.kind == KernelArgKind::Pointer)
        args.add<uint64_t>(*v);
      else
        args.add<int32_t>(int32_t(*v));
    }
    ready.push_back({&k, grid, std::move(args)});
  }
  auto launchAll = [&]() -> llvm::Error {
    for (const Ready &r : ready)
      if (llvm::Error e = backend.launch(
              r.kernel->handle, r.grid, {uint32_t(r.kernel->signature.blockSize), 1, 1},
              uint32_t(r.kernel->signature.dynamicSharedBytes), r.args.bytes()))
        return e;
    return llvm::Error::success();
  };
  if (llvm::Error e = launchAll())
    return std::move(e);
  if (llvm::Error e = backend.synchronize())
    return std::move(e);

  const int64_t rows = ws.maxPaddedRows, blocks = ws.maxBlocks;
  std::vector<int32_t> gotIds(rows), gotExperts(blocks), valid(2);
  std::vector<float> gotW(rows);
  auto copy = [&](void *dst, const WorkspaceRegion &region, int64_t bytes) {
    return backend.copyToHost(dst, *dWs + region.offset, size_t(bytes));
  };
  if (llvm::Error e =
          llvm::joinErrors(llvm::joinErrors(copy(gotIds.data(), ws.sortedIds, rows * 4),
                                            copy(gotW.data(), ws.sortedWeights, rows * 4)),
                           llvm::joinErrors(copy(gotExperts.data(), ws.sortedExperts, blocks * 4),
                                            copy(valid.data(), ws.numValidIds, 8))))
    return std::move(e);

  CaseResult res;
  res.launches = int64_t(ready.size());
  res.dropped = llvm::count_if(ids, [&](int32_t id) { return uint32_t(id) >= plan.experts; });
  for (int j = 0; j < 2; ++j)
    res.add(valid[j] == want->numValidIds[j], [&] {
      return "num_valid_ids[" + std::to_string(j) + "]: got " + std::to_string(valid[j]) +
             ", want " + std::to_string(want->numValidIds[j]);
    });
  // Every row below num_valid_ids (padding rows too: sentinel id, weight 0)
  // and every used block's expert; aiter leaves the tail unspecified, and the
  // kernels do not write it.
  const int64_t used = want->numValidIds[0];
  for (int64_t i = 0; i < used; ++i) {
    int32_t g = gotIds[i], w = want->sortedTokenIds[i];
    res.add(g == w, [&] {
      return ("sorted row " + llvm::Twine(i) + ": got token " + llvm::Twine(g & 0xFFFFFF) +
              " slot " + llvm::Twine(uint32_t(g) >> 24) + ", want token " +
              llvm::Twine(w & 0xFFFFFF) + " slot " + llvm::Twine(uint32_t(w) >> 24))
          .str();
    });
    res.add(std::memcmp(&gotW[i], &want->sortedWeights[i], 4) == 0, [&] {
      return "sorted weight " + std::to_string(i) + ": got " + std::to_string(gotW[i]) + ", want " +
             std::to_string(want->sortedWeights[i]);
    });
  }
  for (int64_t b = 0; b < used / plan.blockM; ++b)
    res.add(gotExperts[b] == want->sortedExpertIds[b], [&] {
      return "block " + std::to_string(b) + ": got expert " + std::to_string(gotExperts[b]) +
             ", want " + std::to_string(want->sortedExpertIds[b]);
    });

  if (repeat > 0) {
    auto start = std::chrono::steady_clock::now();
    for (unsigned i = 0; i < repeat; ++i)
      if (llvm::Error e = launchAll())
        return std::move(e);
    if (llvm::Error e = backend.synchronize())
      return std::move(e);
    res.usPerSort =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count() /
        repeat;
  }
  return res;
}

} // namespace

SortCheckResult checkSort(Backend &backend, const MoeSpec &spec, const TargetInfo &target,
                          llvm::ArrayRef<int64_t> tokenCounts, unsigned repeat, std::mt19937 &rng,
                          PtxReader readPtx, llvm::raw_ostream &os) {
  SortCheckResult result;
  ScheduleIssues issues;
  SortPlan plan = planSort(spec, target, issues);
  if (!issues.empty()) {
    os << "sort not checked: " << issues.front().str() << "\n";
    return result;
  }
  struct Family {
    KernelFamily family;
    KernelSignature signature;
  };
  const Family families[] = {
      {KernelFamily::SortCount, sortCountKernelSignature(sortCountKernelSymbol(plan), plan)},
      {KernelFamily::SortScan, sortScanKernelSignature(sortScanKernelSymbol(plan), plan)},
      {KernelFamily::Sort, sortKernelSignature(sortKernelSymbol(plan), plan)}};
  const FamilyLaunchers launchers = builtinLaunchers();
  const cache::KernelSet none; // the sort's launches do not depend on the other kernels
  std::vector<SortKernel> kernels;
  for (const Family &f : families) {
    const std::string &symbol = f.signature.symbol;
    auto ptx = readPtx(symbol);
    if (!ptx) {
      os << llvm::format("%-40s not checked: ", symbol.c_str()) << llvm::toString(ptx.takeError())
         << "\n";
      return result;
    }
    CodeBundle bundle;
    bundle.Hsaco.assign(ptx->begin(), ptx->end());
    bundle.Name = symbol;
    auto module = backend.loadCode(bundle);
    auto handle = module ? backend.getKernel(*module, symbol)
                         : llvm::Expected<KernelHandle>(module.takeError());
    auto launch = launchers[size_t(f.family)](spec, none, target);
    if (!handle || !launch) {
      os << "moegen-cuda-check: " << symbol << ": "
         << llvm::toString(!handle ? handle.takeError() : launch.takeError()) << "\n";
      result.found = true;
      result.ok = false;
      return result;
    }
    kernels.push_back({f.signature, *handle, std::move(*launch)});
  }
  result.found = true;
  const LayerPlan layer = LayerPlan::make(spec, none, target);

  // The most tokens sort sorts alone in one workgroup, and one more.
  std::vector<int64_t> counts(tokenCounts.begin(), tokenCounts.end());
  const int64_t single = plan.singleEntries / plan.topk;
  for (int64_t t : {single, single + 1})
    if (!llvm::is_contained(counts, t))
      counts.push_back(t);
  llvm::sort(counts);
  const std::string symbol = sortKernelSymbol(plan);
  for (int64_t tokens : counts)
    for (Routing routing : {Routing::Router, Routing::Hot}) {
      auto r = runCase(backend, spec, plan, layer, kernels, tokens, routing, repeat, rng);
      ++result.ran;
      if (!r) {
        os << llvm::format("%-40s tokens %6lld  %-6s  ERROR ", symbol.c_str(), (long long)tokens,
                           name(routing))
           << llvm::toString(r.takeError()) << "\n";
        result.ok = false;
        continue;
      }
      bool pass = r->differ == 0 && r->compared > 2;
      result.ok &= pass;
      os << llvm::format("%-40s tokens %6lld  %-6s  launches %lld  dropped %6lld  elements "
                         "%8lld  differ %6lld  %s",
                         symbol.c_str(), (long long)tokens, name(routing), (long long)r->launches,
                         (long long)r->dropped, (long long)r->compared, (long long)r->differ,
                         pass ? "PASS" : "FAIL");
      if (!pass && !r->firstDiff.empty())
        os << "  (first: " << r->firstDiff << ")";
      if (r->usPerSort > 0)
        os << llvm::format("  %.2f us/sort", r->usPerSort);
      os << "\n";
    }
  return result;
}

} // namespace moegen::cudacheck
