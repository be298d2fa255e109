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
#include <string>

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

} // namespace moegen::test

#endif // MOEGEN_TEST_UNIT_RUNTIME_FAKEDRIVERTEST_H
