//===- FakeGraphs.h - Stream capture in a stand-in driver -------*- C++ -*-===//
//
// FakeCuda.cpp and FakeHip.cpp capture a stream the way both drivers do in
// thread-local capture mode: while the stream captures, launches and memsets
// become nodes of the graph instead of running; a copy, a wait, an
// allocation or a module load on the capturing thread breaks the capture
// (STREAM_CAPTURE_UNSUPPORTED at once, STREAM_CAPTURE_INVALIDATED when it
// ends). A launched executable graph runs its nodes in order. CUDA and HIP
// share the error codes used here. `FAKE_<DRIVER>_FAIL` ("symbol=code,...")
// makes those entry points return `code`.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEST_UNIT_RUNTIME_FAKEGRAPHS_H
#define MOEGEN_TEST_UNIT_RUNTIME_FAKEGRAPHS_H

#include "test/unit/runtime/FakeLaunch.h"

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace moegen::test {

constexpr int kFakeIllegalState = 401;       // *_ERROR_ILLEGAL_STATE
constexpr int kFakeCaptureUnsupported = 900; // *_ERROR_STREAM_CAPTURE_UNSUPPORTED
constexpr int kFakeCaptureInvalidated = 901; // *_ERROR_STREAM_CAPTURE_INVALIDATED

/// The code the environment variable `env` ("symbol=code,...") gives
/// `symbol`, or 0.
inline int injectedFailure(const char *env, const char *symbol) {
  const char *spec = std::getenv(env);
  std::string rules = spec ? spec : "", want = std::string(symbol) + "=";
  for (size_t at = rules.find(want); at != std::string::npos; at = rules.find(want, at + 1))
    if (at == 0 || rules[at - 1] == ',')
      return std::atoi(rules.c_str() + at + want.size());
  return 0;
}

/// A launch or a memset, recorded by a capture.
struct FakeNode {
  bool isLaunch = true;
  FakeLaunch launch;
  unsigned long long dst = 0;
  unsigned char value = 0;
  size_t count = 0;
};

/// One stream's capture and the graphs the driver made. `Run` runs a node
/// (a launch or a memset) on the device.
class FakeGraphs {
public:
  explicit FakeGraphs(const char *failEnv) : failEnv(failEnv) {}

  int fail(const char *symbol) const { return injectedFailure(failEnv, symbol); }

  /// For a call the capturing thread may not make: it breaks the capture.
  int breaksCapture() {
    if (!capture)
      return 0;
    invalidated = true;
    return kFakeCaptureUnsupported;
  }

  /// A launch or memset: recorded while capturing (true), else the caller
  /// runs it.
  bool record(FakeNode node) {
    if (!capture)
      return false;
    capture->push_back(std::move(node));
    return true;
  }

  int begin(const char *symbol, int mode) {
    if (int e = fail(symbol))
      return e;
    if (capture || mode != 1) // one capture at a time; moegen asks for thread-local mode
      return kFakeIllegalState;
    capture = new Nodes;
    invalidated = false;
    ++live;
    return 0;
  }
  int end(const char *symbol, void **graph) {
    if (!capture)
      return kFakeIllegalState;
    Nodes *g = capture;
    capture = nullptr;
    int injected = fail(symbol);
    if (invalidated || injected) {
      destroy(g);
      *graph = nullptr;
      return injected ? injected : kFakeCaptureInvalidated;
    }
    *graph = g;
    return 0;
  }
  int instantiate(const char *symbol, void **exec, void *graph) {
    if (int e = fail(symbol))
      return e;
    *exec = new Nodes(*static_cast<Nodes *>(graph));
    ++live;
    return 0;
  }
  template <class Run> int launch(const char *symbol, void *exec, Run run) {
    if (int e = fail(symbol))
      return e;
    if (capture)
      return kFakeCaptureUnsupported; // moegen does not nest graphs
    ++launches;
    for (const FakeNode &n : *static_cast<Nodes *>(exec))
      run(n);
    return 0;
  }
  /// Frees a captured or an executable graph.
  int destroy(void *graph) {
    delete static_cast<Nodes *>(graph);
    --live;
    return 0;
  }

  /// Graphs and executable graphs not destroyed yet.
  int liveGraphs() const { return live; }
  size_t graphLaunches() const { return launches; }

private:
  using Nodes = std::vector<FakeNode>;
  const char *failEnv;
  Nodes *capture = nullptr; // the stream's capture in progress
  bool invalidated = false;
  int live = 0;
  size_t launches = 0;
};

} // namespace moegen::test

#endif // MOEGEN_TEST_UNIT_RUNTIME_FAKEGRAPHS_H
