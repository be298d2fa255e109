//===- FrameSlotsTest.cpp - Shared frame bytes never clobber a live value -===//
//
// packFrameSlots lets SSA values share frame bytes. The check here walks the
// control flow itself: from every use of a value back to its definition,
// along every path, no instruction (and no phi, written on entering its
// block) may write bytes of the value; an instruction's result never shares
// bytes with its operands.
//
//===----------------------------------------------------------------------===//
#include "emulator/FrameSlots.h"

#include "EmuTestUtil.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Support/SourceMgr.h"

#include "gtest/gtest.h"

using namespace llvm;
using namespace moegen::emu;

namespace {

struct Packed {
  std::vector<SlotRequest> Requests;
  std::vector<uint32_t> Offsets;
  uint32_t Bytes = 0;
  uint32_t Unshared = 0; // the bytes without sharing
};

std::string str(const Value &V) {
  std::string S;
  raw_string_ostream OS(S);
  OS << V;
  return S;
}

uint32_t slotBytes(const SlotRequest &R) { return (std::max(R.Bytes, 1u) + 7) & ~7u; }

Packed pack(const Function &F, const SmallPtrSetImpl<const Value *> *Pinned = nullptr) {
  Packed P;
  const DataLayout &DL = F.getParent()->getDataLayout();
  for (const BasicBlock &BB : F)
    for (const Instruction &I : BB)
      if (!I.getType()->isVoidTy() && !isa<AllocaInst>(I)) {
        P.Requests.push_back(
            {&I, uint32_t(DL.getTypeStoreSize(I.getType())), Pinned && Pinned->count(&I)});
        P.Unshared += slotBytes(P.Requests.back());
      }
  P.Bytes = packFrameSlots(F, P.Requests, P.Offsets);
  return P;
}

/// The check described at the top, for every value of F; returns the number
/// of (use, writer) pairs it looked at.
size_t expectNoClobber(const Function &F, const Packed &P) {
  DenseMap<const Value *, unsigned> Id;
  for (unsigned V = 0; V < P.Requests.size(); ++V)
    Id[P.Requests[V].Value] = V;
  auto disjoint = [&](unsigned A, unsigned B) {
    return P.Offsets[A] + slotBytes(P.Requests[A]) <= P.Offsets[B] ||
           P.Offsets[B] + slotBytes(P.Requests[B]) <= P.Offsets[A];
  };
  size_t Checked = 0;
  for (unsigned V = 0; V < P.Requests.size(); ++V) {
    const Instruction *Def = P.Requests[V].Value;
    EXPECT_LE(P.Offsets[V] + slotBytes(P.Requests[V]), P.Bytes);
    auto writer = [&](const Instruction &W, const char *How) {
      auto It = Id.find(&W);
      if (It == Id.end() || It->second == V)
        return;
      ++Checked;
      EXPECT_TRUE(disjoint(V, It->second))
          << F.getName().str() << ": " << How << " " << str(W) << " clobbers " << str(*Def);
    };
    for (const Use &U : Def->uses()) {
      const auto *User = cast<Instruction>(U.getUser());
      // Walk back from the use: in its block, then through predecessors
      // (entered from their end) until the definition.
      const BasicBlock *Start;
      BasicBlock::const_reverse_iterator From;
      if (auto *Phi = dyn_cast<PHINode>(User)) {
        Start = Phi->getIncomingBlock(U);
        From = Start->rbegin();
      } else {
        writer(*User, "the user's result");
        Start = User->getParent();
        From = ++User->getReverseIterator();
      }
      SmallPtrSet<const BasicBlock *, 16> Entered;
      std::vector<std::pair<const BasicBlock *, BasicBlock::const_reverse_iterator>> Work = {
          {Start, From}};
      while (!Work.empty()) {
        auto [BB, It] = Work.back();
        Work.pop_back();
        bool Reached = false;
        for (; It != BB->rend() && !Reached; ++It) {
          if (&*It == Def)
            Reached = true;
          else if (!isa<PHINode>(*It))
            writer(*It, "instruction");
        }
        if (Reached)
          continue;
        // The block's phis were written on entering it (after the definition
        // unless the value is one of them).
        if (isa<PHINode>(Def) && Def->getParent() == BB)
          continue;
        for (const PHINode &Phi : BB->phis())
          writer(Phi, "phi");
        for (const BasicBlock *Pred : predecessors(BB))
          if (Entered.insert(Pred).second)
            Work.push_back({Pred, Pred->rbegin()});
      }
    }
  }
  return Checked;
}

std::unique_ptr<Module> parse(LLVMContext &Ctx, const std::string &File) {
  SMDiagnostic Err;
  std::unique_ptr<Module> M = parseIRFile(moegen::emu::test::kernelPath(File), Err, Ctx);
  if (!M)
    ADD_FAILURE() << File << ": " << Err.getMessage().str();
  return M;
}

} // namespace

// Every kernel of the emulator's test files, production-shaped ones (an
// unrolled bf16 GEMM, an MXFP4 loop, a scalar loop) included.
TEST(FrameSlots, NoLiveValueIsClobbered) {
  for (const char *File : {"basic.ll", "bf16_gemm.ll", "convert.ll", "crosslane.ll", "fptrunc.ll",
                           "lds_ops.ll", "mfma.ll", "mxfp4_loop.ll", "scalar_loop.ll"}) {
    LLVMContext Ctx;
    std::unique_ptr<Module> M = parse(Ctx, File);
    if (!M)
      continue;
    for (const Function &F : *M) {
      if (F.isDeclaration())
        continue;
      Packed P = pack(F);
      size_t Checked = expectNoClobber(F, P);
      EXPECT_LE(P.Bytes, P.Unshared) << F.getName().str();
      if (F.getName() == "bf16_gemm" || F.getName() == "mxfp4_loop") {
        EXPECT_GT(Checked, 100u) << F.getName().str();
        // The point of it: a frame well below one slot per value.
        EXPECT_LT(P.Bytes * 3, P.Unshared * 2)
            << F.getName().str() << ": " << P.Bytes << " of " << P.Unshared << " bytes";
      }
    }
  }
}

// A loop: the value defined before it and used after it stays live through
// every iteration, and the loop's phis (swapped each iteration, a parallel
// copy) keep bytes apart from it and from each other.
TEST(FrameSlots, LoopCarriedAndSwappedValues) {
  LLVMContext Ctx;
  SMDiagnostic Err;
  std::unique_ptr<Module> M = parseAssemblyString(R"(
define i32 @f(i32 %n, i32 %x) {
entry:
  %keep = mul i32 %x, 3
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %a = phi i32 [ 1, %entry ], [ %b, %loop ]
  %b = phi i32 [ 2, %entry ], [ %a, %loop ]
  %t1 = add i32 %a, %i
  %t2 = mul i32 %t1, %t1
  %next = add i32 %i, 1
  %done = icmp eq i32 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  %r1 = add i32 %t2, %keep
  %r2 = add i32 %r1, %b
  ret i32 %r2
}
)",
                                                  Err, Ctx);
  ASSERT_TRUE(M) << Err.getMessage().str();
  const Function &F = *M->getFunction("f");
  Packed P = pack(F);
  EXPECT_GT(expectNoClobber(F, P), 10u);
  auto offsetOf = [&](StringRef Name) {
    for (size_t V = 0; V < P.Requests.size(); ++V)
      if (P.Requests[V].Value->getName() == Name)
        return P.Offsets[V];
    ADD_FAILURE() << "no value " << Name.str();
    return 0u;
  };
  for (StringRef Other : {"i", "a", "b", "t1", "t2", "next", "done"})
    EXPECT_NE(offsetOf("keep"), offsetOf(Other)) << Other.str();
  EXPECT_NE(offsetOf("a"), offsetOf("b"));
  // Short-lived values do share: %t1 dies at %t2, and %r1 comes after both.
  EXPECT_LT(P.Bytes, P.Unshared);
}

// A pinned value keeps bytes no other value ever uses.
TEST(FrameSlots, PinnedValueKeepsItsBytes) {
  LLVMContext Ctx;
  std::unique_ptr<Module> M = parse(Ctx, "scalar_loop.ll");
  ASSERT_TRUE(M);
  const Function *F = nullptr;
  for (const Function &G : *M)
    if (!G.isDeclaration())
      F = &G;
  ASSERT_TRUE(F);
  const Instruction *First = nullptr;
  for (const Instruction &I : F->getEntryBlock())
    if (!I.getType()->isVoidTy() && !isa<AllocaInst>(I)) {
      First = &I;
      break;
    }
  ASSERT_TRUE(First);
  SmallPtrSet<const Value *, 1> Pinned;
  Pinned.insert(First);
  Packed P = pack(*F, &Pinned);
  const uint32_t Lo = P.Offsets[0], Hi = Lo + slotBytes(P.Requests[0]);
  ASSERT_EQ(P.Requests[0].Value, First);
  for (size_t V = 1; V < P.Requests.size(); ++V)
    EXPECT_TRUE(P.Offsets[V] + slotBytes(P.Requests[V]) <= Lo || Hi <= P.Offsets[V])
        << str(*P.Requests[V].Value);
}
