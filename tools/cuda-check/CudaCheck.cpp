//===- CudaCheck.cpp - moegen-cuda-check: sm_90a kernels on a CUDA device -===//
//
//   moegen-cuda-check SPEC.moe --ptx DIR [--tokens N,...] [--seed S] [--set k=v ...]
//
// Runs the sm_90a kernels of a layer (sorting, SortCheck.h; quantizations; the
// GEMM stages, GemmCheck.h; the top-k reduction)
// that `moegen compile --target sm_90a --kernels ...` wrote into DIR
// (<symbol>.ptx) on the first sm_90a device,
// through the cuda backend, on random inputs, and compares every output
// element decoded (never packed bytes) with the reference of
// runtime/numerics built from the same spec. Prints one line per (kernel,
// tokens): max abs / rel error, elements that differ, PASS or FAIL; exits 1
// when any check fails or a kernel cannot be run. Needs neither MLIR nor
// libLLVM.so: it is small enough to copy to a GPU machine (docs/sm90a.md).
//
//===----------------------------------------------------------------------===//

#include "compiler/spec/DslParser.h"
#include "runtime/backend/Backend.h"
#include "runtime/check/DeviceArena.h"
#include "runtime/cuda/CudaBackend.h"
#include "runtime/numerics/Formats.h"
#include "runtime/numerics/MxQuant.h"
#include "runtime/numerics/Preshuffle.h"
#include "runtime/numerics/Sorting.h"
#include "templates/quant/QuantPlan.h"
#include "templates/reduce/ReducePlan.h"
#include "tools/cuda-check/GemmCheck.h"
#include "tools/cuda-check/SortCheck.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <random>

using namespace moegen;
using namespace moegen::runtime;
namespace cl = llvm::cl;

static cl::opt<std::string> specArg(cl::Positional, cl::desc("<spec.moe>"), cl::Required);
static cl::opt<std::string> ptxArg("ptx", cl::desc("directory of the <symbol>.ptx files"),
                                   cl::value_desc("dir"), cl::Required);
static cl::list<int64_t> tokensArg("tokens", cl::desc("token counts (default 1,37,256)"),
                                   cl::CommaSeparated);
static cl::opt<unsigned> seedArg("seed", cl::desc("seed of the random inputs"), cl::init(1234));
static cl::list<std::string> setArgs("set", cl::desc("spec override key=value"));
static cl::opt<unsigned> repeatArg("repeat",
                                   cl::desc("also time this many back-to-back launches of each "
                                            "checked kernel (host clock around the queue)"),
                                   cl::init(0));

namespace {

llvm::Error fail(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// bf16 inputs with the cases that matter for MX scales: N(0,1) values with
/// per-row magnitudes from 2^-20 to 2^20, an all-zero block, a block with one
/// huge element, tiny elements next to large ones.
std::vector<float> makeInput(int64_t rows, int64_t cols, std::mt19937 &rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exp(-20, 20);
  std::vector<float> x(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    float mag = std::ldexp(1.0f, exp(rng));
    for (int64_t c = 0; c < cols; ++c)
      x[r * cols + c] = num::roundToBf16(normal(rng) * mag);
  }
  if (rows > 0 && cols >= 96) {
    std::fill(x.begin(), x.begin() + 32, 0.0f); // zero block
    x[40] = 3.0e4f;                             // one large element
    for (int64_t c = 64; c < 96; ++c)           // tiny next to large
      x[c] = num::roundToBf16(c == 64 ? 100.0f : 1.0e-6f * float(c));
  }
  return x;
}

struct Stats {
  double usPerLaunch = 0, bytesMoved = 0; // with --repeat
  double maxAbs = 0, maxRel = 0;
  int64_t compared = 0, differ = 0;
  std::string firstDiff;
  void add(double got, double want, const llvm::Twine &where) {
    ++compared;
    bool same = (std::isnan(got) && std::isnan(want)) || got == want;
    if (same)
      return;
    double abs = std::fabs(got - want);
    if (std::isnan(abs))
      abs = INFINITY;
    maxAbs = std::max(maxAbs, abs);
    maxRel = std::max(maxRel, abs / std::max(std::fabs(want), 1e-30));
    if (differ++ == 0)
      firstDiff = (where + ": got " + std::to_string(got) + ", want " + std::to_string(want)).str();
  }
};

/// The decoded value of element `c` of quantized row `row` whose scale is at
/// scale row `scaleRow`.
double decodeMx(const QuantPlan &plan, llvm::ArrayRef<uint8_t> q, llvm::ArrayRef<uint8_t> scales,
                int64_t row, int64_t scaleRow, int64_t c) {
  uint8_t scale = scales[num::e8m0ShuffleOffset(scaleRow, c / 32, plan.scaleCols())];
  double s = num::decodeE8M0(scale);
  if (plan.format == DType::MXFP4) {
    uint8_t byte = q[row * plan.rowBytes() + c / 2];
    return num::decodeF4E2M1(c % 2 ? byte >> 4 : byte & 0xF) * s;
  }
  return num::decodeF8E4M3(q[row * plan.rowBytes() + c]) * s;
}

/// Microseconds per launch over --repeat launches, host clock around them
/// (after the checked run, so module load and first-launch costs are paid).
llvm::Expected<double> timeLaunches(Backend &backend, llvm::function_ref<llvm::Error()> launch) {
  auto start = std::chrono::steady_clock::now();
  for (unsigned i = 0; i < repeatArg; ++i)
    if (llvm::Error e = launch())
      return std::move(e);
  if (llvm::Error e = backend.synchronize())
    return std::move(e);
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
             .count() /
         repeatArg;
}

/// Launches `kernel` on `grid` workgroups of `threads` threads.
llvm::Error launchGrid(Backend &backend, const KernelHandle &kernel, std::array<int64_t, 3> grid,
                       int64_t threads, const KernargPacker &args) {
  return backend.launch(kernel, {uint32_t(grid[0]), uint32_t(grid[1]), uint32_t(grid[2])},
                        {uint32_t(threads), 1, 1}, 0, args.bytes());
}

/// The checked run: `launch` once, then wait for it.
llvm::Error launchAndWait(Backend &backend, llvm::function_ref<llvm::Error()> launch) {
  if (llvm::Error e = launch())
    return e;
  return backend.synchronize();
}

/// The time per launch of `launch` into `st` (its bytes are the caller's).
llvm::Error timeInto(Stats &st, Backend &backend, llvm::function_ref<llvm::Error()> launch) {
  auto us = timeLaunches(backend, launch);
  if (!us)
    return us.takeError();
  st.usPerLaunch = *us;
  return llvm::Error::success();
}

/// Runs one quantization kernel for `tokens` tokens and compares it with
/// num::quantizeMx (RoundUp) of the same bf16 values.
llvm::Expected<Stats> checkQuant(Backend &backend, const MoeSpec &spec, const QuantPlan &plan,
                                 const KernelHandle &kernel, int64_t tokens, std::mt19937 &rng) {
  const bool sorted = plan.order == QuantScaleOrder::Sorted;
  const int64_t srcRows = plan.sourceRows(tokens), cols = plan.cols;
  std::vector<float> x = makeInput(srcRows, cols, rng);
  std::vector<uint16_t> xBits(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    xBits[i] = num::encodeBf16(x[i]);
  auto ref =
      num::quantizeMx(x, {srcRows, cols},
                      plan.format == DType::MXFP4 ? num::ElemFormat::MXFP4 : num::ElemFormat::MXFP8,
                      num::ScaleRounding::RoundUp);
  if (!ref)
    return ref.takeError();
  std::vector<float> want = num::decode(*ref);

  // Sorted order: a random routing sorted by the reference.
  num::MoeSorting sorting;
  if (sorted) {
    std::uniform_int_distribution<int32_t> expert(0, int32_t(plan.experts) - 1);
    std::vector<int32_t> ids(tokens * plan.topk);
    for (int64_t t = 0; t < tokens; ++t)
      for (int64_t k = 0; k < plan.topk; ++k) {
        int32_t e;
        do
          e = expert(rng);
        while (std::find(ids.begin() + t * plan.topk, ids.begin() + t * plan.topk + k, e) !=
               ids.begin() + t * plan.topk + k);
        ids[t * plan.topk + k] = e;
      }
    std::vector<float> weights(ids.size(), 1.0f);
    auto s = num::sortMoe(ids, weights, tokens, plan.topk, plan.experts, plan.blockM);
    if (!s)
      return s.takeError();
    sorting = std::move(*s);
  }

  DeviceArena buf(backend);
  const size_t qBytes = srcRows * plan.rowBytes(), scaleBytes = plan.scaleBytes(tokens);
  auto dx = buf.upload(xBits.data(), xBits.size() * 2);
  auto dq = buf.alloc(qBytes, /*zero=*/true, 0xA5); // poisoned: unwritten bytes show
  auto ds = buf.alloc(scaleBytes, /*zero=*/true, 0xA5);
  if (!dx || !dq || !ds)
    return fail("allocating the buffers: " + llvm::toString(!dx   ? dx.takeError()
                                                            : !dq ? dq.takeError()
                                                                  : ds.takeError()));
  KernargPacker args;
  args.add(*dx).add(*dq).add(*ds);
  if (sorted) {
    auto dids = buf.upload(sorting.sortedTokenIds.data(), sorting.sortedTokenIds.size() * 4);
    if (!dids)
      return dids.takeError();
    auto dvalid = buf.upload(sorting.numValidIds, sizeof(sorting.numValidIds));
    if (!dvalid)
      return dvalid.takeError();
    args.add(*dids).add(*dvalid);
    if (plan.stageReady) {
      // Each block's counter as stage 1 leaves it: down to the one the
      // quantization takes (templates/gemm/StageReady.h).
      std::vector<int32_t> ready(plan.sortedBlocks(tokens), 1);
      auto dready = buf.upload(ready.data(), ready.size() * 4);
      if (!dready)
        return dready.takeError();
      args.add(*dready);
    }
    args.add(static_cast<int32_t>(tokens));
  } else {
    args.add(static_cast<int32_t>(srcRows));
  }
  std::array<int64_t, 3> grid = plan.grid(tokens);
  auto launch = [&]() -> llvm::Error {
    if (grid[0] == 0)
      return llvm::Error::success();
    return launchGrid(backend, kernel, grid, plan.threads, args);
  };
  if (llvm::Error e = launchAndWait(backend, launch))
    return std::move(e);
  std::vector<uint8_t> q(qBytes), scales(scaleBytes);
  if (llvm::Error e = backend.copyToHost(q.data(), *dq, qBytes))
    return std::move(e);
  if (llvm::Error e = backend.copyToHost(scales.data(), *ds, scaleBytes))
    return std::move(e);

  Stats st;
  if (repeatArg > 0) {
    if (llvm::Error e = timeInto(st, backend, launch))
      return std::move(e);
    // Each routed row read once (bf16) and written once (codes); one scale
    // byte per block of every valid sorted row, padding rows included.
    int64_t dataRows = sorted ? tokens * plan.topk : srcRows;
    int64_t scaleRows = sorted ? sorting.numValidIds[0] : srcRows;
    st.bytesMoved =
        double(dataRows) * (cols * 2 + plan.rowBytes()) + double(scaleRows) * plan.blocksPerRow();
    if (sorted) // the sorted ids, once
      st.bytesMoved += double(scaleRows) * 4;
  }
  if (!sorted) {
    for (int64_t r = 0; r < srcRows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        st.add(decodeMx(plan, q, scales, r, r, c), want[r * cols + c],
               "row " + llvm::Twine(r) + " col " + llvm::Twine(c));
    return st;
  }
  // Every routed sorted row: data at its source row, scale at its position;
  // padding rows: scale byte 0.
  for (int64_t pos = 0; pos < sorting.numValidIds[0]; ++pos) {
    int32_t id = sorting.sortedTokenIds[pos];
    int64_t token = num::MoeSorting::tokenOf(id), slot = num::MoeSorting::slotOf(id);
    if (token >= tokens || slot >= plan.topk) {
      for (int64_t b = 0; b < plan.blocksPerRow(); ++b)
        st.add(scales[num::e8m0ShuffleOffset(pos, b, plan.scaleCols())], 0,
               "padding row " + llvm::Twine(pos) + " scale " + llvm::Twine(b));
      continue;
    }
    int64_t src = plan.source == QuantSourceRows::Slots ? token * plan.topk + slot : token;
    for (int64_t c = 0; c < cols; ++c)
      st.add(decodeMx(plan, q, scales, src, pos, c), want[src * cols + c],
             "sorted row " + llvm::Twine(pos) + " col " + llvm::Twine(c));
  }
  return st;
}

/// Runs the top-k reduction for `tokens` tokens and compares it with the sum
/// in f32 over the routed slots in slot order, rounded once to bf16 (the
/// kernel's contract, ReduceKernel.h). Unrouted rows hold NaN: reading one
/// shows in the output.
llvm::Expected<Stats> checkReduce(Backend &backend, const ReducePlan &plan,
                                  const KernelHandle &kernel, int64_t tokens, std::mt19937 &rng) {
  const int64_t cols = plan.cols, slots = tokens * plan.topk;
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int32_t> expert(0, int32_t(plan.experts) - 1);
  std::uniform_int_distribution<int> unrouted(0, 7);
  std::vector<int32_t> ids(slots);
  for (int32_t &id : ids) {
    int u = unrouted(rng);
    id = u == 0 ? -1 : u == 1 ? int32_t(plan.experts) : expert(rng);
  }
  std::vector<uint16_t> rows(slots * cols);
  for (int64_t r = 0; r < slots; ++r)
    for (int64_t c = 0; c < cols; ++c)
      rows[r * cols + c] = num::encodeBf16(uint32_t(ids[r]) < uint32_t(plan.experts)
                                               ? normal(rng)
                                               : std::numeric_limits<float>::quiet_NaN());
  DeviceArena buf(backend);
  auto drows = buf.upload(rows.data(), rows.size() * 2);
  auto dids = buf.upload(ids.data(), ids.size() * 4);
  auto dout = buf.alloc(tokens * cols * 2, /*zero=*/true, 0xA5);
  if (!drows || !dids || !dout)
    return fail("allocating the buffers: " + llvm::toString(!drows  ? drows.takeError()
                                                            : !dids ? dids.takeError()
                                                                    : dout.takeError()));
  KernargPacker args;
  args.add(*drows).add(*dids).add(*dout).add(static_cast<int32_t>(tokens));
  std::array<int64_t, 3> grid = plan.grid(tokens);
  auto launch = [&]() -> llvm::Error {
    return launchGrid(backend, kernel, grid, plan.threads, args);
  };
  if (llvm::Error e = launchAndWait(backend, launch))
    return std::move(e);
  std::vector<uint16_t> out(tokens * cols);
  if (llvm::Error e = backend.copyToHost(out.data(), *dout, out.size() * 2))
    return std::move(e);
  Stats st;
  if (repeatArg > 0) {
    if (llvm::Error e = timeInto(st, backend, launch))
      return std::move(e);
    int64_t routed =
        llvm::count_if(ids, [&](int32_t id) { return uint32_t(id) < uint32_t(plan.experts); });
    st.bytesMoved = double(routed) * cols * 2 + double(tokens) * cols * 2 + double(slots) * 4;
  }
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t c = 0; c < cols; ++c) {
      float acc = 0.0f;
      for (int64_t k = 0; k < plan.topk; ++k)
        if (uint32_t(ids[t * plan.topk + k]) < uint32_t(plan.experts))
          acc += num::decodeBf16(rows[(t * plan.topk + k) * cols + c]);
      st.add(num::decodeBf16(out[t * cols + c]), num::roundToBf16(acc),
             "token " + llvm::Twine(t) + " col " + llvm::Twine(c));
    }
  return st;
}

llvm::Expected<std::vector<char>> readPtx(llvm::StringRef symbol) {
  llvm::SmallString<256> path(ptxArg);
  llvm::sys::path::append(path, symbol + ".ptx");
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return fail("cannot read '" + path + "': " + buffer.getError().message() +
                " (moegen compile --target sm_90a --kernels ... -o DIR writes it)");
  std::vector<char> ptx((*buffer)->getBufferStart(), (*buffer)->getBufferEnd());
  ptx.push_back('\0');
  return ptx;
}

int run() {
  std::vector<std::string> overrides(setArgs.begin(), setArgs.end());
  auto spec = loadMoeSpec(specArg, overrides);
  if (!spec) {
    llvm::errs() << "moegen-cuda-check: " << llvm::toString(spec.takeError()) << "\n";
    return 1;
  }
  TargetInfo target = *TargetInfo::forChip(TargetInfo::kHopperChip);
  auto backend = createCudaBackend();
  if (!backend) {
    llvm::errs() << "moegen-cuda-check: " << llvm::toString(backend.takeError()) << "\n";
    return 1;
  }
  std::vector<int64_t> tokenCounts(tokensArg.begin(), tokensArg.end());
  if (tokenCounts.empty())
    tokenCounts = {1, 37, 256};
  std::mt19937 rng(seedArg);

  ScheduleIssues issues;
  struct Case {
    KernelFamily family;
    std::optional<QuantPlan> quant;
    std::optional<ReducePlan> reduce;
  };
  Case cases[] = {{KernelFamily::QuantInput, planInputQuant(*spec, target, issues), {}},
                  {KernelFamily::QuantInter, planInterQuant(*spec, target, issues), {}},
                  {KernelFamily::Reduce, {}, planReduce(*spec, target, issues)}};
  bool ok = true;
  int ran = 0;
  for (const Case &c : cases) {
    if (!c.quant && !c.reduce)
      continue;
    std::string symbol = c.quant ? quantKernelSymbol(*c.quant) : reduceKernelSymbol(*c.reduce);
    // The kernels compiled into DIR are checked (moegen compile --kernels
    // may have built only some); a spec with none of them fails below.
    auto ptx = readPtx(symbol);
    if (!ptx) {
      llvm::outs() << llvm::format("%-40s not checked: ", symbol.c_str())
                   << llvm::toString(ptx.takeError()) << "\n";
      continue;
    }
    CodeBundle bundle;
    bundle.Hsaco.assign(ptx->begin(), ptx->end());
    bundle.Name = symbol;
    auto module = (*backend)->loadCode(bundle);
    auto kernel = module ? (*backend)->getKernel(*module, symbol)
                         : llvm::Expected<KernelHandle>(module.takeError());
    if (!kernel) {
      llvm::errs() << "moegen-cuda-check: " << symbol << ": " << llvm::toString(kernel.takeError())
                   << "\n";
      ok = false;
      continue;
    }
    for (int64_t tokens : tokenCounts) {
      auto st = c.quant ? checkQuant(**backend, *spec, *c.quant, *kernel, tokens, rng)
                        : checkReduce(**backend, *c.reduce, *kernel, tokens, rng);
      ++ran;
      if (!st) {
        llvm::outs() << llvm::format("%-40s tokens %6lld  ERROR ", symbol.c_str(),
                                     (long long)tokens)
                     << llvm::toString(st.takeError()) << "\n";
        ok = false;
        continue;
      }
      bool pass = st->differ == 0 && st->compared > 0;
      ok &= pass;
      llvm::outs() << llvm::format("%-40s tokens %6lld  elements %9lld  differ %6lld  max abs "
                                   "%.3g  max rel %.3g  %s",
                                   symbol.c_str(), (long long)tokens, (long long)st->compared,
                                   (long long)st->differ, st->maxAbs, st->maxRel,
                                   pass ? "PASS" : "FAIL");
      if (!pass && !st->firstDiff.empty())
        llvm::outs() << "  (first: " << st->firstDiff << ")";
      if (st->usPerLaunch > 0)
        llvm::outs() << llvm::format("  %.2f us/launch, %.0f GB/s", st->usPerLaunch,
                                     st->bytesMoved / st->usPerLaunch / 1e3);
      llvm::outs() << "\n";
    }
  }
  // The GEMM stages (GemmCheck.h).
  GemmCheckOptions gemm;
  gemm.tokens = tokenCounts;
  gemm.seed = seedArg;
  gemm.readPtx = readPtx;
  auto time = [&](llvm::function_ref<llvm::Error()> launch) {
    return timeLaunches(**backend, launch);
  };
  if (repeatArg > 0)
    gemm.time = time;
  GemmCheckSummary gemms = checkGemmStages(**backend, *spec, gemm, llvm::outs());
  ran += gemms.checked;
  ok &= gemms.ok;
  cudacheck::SortCheckResult sort = cudacheck::checkSort(**backend, *spec, target, tokenCounts,
                                                         repeatArg, rng, readPtx, llvm::outs());
  ran += sort.ran;
  ok &= sort.ok;
  if (ran == 0) {
    llvm::errs() << "moegen-cuda-check: no kernel of the layer with an sm_90a template has its "
                    "PTX in '"
                 << ptxArg
                 << "' (sort_count, sort_scan and sort are in every layer; quant_input, "
                    "quant_inter need MX activations, reduce needs stage2.reduce = reduce; "
                    "stage1 and stage2 are checked together)\n";
    return 1;
  }
  return ok ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "run sm_90a kernels on a CUDA device and check them\n");
  return run();
}
