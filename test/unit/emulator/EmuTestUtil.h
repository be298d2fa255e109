//===- EmuTestUtil.h - Helpers for the emulator unit tests -----------------===//
#ifndef MOEGEN_TEST_UNIT_EMULATOR_EMUTESTUTIL_H
#define MOEGEN_TEST_UNIT_EMULATOR_EMUTESTUTIL_H

#include "emulator/Emulator.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace moegen::emu::test {

inline std::string kernelPath(const std::string &File) {
  const char *Src = std::getenv("MOEGEN_SOURCE_DIR");
  return std::string(Src ? Src : ".") + "/test/unit/emulator/kernels/" + File;
}

inline std::unique_ptr<Emulator> loadKernels(const std::string &File, Options O = Options()) {
  auto E = std::make_unique<Emulator>(O);
  if (llvm::Error Err = E->loadIRFile(kernelPath(File))) {
    ADD_FAILURE() << llvm::toString(std::move(Err));
    return nullptr;
  }
  return E;
}

/// A host vector registered as device memory for the lifetime of the object.
template <class T> struct DeviceBuffer {
  DeviceBuffer(Emulator &E, std::vector<T> Init) : E(E), Host(std::move(Init)) {
    Addr = E.registerBuffer(Host.data(), Host.size() * sizeof(T));
  }
  DeviceBuffer(Emulator &E, size_t N, T V = T()) : DeviceBuffer(E, std::vector<T>(N, V)) {}
  ~DeviceBuffer() { llvm::consumeError(E.unregisterBuffer(Addr)); }
  Emulator &E;
  std::vector<T> Host;
  uint64_t Addr;
};

/// Launches with arguments given as (pointer | scalar) raw values in order.
struct Args {
  std::vector<std::vector<uint8_t>> Vals;
  template <class T> Args &add(T V) {
    std::vector<uint8_t> B(sizeof(T));
    std::memcpy(B.data(), &V, sizeof(T));
    Vals.push_back(B);
    return *this;
  }
};

inline llvm::Error launch(Emulator &E, const std::string &Kernel, Dim3 Grid, Dim3 Block,
                          const Args &A, uint32_t DynLds = 0) {
  auto K = E.getKernel(Kernel);
  if (!K)
    return K.takeError();
  KernargBuilder B(**K);
  for (const auto &V : A.Vals)
    B.add(V.data(), uint32_t(V.size()));
  if (!B.complete())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "argument mismatch");
  return E.launch(Kernel, {Grid, Block, DynLds}, B.bytes());
}

/// Expects an error whose text contains every fragment.
inline void expectErrorContains(llvm::Error Err, std::initializer_list<const char *> Frags) {
  ASSERT_TRUE(bool(Err)) << "expected an error";
  std::string Msg = llvm::toString(std::move(Err));
  for (const char *F : Frags)
    EXPECT_NE(Msg.find(F), std::string::npos) << "missing '" << F << "' in:\n" << Msg;
}

} // namespace moegen::emu::test

#endif
