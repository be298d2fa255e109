//===- FrameSlots.cpp -----------------------------------------------------===//
#include "emulator/FrameSlots.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Instructions.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <queue>
#include <tuple>

using namespace llvm;

namespace moegen::emu {

namespace {

/// Where each value is live, as one range of layout positions (the hull of
/// its live points: a superset of where it is live, which is safe).
class LiveRanges {
public:
  LiveRanges(const Function &F, ArrayRef<SlotRequest> Requests);
  uint32_t lo(unsigned V) const { return Lo[V]; }
  uint32_t hi(unsigned V) const { return Hi[V]; }

private:
  void cover(unsigned V, uint32_t At) {
    Lo[V] = std::min(Lo[V], At);
    Hi[V] = std::max(Hi[V], At);
  }
  /// Block-level liveness (SSA: phi operands are live out of their
  /// predecessor, a phi is defined at its block's entry).
  void solve(const std::vector<const BasicBlock *> &Blocks,
             const DenseMap<const BasicBlock *, unsigned> &BlockId);

  std::vector<uint32_t> Lo, Hi;
  std::vector<uint32_t> First, Last; // positions of each block's first and last instruction
  std::vector<BitVector> Def, UpUse, PhiDef, PhiOut, LiveIn, LiveOut;
};

LiveRanges::LiveRanges(const Function &F, ArrayRef<SlotRequest> Requests)
    : Lo(Requests.size(), ~0u), Hi(Requests.size(), 0) {
  const unsigned N = unsigned(Requests.size());
  DenseMap<const Value *, unsigned> Id;
  for (unsigned V = 0; V < N; ++V)
    Id[Requests[V].Value] = V;
  DenseMap<const BasicBlock *, unsigned> BlockId;
  std::vector<const BasicBlock *> Blocks;
  DenseMap<const Instruction *, uint32_t> Pos;
  uint32_t At = 0;
  for (const BasicBlock &BB : F) {
    BlockId[&BB] = unsigned(Blocks.size());
    Blocks.push_back(&BB);
    First.push_back(At);
    for (const Instruction &I : BB)
      Pos[&I] = At++;
    Last.push_back(At - 1);
  }
  const unsigned NB = unsigned(Blocks.size());
  for (auto *Sets : {&Def, &UpUse, &PhiDef, &PhiOut, &LiveIn, &LiveOut})
    Sets->assign(NB, BitVector(N));

  for (unsigned B = 0; B < NB; ++B)
    for (const Instruction &I : *Blocks[B]) {
      auto Self = Id.find(&I);
      if (Self != Id.end()) {
        cover(Self->second, Pos[&I]);
        Def[B].set(Self->second);
      }
      if (auto *Phi = dyn_cast<PHINode>(&I)) {
        for (unsigned K = 0; K < Phi->getNumIncomingValues(); ++K) {
          const unsigned Pred = BlockId.lookup(Phi->getIncomingBlock(K));
          auto In = Id.find(Phi->getIncomingValue(K));
          if (In != Id.end())
            PhiOut[Pred].set(In->second);
          if (Self != Id.end()) // the edge move writes the phi there
            cover(Self->second, Last[Pred]);
        }
        if (Self != Id.end())
          PhiDef[B].set(Self->second);
        continue;
      }
      for (const Value *Op : I.operands()) {
        auto It = Id.find(Op);
        if (It == Id.end())
          continue;
        cover(It->second, Pos[&I]);
        if (cast<Instruction>(Op)->getParent() != Blocks[B])
          UpUse[B].set(It->second);
      }
    }
  solve(Blocks, BlockId);
  for (unsigned B = 0; B < NB; ++B) {
    for (unsigned V : LiveIn[B].set_bits())
      cover(V, First[B]);
    for (unsigned V : LiveOut[B].set_bits())
      cover(V, Last[B]);
  }
  for (unsigned V = 0; V < N; ++V)
    if (Requests[V].Pinned) {
      Lo[V] = 0;
      Hi[V] = ~0u;
    }
}

void LiveRanges::solve(const std::vector<const BasicBlock *> &Blocks,
                       const DenseMap<const BasicBlock *, unsigned> &BlockId) {
  const unsigned NB = unsigned(Blocks.size());
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (unsigned B = NB; B-- > 0;) {
      BitVector Out = PhiOut[B];
      for (const BasicBlock *Succ : successors(Blocks[B])) {
        const unsigned S = BlockId.lookup(Succ);
        BitVector Through = LiveIn[S];
        Through.reset(PhiDef[S]);
        Out |= Through;
      }
      BitVector In = Out;
      In.reset(Def[B]);
      In |= UpUse[B];
      In |= PhiDef[B];
      if (Out != LiveOut[B] || In != LiveIn[B]) {
        LiveOut[B] = std::move(Out);
        LiveIn[B] = std::move(In);
        Changed = true;
      }
    }
  }
}

} // namespace

uint32_t packFrameSlots(const Function &F, ArrayRef<SlotRequest> Requests,
                        std::vector<uint32_t> &Offsets) {
  const unsigned N = unsigned(Requests.size());
  LiveRanges Ranges(F, Requests);
  std::vector<unsigned> Order(N);
  std::iota(Order.begin(), Order.end(), 0u);
  std::sort(Order.begin(), Order.end(), [&](unsigned A, unsigned B) {
    return std::pair(Ranges.lo(A), A) < std::pair(Ranges.lo(B), B);
  });
  // Linear scan: a value takes bytes of its size that a value whose range
  // ended before its own began gave back (the latest first), or new bytes.
  using Held = std::tuple<uint32_t, uint32_t, uint32_t>; // range end, offset, size
  std::priority_queue<Held, std::vector<Held>, std::greater<Held>> Active;
  std::map<uint32_t, std::vector<uint32_t>> Free;
  uint32_t End = 0;
  Offsets.assign(N, 0);
  for (unsigned V : Order) {
    while (!Active.empty() && std::get<0>(Active.top()) < Ranges.lo(V)) {
      Free[std::get<2>(Active.top())].push_back(std::get<1>(Active.top()));
      Active.pop();
    }
    const uint32_t Size = (std::max(Requests[V].Bytes, 1u) + 7) & ~7u;
    std::vector<uint32_t> &Spare = Free[Size];
    uint32_t Off;
    if (!Spare.empty()) {
      Off = Spare.back();
      Spare.pop_back();
    } else {
      Off = End;
      End += Size;
    }
    Offsets[V] = Off;
    Active.push({Ranges.hi(V), Off, Size});
  }
  return End;
}

} // namespace moegen::emu
