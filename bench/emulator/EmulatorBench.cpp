//===- EmulatorBench.cpp - Emulator throughput in lane-instructions/second --===//
//
//   moegen-bench-emulator [kernel-dir]
//
// Runs the emulator test kernels that look like production code (a bf16
// MFMA GEMM loop with LDS traffic and barriers, an MXFP4 scaled-MFMA loop,
// a scalar per-lane loop) and
// prints lane-instructions per second with all checks on and off.
//
//===----------------------------------------------------------------------===//
#include "emulator/Emulator.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

using namespace moegen::emu;
using llvm::outs;

namespace {

struct Result {
  double Seconds = 0;
  Stats S;
};

template <class Fn> bool timeIt(Emulator &E, Fn Launch, Result &R) {
  auto T0 = std::chrono::steady_clock::now();
  if (llvm::Error Err = Launch()) {
    llvm::errs() << llvm::toString(std::move(Err)) << "\n";
    return false;
  }
  R.Seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - T0).count();
  R.S = E.lastStats();
  return true;
}

void row(const std::string &Name, const std::string &Checks, const Result &R) {
  double Rate = double(R.S.LaneInstructions) / R.Seconds;
  outs() << llvm::format("%-28s %-6s %14llu %10llu %9.3f %12.1f\n", Name.c_str(), Checks.c_str(),
                         (unsigned long long)R.S.LaneInstructions, (unsigned long long)R.S.WaveOps,
                         R.Seconds, Rate / 1e6);
}

bool benchGemm(const std::string &Dir, bool Checks) {
  Options O;
  O.CheckLdsRaces = O.CheckLdsUninit = O.CheckBarrierFences = Checks;
  Emulator E(O);
  if (llvm::Error Err = E.loadIRFile(Dir + "/bf16_gemm.ll")) {
    llvm::errs() << llvm::toString(std::move(Err)) << "\n";
    return false;
  }
  const int K = 4096, Iters = 128, Groups = 16;
  std::vector<uint16_t> A(16 * K, 0x3F80), B(K * 16, 0x3F80);
  std::vector<float> C(256);
  uint64_t DA = E.registerBuffer(A.data(), A.size() * 2);
  uint64_t DB = E.registerBuffer(B.data(), B.size() * 2);
  uint64_t DC = E.registerBuffer(C.data(), C.size() * 4);
  auto K0 = E.getKernel("bf16_gemm");
  if (!K0) {
    llvm::errs() << llvm::toString(K0.takeError()) << "\n";
    return false;
  }
  KernargBuilder Args(**K0);
  Args.addPointer(DA).addPointer(DB).addPointer(DC).addI64(Iters);
  Result R;
  if (!timeIt(
          E,
          [&] {
            return E.launch("bf16_gemm", {{Groups, 1, 1}, {64, 1, 1}, 0}, Args.bytes());
          },
          R))
    return false;
  if (C[0] != float(32 * Iters))
    llvm::errs() << "warning: unexpected GEMM result " << C[0] << "\n";
  row("bf16_gemm (MFMA+LDS loop)", Checks ? "on" : "off", R);
  return true;
}

bool benchMxFp4(const std::string &Dir, bool Checks) {
  Options O;
  O.CheckLdsRaces = O.CheckLdsUninit = O.CheckBarrierFences = Checks;
  Emulator E(O);
  if (llvm::Error Err = E.loadIRFile(Dir + "/mxfp4_loop.ll")) {
    llvm::errs() << llvm::toString(std::move(Err)) << "\n";
    return false;
  }
  const int Iters = 64, Groups = 16;
  std::vector<uint8_t> A(65536, 0x22), B(65536, 0x22), SA(16384, 127), SB(16384, 127), Q(128);
  std::vector<float> D(256);
  uint64_t DA = E.registerBuffer(A.data(), A.size());
  uint64_t DB = E.registerBuffer(B.data(), B.size());
  uint64_t DSA = E.registerBuffer(SA.data(), SA.size());
  uint64_t DSB = E.registerBuffer(SB.data(), SB.size());
  uint64_t DD = E.registerBuffer(D.data(), D.size() * 4);
  uint64_t DQ = E.registerBuffer(Q.data(), Q.size());
  auto K0 = E.getKernel("mxfp4_loop");
  if (!K0) {
    llvm::errs() << llvm::toString(K0.takeError()) << "\n";
    return false;
  }
  KernargBuilder Args(**K0);
  Args.addPointer(DA).addPointer(DB).addPointer(DSA).addPointer(DSB).addPointer(DD).addPointer(DQ);
  Args.addI64(Iters);
  Result R;
  if (!timeIt(
          E,
          [&] {
            return E.launch("mxfp4_loop", {{Groups, 1, 1}, {64, 1, 1}, 0}, Args.bytes());
          },
          R))
    return false;
  if (D[0] != float(128 * Iters))
    llvm::errs() << "warning: unexpected MXFP4 result " << D[0] << "\n";
  row("mxfp4_loop (scaled MFMA)", Checks ? "on" : "off", R);
  return true;
}

bool benchScalar(const std::string &Dir, bool Checks, unsigned Threads = 1) {
  Options O;
  O.CheckLdsRaces = O.CheckLdsUninit = O.CheckBarrierFences = Checks;
  O.Threads = Threads;
  Emulator E(O);
  if (llvm::Error Err = E.loadIRFile(Dir + "/scalar_loop.ll")) {
    llvm::errs() << llvm::toString(std::move(Err)) << "\n";
    return false;
  }
  std::vector<float> Out(1048576);
  uint64_t D = E.registerBuffer(Out.data(), Out.size() * 4);
  auto K0 = E.getKernel("scalar_loop");
  if (!K0) {
    llvm::errs() << llvm::toString(K0.takeError()) << "\n";
    return false;
  }
  KernargBuilder Args(**K0);
  Args.addPointer(D).addI64(2000);
  Result R;
  if (!timeIt(
          E,
          [&] {
            return E.launch("scalar_loop", {{64, 1, 1}, {256, 1, 1}, 0}, Args.bytes());
          },
          R))
    return false;
  row(Threads > 1 ? "scalar_loop, " + std::to_string(Threads) + " threads"
                  : "scalar_loop (ALU loop)",
      Checks ? "on" : "off", R);
  return true;
}

} // namespace

int main(int Argc, char **Argv) {
  std::string Dir = Argc > 1 ? Argv[1] : MOEGEN_EMU_KERNEL_DIR;
  outs() << llvm::format("%-28s %-6s %14s %10s %9s %12s\n", "kernel", "checks", "lane-insts",
                         "wave-ops", "seconds", "M lane-ins/s");
  bool Ok = true;
  for (bool Checks : {true, false}) {
    Ok &= benchGemm(Dir, Checks);
    Ok &= benchMxFp4(Dir, Checks);
    Ok &= benchScalar(Dir, Checks);
  }
  Ok &= benchScalar(Dir, true, 2);
  return Ok ? 0 : 1;
}
