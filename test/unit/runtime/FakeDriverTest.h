//===- FakeDriverTest.h - Tests over a stand-in driver ----------*- C++ -*-===//
//
// What the hip and cuda backends' tests over FakeHip.cpp and FakeCuda.cpp
// share: reaching the stand-in's test hooks once the backend has loaded it,
// and the events check both drivers pass alike.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEST_UNIT_RUNTIME_FAKEDRIVERTEST_H
#define MOEGEN_TEST_UNIT_RUNTIME_FAKEDRIVERTEST_H

#include "runtime/backend/Backend.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

namespace moegen::test {

/// The test hook `name` of the stand-in driver `library`; null, and a test
/// failure, while the backend has not loaded it.
template <class F> F fakeDriverHook(const char *library, const char *name) {
  void *h = dlopen(library, RTLD_NOW | RTLD_NOLOAD);
  EXPECT_TRUE(h) << library << " is not loaded";
  return h ? reinterpret_cast<F>(dlsym(h, name)) : nullptr;
}

/// Creates two events of `b` and records the first into `start`: the time
/// between them is an error of the driver's `elapsedTimeCall`, since the
/// second never was recorded. Call it in ASSERT_NO_FATAL_FAILURE.
inline void expectUnrecordedEventHasNoTime(runtime::Backend &b, const std::string &elapsedTimeCall,
                                           runtime::EventHandle &start) {
  auto first = b.createEvent(), second = b.createEvent();
  ASSERT_TRUE(first && second);
  ASSERT_FALSE(bool(b.recordEvent(*first)));
  auto unrecorded = b.elapsedMs(*first, *second);
  ASSERT_FALSE(bool(unrecorded));
  EXPECT_NE(llvm::toString(unrecorded.takeError()).find(elapsedTimeCall + " failed"),
            std::string::npos);
  start = *first;
}

/// Records a graph on `b` whose callback first makes every call a capture
/// cannot hold (each would break the capture in the driver: the backend
/// must refuse it by name first), then `launch`es one kernel; checks each
/// refusal's words (`backend`: "cuda", "hip"; `late`: a code bundle, whose
/// load `loadWhat` names) and returns the graph. Call it in
/// ASSERT_NO_FATAL_FAILURE.
inline void expectCaptureRefusesWhatAGraphCannotHold(runtime::Backend &b, runtime::DevicePtr p,
                                                     const runtime::CodeBundle &late,
                                                     const std::string &backend,
                                                     const std::string &loadWhat,
                                                     std::function<llvm::Error()> launch,
                                                     runtime::GraphHandle &graph) {
  auto message = [](llvm::Error e) { return e ? llvm::toString(std::move(e)) : "success"; };
  std::vector<std::string> refused;
  auto g = b.captureGraph([&]() -> llvm::Error {
    uint8_t host[8] = {};
    auto event = b.createEvent(); // not a stream operation: allowed
    EXPECT_TRUE(bool(event));
    refused.push_back(message(b.copyToDevice(p, host, 8)));
    refused.push_back(message(b.copyToHost(host, p, 8)));
    refused.push_back(message(b.synchronize()));
    refused.push_back(message(b.allocate(16).takeError()));
    refused.push_back(message(b.free(p)));
    refused.push_back(message(b.loadCode(late).takeError()));
    refused.push_back(message(b.recordEvent(*event)));
    refused.push_back(message(b.elapsedMs(*event, *event).takeError()));
    refused.push_back(message(b.launchGraph(runtime::GraphHandle{0})));
    refused.push_back(message(b.captureGraph([] { return llvm::Error::success(); }).takeError()));
    return launch();
  });
  ASSERT_TRUE(bool(g)) << llvm::toString(g.takeError());
  graph = *g;
  const std::string what[] = {"copy of 8 bytes to the device",
                              "copy of 8 bytes to the host",
                              "synchronize",
                              "allocation of 16 bytes",
                              "free",
                              loadWhat,
                              "recording an event",
                              "waiting for an event",
                              "launching a graph",
                              "capturing a graph (captures do not nest)"};
  ASSERT_EQ(refused.size(), std::size(what));
  for (size_t i = 0; i < refused.size(); ++i)
    EXPECT_EQ(refused[i], backend + " backend: " + what[i] +
                              " while a graph is being captured (a graph holds launches and "
                              "memsets only; do it before the capture)");
}

} // namespace moegen::test

#endif // MOEGEN_TEST_UNIT_RUNTIME_FAKEDRIVERTEST_H
