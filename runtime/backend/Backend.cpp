//===- Backend.cpp --------------------------------------------------------===//
#include "runtime/backend/Backend.h"

#include <cstring>

namespace moegen::runtime {

Backend::~Backend() = default;

static llvm::Error cannotTime(const Backend &B) {
  return llvm::createStringError(std::errc::not_supported,
                                 "%s backend: cannot time kernels (no device events)",
                                 B.name().str().c_str());
}

llvm::Expected<EventHandle> Backend::createEvent() { return cannotTime(*this); }
llvm::Error Backend::recordEvent(EventHandle) { return cannotTime(*this); }
llvm::Expected<float> Backend::elapsedMs(EventHandle, EventHandle) { return cannotTime(*this); }

llvm::Expected<KernelResources> Backend::kernelResources(const KernelHandle &K) {
  return llvm::createStringError(std::errc::not_supported,
                                 "%s backend: does not report the resources of kernel '%s' (the "
                                 "code object's metadata has them)",
                                 name().str().c_str(), K.Symbol.c_str());
}

static llvm::Error noGraphs(const Backend &B) {
  return llvm::createStringError(std::errc::not_supported,
                                 "%s backend: device graphs are not supported (the cuda and hip "
                                 "backends have them)",
                                 B.name().str().c_str());
}

llvm::Expected<GraphHandle> Backend::captureGraph(llvm::function_ref<llvm::Error()>) {
  return noGraphs(*this);
}
llvm::Error Backend::launchGraph(GraphHandle) { return noGraphs(*this); }
llvm::Error Backend::destroyGraph(GraphHandle) { return noGraphs(*this); }

llvm::Expected<EventPair> createEventPair(Backend &B) {
  auto Start = B.createEvent();
  if (!Start)
    return Start.takeError();
  auto End = B.createEvent();
  if (!End)
    return End.takeError();
  return EventPair{*Start, *End};
}

llvm::Expected<std::vector<float>> timeGraphReplays(Backend &B, GraphHandle G, EventPair E,
                                                    int Replays) {
  std::vector<float> Ms;
  for (int I = 0; I < Replays; ++I) {
    if (llvm::Error Err = B.recordEvent(E.Start))
      return std::move(Err);
    if (llvm::Error Err = B.launchGraph(G))
      return std::move(Err);
    if (llvm::Error Err = B.recordEvent(E.End))
      return std::move(Err);
    auto T = B.elapsedMs(E.Start, E.End);
    if (!T)
      return T.takeError();
    Ms.push_back(*T);
  }
  return Ms;
}

KernargPacker &KernargPacker::addBytes(const void *Data, size_t Size, size_t Align) {
  size_t Off = (Bytes.size() + Align - 1) / Align * Align;
  Bytes.resize(Off + Size, 0);
  std::memcpy(Bytes.data() + Off, Data, Size);
  return *this;
}

} // namespace moegen::runtime
