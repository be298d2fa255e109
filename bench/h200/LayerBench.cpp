//===- LayerBench.cpp - One layer, checked and timed per token count ------===//

#include "bench/h200/LayerBench.h"

#include "bench/h200/Plan.h"
#include "bench/h200/RotatedInputs.h"

#include "llvm/Support/Format.h"

#include <algorithm>
#include <cmath>

namespace moegen::bench {
namespace {

llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

} // namespace

std::string describeSchedules(const MoeSpec &spec) {
  auto stage = [](const StageSchedule &s) {
    std::string d = "t" + std::to_string(s.tileM) + "x" + std::to_string(s.tileN) + "x" +
                    std::to_string(s.tileK);
    if (s.kBatch > 1)
      d += " kb" + std::to_string(s.kBatch);
    if (s.kWave > 1)
      d += " kw" + std::to_string(s.kWave);
    if (s.wavesPerEU > 0)
      d += " w" + std::to_string(s.wavesPerEU);
    if (s.weightDecode == WeightDecode::Arithmetic)
      d += " dqa";
    if (s.prefetch > 0)
      d += " pf" + std::to_string(s.prefetch);
    if (s.wait == Stage2Wait::Grid)
      d += " gridwait";
    return d;
  };
  return "bm" + std::to_string(spec.stage1.tileM) + " " + stage(spec.stage1) + " / " +
         stage(spec.stage2);
}

double BenchRow::medianUs() const {
  if (callMs.empty())
    return 0;
  std::vector<float> v = callMs;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  double ms = n % 2 ? v[n / 2] : 0.5 * (double(v[n / 2 - 1]) + v[n / 2]);
  return ms * 1000;
}

llvm::Expected<BenchRow> benchTokens(runtime::MoeLayer &layer, runtime::Backend &backend,
                                     const DeviceWeights &weights, int64_t tokens,
                                     const BenchOptions &options, runtime::EventPair events) {
  const MoeSpec &spec = layer.spec();
  if (!weights.serves(spec))
    return makeError("the device weights were made for '" + weights.spec.name +
                     "', whose experts differ from '" + spec.name + "''s");
  BenchRow row;
  row.tokens = tokens;
  row.sets = rotatedSets(tokens);
  auto dispatch = layer.dispatch(tokens); // loads the tier's kernels
  if (!dispatch)
    return dispatch.takeError();
  if (!dispatch->notLaunched.empty())
    return makeError("the layer has kernels without a launcher");
  auto ws = layer.workspaceLayout(tokens);
  if (!ws)
    return ws.takeError();
  const MoeSpec &ran = dispatch->spec; // the tier's schedules
  row.schedules = (dispatch->source == runtime::ScheduleSource::SpecDefault ? "spec"
                   : dispatch->source == runtime::ScheduleSource::Heuristic ? "heuristic"
                                                                            : "tuned") +
                  std::string(": ") + describeSchedules(ran);

  // The sets, on the host and on the device.
  std::vector<RotatedInputs> inputs;
  for (int64_t r = 0; r < row.sets; ++r) {
    inputs.push_back(makeRotatedInputs(spec.problem, tokens, r));
    row.expertsHit += double(inputs.back().expertsHit()) / double(row.sets);
  }
  DeviceArena arena(backend);
  std::vector<runtime::LayerArgs> calls;
  for (const RotatedInputs &in : inputs) {
    runtime::LayerArgs args;
    args.tokens = tokens;
    args.w1 = weights.w1Dev;
    args.w1Scale = weights.w1Scale;
    args.w2 = weights.w2Dev;
    args.w2Scale = weights.w2Scale;
    args.workspaceBytes = ws->total;
    llvm::Error placed = llvm::Error::success();
    auto place = [&](runtime::DevicePtr &field, llvm::Expected<runtime::DevicePtr> p) {
      if (p)
        field = *p;
      else
        placed = llvm::joinErrors(std::move(placed), p.takeError());
    };
    place(args.topkIds, arena.upload(in.topkIds));
    place(args.topkWeights, arena.upload(in.topkWeights));
    place(args.hidden, arena.upload(in.hidden));
    place(args.output, arena.alloc(size_t(tokens) * spec.problem.modelDim * 2));
    place(args.workspace, arena.alloc(ws->total));
    if (placed)
      return std::move(placed);
    calls.push_back(args);
  }

  // One call, checked.
  if (options.check) {
    if (llvm::Error e = layer.run(calls[0]))
      return std::move(e);
    if (llvm::Error e = backend.synchronize())
      return std::move(e);
    std::vector<int64_t> checked = spreadTokens(tokens, options.checkTokens);
    auto a1 = stage1Input(ran, inputs[0], checked);
    if (!a1)
      return a1.takeError();
    RunInputs run;
    run.tokens = tokens;
    run.topkIds = inputs[0].topkIds;
    run.topkWeights = inputs[0].topkWeights;
    run.checked = checked;
    run.a1 = &*a1;
    run.w1 = &weights.w1;
    run.w2 = &weights.w2;
    auto result = checkLayerRun(ran, backend, *dispatch->kernels, *ws, calls[0], run);
    if (!result)
      return result.takeError();
    row.check = std::move(*result);
  }

  // The sets' calls as one graph, replayed.
  if (!options.time)
    return row;
  auto graph = layer.captureRuns(calls);
  if (!graph)
    return graph.takeError();
  auto timed = [&]() -> llvm::Expected<std::vector<float>> {
    auto warm =
        runtime::timeGraphReplays(backend, *graph, events, std::max(options.warmupReplays, 1));
    if (!warm)
      return warm.takeError();
    const double lastMs = std::max(warm->back(), 1e-3f);
    const int replays = std::clamp(int(std::ceil(options.targetMs / lastMs)), options.minReplays,
                                   std::max(options.minReplays, options.maxReplays));
    return runtime::timeGraphReplays(backend, *graph, events, replays);
  }();
  llvm::Error destroyed = backend.destroyGraph(*graph);
  if (!timed)
    return llvm::joinErrors(timed.takeError(), std::move(destroyed));
  if (destroyed)
    return std::move(destroyed);
  for (float ms : *timed)
    row.callMs.push_back(ms / float(row.sets));
  return row;
}

std::vector<BenchRow> benchLayer(const MoeSpec &spec,
                                 std::shared_ptr<runtime::KernelSource> kernels,
                                 runtime::Backend &backend, const DeviceWeights &weights,
                                 const BenchOptions &options, llvm::raw_ostream &log) {
  std::vector<BenchRow> rows;
  runtime::LayerOptions layerOptions;
  layerOptions.target.chip = options.chip;
  layerOptions.cuNum = options.cuNum;
  layerOptions.tunedTables = options.tunedTables;
  auto layer = runtime::MoeLayer::create(std::move(kernels), backend, spec, layerOptions);
  llvm::Expected<runtime::EventPair> events =
      options.time ? runtime::createEventPair(backend)
                   : llvm::Expected<runtime::EventPair>(runtime::EventPair{});
  std::string setupError;
  if (!layer)
    setupError = llvm::toString(layer.takeError());
  if (!events) {
    std::string e = llvm::toString(events.takeError());
    if (setupError.empty())
      setupError = e;
  }
  for (int64_t tokens : options.tokens) {
    llvm::Expected<BenchRow> row =
        setupError.empty() ? benchTokens(**layer, backend, weights, tokens, options, *events)
                           : llvm::Expected<BenchRow>(makeError(setupError));
    if (!row) {
      BenchRow failed;
      failed.tokens = tokens;
      failed.sets = rotatedSets(tokens);
      failed.error = llvm::toString(row.takeError());
      log << spec.name << ", " << tokens << " tokens: error: " << failed.error << "\n";
      rows.push_back(std::move(failed));
      continue;
    }
    log << spec.name << ", " << tokens << " tokens: ";
    if (row->check)
      log << "check " << (row->check->passed() ? "PASS" : "FAIL") << " ("
          << row->check->checkedTokens << " of " << tokens << " tokens compared), ";
    if (options.time)
      log << row->callMs.size() << " replays of " << row->sets << " calls, "
          << llvm::format("%.1f us per call", row->medianUs()) << ", ";
    log << row->schedules << "\n";
    log.flush();
    rows.push_back(std::move(*row));
  }
  return rows;
}

} // namespace moegen::bench
