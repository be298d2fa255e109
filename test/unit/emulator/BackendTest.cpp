//===- BackendTest.cpp - The emu runtime backend ---------------------------===//
#include "EmuTestUtil.h"

#include "runtime/backend/EmuBackend.h"

#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace moegen;
using namespace moegen::runtime;

namespace {
CodeBundle bundleFrom(const std::string &File) {
  llvm::LLVMContext Ctx;
  llvm::SMDiagnostic Diag;
  auto M = llvm::parseIRFile(emu::test::kernelPath(File), Diag, Ctx);
  EXPECT_TRUE(M) << Diag.getMessage().str();
  CodeBundle B;
  B.Name = File;
  if (!M)
    return B;
  llvm::SmallVector<char, 0> Buf;
  llvm::raw_svector_ostream OS(Buf);
  llvm::WriteBitcodeToFile(*M, OS);
  B.Bitcode.assign(Buf.begin(), Buf.end());
  return B;
}
} // namespace

TEST(EmuBackend, LoadAllocateCopyLaunch) {
  auto B = createEmuBackend();
  EXPECT_EQ(B->name(), "emu");
  auto Mod = B->loadCode(bundleFrom("basic.ll"));
  ASSERT_TRUE(bool(Mod)) << llvm::toString(Mod.takeError());
  auto K = B->getKernel(*Mod, "saxpy.kd");
  ASSERT_TRUE(bool(K)) << llvm::toString(K.takeError());
  EXPECT_EQ(K->KernargBytes, 32u); // 3 pointers, f32, i32
  const int N = 300;
  std::vector<float> A(N), Bv(N), Out(N);
  for (int I = 0; I < N; ++I) {
    A[I] = float(I);
    Bv[I] = 2.0f;
  }
  auto DA = B->allocate(N * 4), DB = B->allocate(N * 4), DO = B->allocate(N * 4);
  ASSERT_TRUE(DA && DB && DO);
  ASSERT_FALSE(bool(B->copyToDevice(*DA, A.data(), N * 4)));
  ASSERT_FALSE(bool(B->copyToDevice(*DB, Bv.data(), N * 4)));
  ASSERT_FALSE(bool(B->memset(*DO, 0xFF, N * 4)));
  KernargPacker P;
  P.add(*DA).add(*DB).add(*DO).add(0.5f).add(int32_t(N));
  ASSERT_FALSE(bool(B->launch(*K, {3, 1, 1}, {128, 1, 1}, 0, P.bytes())));
  ASSERT_FALSE(bool(B->synchronize()));
  ASSERT_FALSE(bool(B->copyToHost(Out.data(), *DO, N * 4)));
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(Out[I], 0.5f * float(I) + 2.0f);
  EXPECT_GT(emulatorOf(*B)->lastStats().LaneInstructions, 0u);
  EXPECT_FALSE(bool(B->free(*DA)));
  emu::test::expectErrorContains(B->free(*DA), {"not an allocation"});
  emu::test::expectErrorContains(B->copyToHost(Out.data(), *DB, N * 4 + 4),
                                 {"outside every allocation"});
}

TEST(EmuBackend, LaunchErrorsReachSynchronize) {
  auto B = createEmuBackend();
  auto Mod = B->loadCode(bundleFrom("broken.ll"));
  ASSERT_TRUE(bool(Mod)) << llvm::toString(Mod.takeError());
  auto K = B->getKernel(*Mod, "oob_store");
  ASSERT_TRUE(bool(K));
  auto D = B->allocate(64 * 4);
  ASSERT_TRUE(bool(D));
  KernargPacker P;
  P.add(*D);
  emu::test::expectErrorContains(B->launch(*K, {1, 1, 1}, {64, 1, 1}, 0, P.bytes()),
                                 {"out-of-bounds global write"});
  emu::test::expectErrorContains(B->synchronize(), {"oob_store"});
  EXPECT_FALSE(bool(B->synchronize()));
  emu::test::expectErrorContains(B->getKernel(*Mod, "nope").takeError(), {"no kernel named"});
  emu::test::expectErrorContains(B->loadCode(CodeBundle{}).takeError(), {"no LLVM bitcode"});
}

TEST(EmuBackend, CannotTimeAndSaysSo) {
  auto B = createEmuBackend();
  emu::test::expectErrorContains(B->createEvent().takeError(),
                                 {"emu backend: cannot time kernels", "cuda or hip backend"});
  emu::test::expectErrorContains(B->recordEvent(EventHandle{0}), {"emu backend: cannot time"});
  emu::test::expectErrorContains(B->elapsedMs(EventHandle{0}, EventHandle{1}).takeError(),
                                 {"emu backend: cannot time"});
}

TEST(EmuBackend, LeavesKernelResourcesToTheCodeObject) {
  auto B = createEmuBackend();
  KernelHandle K;
  K.Symbol = "moe_sort_e8_k2_bm32";
  emu::test::expectErrorContains(B->kernelResources(K).takeError(),
                                 {"emu backend: does not report the resources of kernel "
                                  "'moe_sort_e8_k2_bm32'",
                                  "code object's metadata"});
}

TEST(EmuBackend, HasNoGraphsAndSaysSo) {
  auto B = createEmuBackend();
  bool Recorded = false;
  auto G = B->captureGraph([&] {
    Recorded = true;
    return llvm::Error::success();
  });
  emu::test::expectErrorContains(G.takeError(), {"emu backend: device graphs are not supported"});
  EXPECT_FALSE(Recorded); // nothing is run in place of a capture
  EXPECT_FALSE(B->capturing());
  emu::test::expectErrorContains(B->launchGraph(GraphHandle{0}),
                                 {"emu backend: device graphs are not supported"});
  emu::test::expectErrorContains(B->destroyGraph(GraphHandle{0}),
                                 {"emu backend: device graphs are not supported"});
}
