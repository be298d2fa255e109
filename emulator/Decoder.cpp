//===- Decoder.cpp - llvm::Function -> Program ------------------------------===//
//
// Operand conventions of the decoded instructions (Inst fields):
//   binary:   Dst = A op B, element kind Ty/Bits, N elements, Sub = opcode
//   compare:  Pred = predicate, Ty/Bits = operand kind
//   cast:     Ty/Bits = destination, Sub/Aux = source kind/bits
//   load:     Dst <- [A], Pred = address space, Aux = memory bytes,
//             Aux2 = register bytes, Tab = repack table for sub-byte vectors
//   store:    [A] <- B, same fields
//   atomics:  A = pointer, B = operand (C = new value for cmpxchg), Sub = op
//
//===----------------------------------------------------------------------===//
#include "emulator/Decoder.h"
#include "emulator/FrameSlots.h"

#include "emulator/Handlers.h"
#include "emulator/Ops.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Analysis/PostDominators.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GetElementPtrTypeIterator.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsAMDGPU.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace moegen::emu {

unsigned elemBytes(EK K, unsigned Bits) {
  switch (K) {
  case EK::I1:
  case EK::I8:
    return 1;
  case EK::I16:
  case EK::F16:
  case EK::BF16:
    return 2;
  case EK::I32:
  case EK::F32:
  case EK::P32:
    return 4;
  case EK::I64:
  case EK::F64:
  case EK::P64:
    return 8;
  case EK::IN:
    return Bits <= 8 ? 1 : Bits <= 16 ? 2 : Bits <= 32 ? 4 : 8;
  case EK::PBuf:
    return 24;
  case EK::Rsrc:
    return 16;
  case EK::Agg:
    return 0;
  }
  return 0;
}

static uint32_t align8(uint32_t X) { return (X + 7) & ~7u; }

Decoder::Decoder(const Function &F, const DenseMap<const GlobalVariable *, uint64_t> &GlobalAddrs)
    : F(F), GlobalAddrs(GlobalAddrs), P(std::make_unique<Program>()) {}

const DataLayout &Decoder::dataLayout() const { return F.getParent()->getDataLayout(); }

Error Decoder::unsupported(const Instruction &I, StringRef What) {
  std::string S;
  raw_string_ostream OS(S);
  OS << "kernel '" << F.getName() << "': unsupported " << What << " in: " << I;
  return createStringError(inconvertibleErrorCode(), S);
}

static Error typeError(const Function &F, Type *T) {
  std::string S;
  raw_string_ostream OS(S);
  OS << "kernel '" << F.getName() << "': unsupported type " << *T;
  return createStringError(inconvertibleErrorCode(), S);
}

uint32_t Decoder::aggregateOffset(Type *T, ArrayRef<unsigned> Indices) {
  uint32_t Off = 0;
  for (unsigned Idx : Indices) {
    if (auto *ST = dyn_cast<StructType>(T)) {
      for (unsigned K = 0; K < Idx; ++K)
        Off = align8(Off) + typeOf(ST->getElementType(K))->Bytes;
      Off = align8(Off);
      T = ST->getElementType(Idx);
    } else {
      auto *AT = cast<ArrayType>(T);
      Off += Idx * align8(typeOf(AT->getElementType())->Bytes);
      T = AT->getElementType();
    }
  }
  return Off;
}

Expected<VT> Decoder::typeOf(Type *T) {
  VT R;
  if (auto *ST = dyn_cast<StructType>(T)) {
    uint32_t Off = 0;
    for (Type *E : ST->elements()) {
      auto EV = typeOf(E);
      if (!EV)
        return EV.takeError();
      Off = align8(Off) + EV->Bytes;
    }
    R.K = EK::Agg;
    R.Bytes = align8(Off);
    R.Plain = false;
    return R;
  }
  if (auto *AT = dyn_cast<ArrayType>(T)) {
    auto EV = typeOf(AT->getElementType());
    if (!EV)
      return EV.takeError();
    R.K = EK::Agg;
    R.Bytes = align8(EV->Bytes) * uint32_t(AT->getNumElements());
    R.Plain = false;
    return R;
  }
  Type *ET = T;
  if (auto *VTy = dyn_cast<FixedVectorType>(T)) {
    R.N = uint16_t(VTy->getNumElements());
    ET = VTy->getElementType();
  } else if (isa<ScalableVectorType>(T)) {
    return typeError(F, T);
  }
  if (auto *IT = dyn_cast<IntegerType>(ET)) {
    unsigned W = IT->getBitWidth();
    if (W > 64)
      return typeError(F, T);
    R.Bits = uint8_t(W);
    R.K = W == 1    ? EK::I1
          : W == 8  ? EK::I8
          : W == 16 ? EK::I16
          : W == 32 ? EK::I32
          : W == 64 ? EK::I64
                    : EK::IN;
    R.Plain = W % 8 == 0 && (W & (W - 1)) == 0;
  } else if (ET->isHalfTy()) {
    R.K = EK::F16;
  } else if (ET->isBFloatTy()) {
    R.K = EK::BF16;
  } else if (ET->isFloatTy()) {
    R.K = EK::F32;
  } else if (ET->isDoubleTy()) {
    R.K = EK::F64;
  } else if (auto *PT = dyn_cast<PointerType>(ET)) {
    switch (PT->getAddressSpace()) {
    case 0:
    case 1:
    case 4:
      R.K = EK::P64;
      R.Bits = 64;
      break;
    case 3:
    case 5:
      R.K = EK::P32;
      R.Bits = 32;
      break;
    case 7:
      R.K = EK::PBuf;
      R.Plain = false;
      break;
    case 8:
      R.K = EK::Rsrc;
      break;
    default:
      return typeError(F, T);
    }
  } else {
    return typeError(F, T);
  }
  R.Bytes = elemBytes(R.K, R.Bits) * R.N;
  R.MemBytes = uint32_t(dataLayout().getTypeStoreSize(T));
  if (R.K == EK::I1)
    R.Plain = R.N == 1;
  return R;
}

uint32_t Decoder::allocFrame(uint32_t Bytes) {
  uint32_t Off = align8(uint32_t(Image().size()));
  Image().resize(Off + align8(std::max(Bytes, 1u)), 0);
  return Off;
}

uint32_t Decoder::addInts(ArrayRef<uint32_t> Vals) {
  uint32_t Off = uint32_t(P->Ints.size());
  P->Ints.insert(P->Ints.end(), Vals.begin(), Vals.end());
  return Off;
}

Error Decoder::writeConst(const Constant *C, Type *T, uint32_t Off) {
  auto TV = typeOf(T);
  if (!TV)
    return TV.takeError();
  if (isa<UndefValue>(C) || isa<ConstantAggregateZero>(C) || isa<ConstantPointerNull>(C))
    return Error::success(); // image is zero-initialized
  if (auto *ST = dyn_cast<StructType>(T)) {
    uint32_t FOff = 0;
    for (unsigned I = 0; I < ST->getNumElements(); ++I) {
      auto EV = typeOf(ST->getElementType(I));
      FOff = align8(FOff);
      if (Error E = writeConst(C->getAggregateElement(I), ST->getElementType(I), Off + FOff))
        return E;
      FOff += EV->Bytes;
    }
    return Error::success();
  }
  if (auto *AT = dyn_cast<ArrayType>(T)) {
    auto EV = typeOf(AT->getElementType());
    for (unsigned I = 0; I < AT->getNumElements(); ++I)
      if (Error E = writeConst(C->getAggregateElement(I), AT->getElementType(),
                               Off + I * align8(EV->Bytes)))
        return E;
    return Error::success();
  }
  if (auto *VTy = dyn_cast<FixedVectorType>(T)) {
    unsigned EB = TV->Bytes / TV->N;
    for (unsigned I = 0; I < VTy->getNumElements(); ++I)
      if (Error E = writeConst(C->getAggregateElement(I), VTy->getElementType(), Off + I * EB))
        return E;
    return Error::success();
  }
  uint8_t *Dst = Image().data() + Off;
  if (auto *CI = dyn_cast<ConstantInt>(C)) {
    writeInt(Dst, TV->Bytes, CI->getValue().getZExtValue());
    return Error::success();
  }
  if (auto *CF = dyn_cast<ConstantFP>(C)) {
    uint64_t B = CF->getValueAPF().bitcastToAPInt().getZExtValue();
    writeInt(Dst, TV->Bytes, B);
    return Error::success();
  }
  if (auto *GV = dyn_cast<GlobalVariable>(C)) {
    if (GV->getAddressSpace() == 3) {
      auto It = LdsOffsets.find(GV);
      if (It == LdsOffsets.end())
        return createStringError(inconvertibleErrorCode(),
                                 "kernel '%s': LDS global '%s' has no offset",
                                 F.getName().str().c_str(), GV->getName().str().c_str());
      wr<uint32_t>(Image().data(), Off, It->second);
      return Error::success();
    }
    auto It = GlobalAddrs.find(GV);
    if (It == GlobalAddrs.end())
      return createStringError(
          inconvertibleErrorCode(), "kernel '%s': global '%s' in address space %u is not supported",
          F.getName().str().c_str(), GV->getName().str().c_str(), GV->getAddressSpace());
    wr<uint64_t>(Image().data(), Off, It->second);
    return Error::success();
  }
  if (auto *CE = dyn_cast<ConstantExpr>(C)) {
    // Evaluate once, now, with the same operations the kernel would run.
    Instruction *I = CE->getAsInstruction();
    Inst In;
    In.Dst = Off;
    Error E = Error::success();
    if (auto *GEP = dyn_cast<GetElementPtrInst>(I))
      E = emitGep(*GEP, In);
    else if (I->isCast())
      E = emitCast(*I, In);
    else
      E = createStringError(inconvertibleErrorCode(),
                            "kernel '%s': unsupported constant expression '%s'",
                            F.getName().str().c_str(), I->getOpcodeName());
    if (!E) {
      // Operands were allocated in the image (which may have moved): run the
      // operation on the image now.
      In.Tab = P->Ints.data() + In.Aux2;
      In.Fn.Pure(In, Image().data());
    }
    I->deleteValue();
    return E;
  }
  std::string S;
  raw_string_ostream OS(S);
  OS << "kernel '" << F.getName() << "': unsupported constant " << *C;
  return createStringError(inconvertibleErrorCode(), S);
}

Error Decoder::slots(std::initializer_list<std::pair<const Value *, uint32_t *>> List) {
  for (auto [V, Out] : List) {
    auto S = slot(V);
    if (!S)
      return S.takeError();
    *Out = *S;
  }
  return Error::success();
}

Expected<uint32_t> Decoder::slot(const Value *V) {
  auto It = Slots.find(V);
  if (It != Slots.end())
    return It->second;
  auto *C = dyn_cast<Constant>(V);
  if (!C) {
    std::string S;
    raw_string_ostream OS(S);
    OS << "kernel '" << F.getName() << "': unsupported operand " << *V;
    return createStringError(inconvertibleErrorCode(), S);
  }
  auto TV = typeOf(V->getType());
  if (!TV)
    return TV.takeError();
  uint32_t Off = allocFrame(TV->Bytes);
  if (Error E = writeConst(C, V->getType(), Off))
    return std::move(E);
  Slots[V] = Off;
  return Off;
}

/// Collects the addrspace(3) globals a function refers to.
static void collectLds(const Value *V, SmallPtrSetImpl<const GlobalVariable *> &Out,
                       SmallPtrSetImpl<const Value *> &Seen) {
  if (!Seen.insert(V).second)
    return;
  if (auto *GV = dyn_cast<GlobalVariable>(V)) {
    if (GV->getAddressSpace() == 3)
      Out.insert(GV);
    return;
  }
  if (auto *CE = dyn_cast<ConstantExpr>(V))
    for (const Value *Op : CE->operands())
      collectLds(Op, Out, Seen);
  else if (auto *CA = dyn_cast<ConstantAggregate>(V))
    for (const Value *Op : CA->operands())
      collectLds(Op, Out, Seen);
}

Error Decoder::layoutLds() {
  SmallPtrSet<const GlobalVariable *, 8> Used;
  SmallPtrSet<const Value *, 32> Seen;
  for (const BasicBlock &BB : F)
    for (const Instruction &I : BB)
      for (const Value *Op : I.operands())
        collectLds(Op, Used, Seen);
  // Keep module order for a stable layout; dynamic (zero-sized) LDS last.
  const DataLayout &DL = dataLayout();
  uint64_t Off = 0;
  std::vector<const GlobalVariable *> Dynamic;
  for (const GlobalVariable &GV : F.getParent()->globals()) {
    if (!Used.count(&GV))
      continue;
    uint64_t Size = DL.getTypeAllocSize(GV.getValueType());
    if (Size == 0) {
      Dynamic.push_back(&GV);
      continue;
    }
    // Only the alignment the IR guarantees (its own, else the type's ABI
    // one), so that an access relying on more is caught.
    uint64_t Align = GV.getAlign().value_or(DL.getABITypeAlign(GV.getValueType())).value();
    Off = (Off + Align - 1) / Align * Align;
    LdsOffsets[&GV] = uint32_t(Off);
    Off += Size;
  }
  Off = (Off + 15) & ~uint64_t(15);
  P->StaticLdsBytes = uint32_t(Off);
  P->DynLdsOffset = uint32_t(Off);
  for (const GlobalVariable *GV : Dynamic)
    LdsOffsets[GV] = uint32_t(Off);
  if (Off > P->MaxLdsBytes)
    return createStringError(inconvertibleErrorCode(),
                             "kernel '%s': static LDS of %llu bytes exceeds %u",
                             F.getName().str().c_str(), (unsigned long long)Off, P->MaxLdsBytes);
  return Error::success();
}

Error Decoder::layoutArgs() {
  const DataLayout &DL = dataLayout();
  uint64_t Off = 0;
  for (const Argument &A : F.args()) {
    Type *T = A.getType();
    auto TV = typeOf(T);
    if (!TV)
      return TV.takeError();
    if (!TV->Plain || A.hasByRefAttr())
      return createStringError(inconvertibleErrorCode(),
                               "kernel '%s': unsupported kernel argument type for argument %u",
                               F.getName().str().c_str(), A.getArgNo());
    uint64_t Align = DL.getABITypeAlign(T).value();
    Off = (Off + Align - 1) / Align * Align;
    ArgSlot S;
    S.KernargOffset = uint32_t(Off);
    S.Bytes = uint32_t(DL.getTypeAllocSize(T));
    S.FrameOffset = allocFrame(TV->Bytes);
    S.Ty = TV->K;
    S.AS = T->isPointerTy() ? uint8_t(T->getPointerAddressSpace()) : 0;
    Slots[&A] = S.FrameOffset;
    P->Args.push_back(S);
    Off += S.Bytes;
  }
  P->KernargBytes = uint32_t(Off);
  return Error::success();
}

Error Decoder::assignSlots() {
  const DataLayout &DL = dataLayout();
  std::vector<const AllocaInst *> Allocas;
  std::vector<SlotRequest> Requests;
  SmallPtrSet<const Value *, 8> ReadByOtherLanes;
  for (const BasicBlock &BB : F) {
    BlockIndex[&BB] = uint32_t(BlockIndex.size());
    for (const Instruction &I : BB) {
      // readlane reads its source lane's slot even while that lane is
      // inactive (elsewhere in the kernel): such a value keeps its bytes.
      if (auto *II = dyn_cast<IntrinsicInst>(&I))
        if (II->getIntrinsicID() == Intrinsic::amdgcn_readlane)
          ReadByOtherLanes.insert(II->getArgOperand(0));
      if (I.getType()->isVoidTy())
        continue;
      if (auto *AI = dyn_cast<AllocaInst>(&I)) {
        Allocas.push_back(AI);
        continue;
      }
      auto TV = typeOf(I.getType());
      if (!TV)
        return TV.takeError();
      Requests.push_back({&I, TV->Bytes});
    }
  }
  // SSA values share frame bytes where their live ranges do not overlap
  // (FrameSlots.h).
  for (SlotRequest &R : Requests)
    R.Pinned = ReadByOtherLanes.count(R.Value);
  std::vector<uint32_t> Offsets;
  const uint32_t Bytes = packFrameSlots(F, Requests, Offsets);
  const uint32_t Base = allocFrame(Bytes);
  for (size_t V = 0; V < Requests.size(); ++V)
    Slots[Requests[V].Value] = Base + Offsets[V];
  // Everything from here on is constant: frames copy only this part (and the
  // arguments) from the template; SSA values are written before being read.
  P->ConstStart = uint32_t(Image().size());
  uint64_t PrivOff = 0;
  for (const AllocaInst *AI : Allocas) {
    // Static private allocation: the pointer is a per-lane offset.
    auto *Cnt = dyn_cast<ConstantInt>(AI->getArraySize());
    if (!Cnt)
      return unsupported(*AI, "dynamic alloca");
    uint64_t Align = AI->getAlign().value();
    PrivOff = (PrivOff + Align - 1) / Align * Align;
    uint32_t Off = allocFrame(4);
    wr<uint32_t>(Image().data(), Off, uint32_t(PrivOff));
    PrivOff += DL.getTypeAllocSize(AI->getAllocatedType()) * Cnt->getZExtValue();
    Slots[AI] = Off;
  }
  P->PrivateBytes = uint32_t((PrivOff + 15) & ~15ull);
  return Error::success();
}

static bool isWgmma(const Value *V) {
  auto *CI = dyn_cast<CallInst>(V);
  auto *Asm = CI ? dyn_cast<InlineAsm>(CI->getCalledOperand()) : nullptr;
  return Asm && StringRef(Asm->getAsmString()).contains("wgmma.mma_async");
}

/// Instructions that only carry values on (a wgmma's accumulators among
/// them) without reading them as data.
static bool carriesValues(const Instruction &I) {
  return isa<PHINode>(I) || isa<ExtractValueInst>(I) || isa<InsertValueInst>(I);
}

/// The values that hold a wgmma's accumulators (NVPTX): its results, what
/// extractvalue takes of them, and the phis they flow through (a loop's
/// carried accumulators). Only other wgmmas may read them while a wgmma of
/// the warp is in flight (the PTX ISA leaves such reads undefined).
static DenseSet<const Value *> wgmmaAccumulators(const Function &F) {
  DenseSet<const Value *> Acc;
  for (const BasicBlock &BB : F)
    for (const Instruction &I : BB)
      if (isWgmma(&I))
        Acc.insert(&I);
  for (bool Grew = !Acc.empty(); Grew;) {
    Grew = false;
    for (const BasicBlock &BB : F)
      for (const Instruction &I : BB) {
        if (!carriesValues(I) || Acc.contains(&I))
          continue;
        if (llvm::any_of(I.operands(), [&](const Use &U) { return Acc.contains(U.get()); }))
          Grew |= Acc.insert(&I).second;
      }
  }
  return Acc;
}

/// Whether `I` reads an accumulator value as data: wgmmas (their tied
/// inputs) and the instructions that only carry the values (phis,
/// extractvalue, insertvalue) do not.
static bool readsAccumulator(const Instruction &I, const DenseSet<const Value *> &Acc) {
  if (Acc.empty() || isWgmma(&I) || carriesValues(I))
    return false;
  return llvm::any_of(I.operands(), [&](const Use &U) { return Acc.contains(U.get()); });
}

Expected<std::unique_ptr<Program>> Decoder::run() {
  P->Name = F.getName().str();
  P->F = &F;
  if (F.isDeclaration())
    return createStringError(inconvertibleErrorCode(), "kernel '%s' has no body", P->Name.c_str());
  P->Nvptx = F.getParent()->getTargetTriple().isNVPTX();
  Attribute Cpu = F.getFnAttribute("target-cpu");
  if (P->Nvptx) {
    if (Cpu.isStringAttribute() && Cpu.getValueAsString() != "sm_90a")
      return createStringError(inconvertibleErrorCode(),
                               "kernel '%s' is compiled for %s, not sm_90a", P->Name.c_str(),
                               Cpu.getValueAsString().str().c_str());
    P->WaveLanes = 32;
    P->MaxLdsBytes = 232448; // 227 KiB of shared memory a CTA on sm_90
  } else if (Cpu.isStringAttribute() && Cpu.getValueAsString() != "gfx950") {
    return createStringError(inconvertibleErrorCode(), "kernel '%s' is compiled for %s, not gfx950",
                             P->Name.c_str(), Cpu.getValueAsString().str().c_str());
  }
  if (Error E = layoutLds())
    return std::move(E);
  // Launch bounds the code was compiled for; the runner enforces them.
  Attribute FWG = F.getFnAttribute("amdgpu-flat-work-group-size");
  if (P->Nvptx) {
    // "nvvm.maxntid" / "nvvm.reqntid" = "X[,Y[,Z]]": a bound on (or the
    // exact) block shape.
    auto dims = [&](StringRef Key, uint32_t Out[3]) {
      Attribute A = F.getFnAttribute(Key);
      if (!A.isStringAttribute())
        return false;
      SmallVector<StringRef, 3> Parts;
      A.getValueAsString().split(Parts, ',');
      for (unsigned I = 0; I < 3; ++I)
        Out[I] = 1;
      for (unsigned I = 0; I < Parts.size() && I < 3; ++I)
        if (Parts[I].trim().getAsInteger(10, Out[I]))
          return false;
      return true;
    };
    Attribute Regs = F.getFnAttribute("nvvm.maxnreg");
    if (Regs.isStringAttribute())
      (void)Regs.getValueAsString().getAsInteger(10, P->MaxRegs);
    uint32_t Max[3];
    if (dims("nvvm.maxntid", Max))
      P->MaxFlatWorkGroup = Max[0] * Max[1] * Max[2];
    dims("nvvm.reqntid", P->ReqdWorkGroup);
  } else if (FWG.isStringAttribute()) {
    auto [Lo, Hi] = FWG.getValueAsString().split(',');
    unsigned A = 0, B = 0;
    if (!Lo.getAsInteger(10, A) && !Hi.getAsInteger(10, B)) {
      P->MinFlatWorkGroup = A;
      P->MaxFlatWorkGroup = B;
    }
  }
  if (MDNode *MD = F.getMetadata("reqd_work_group_size"))
    for (unsigned I = 0; I < 3 && I < MD->getNumOperands(); ++I)
      if (auto *C = mdconst::dyn_extract<ConstantInt>(MD->getOperand(I)))
        P->ReqdWorkGroup[I] = uint32_t(C->getZExtValue());
  if (Error E = layoutArgs())
    return std::move(E);
  P->ArgsEnd = uint32_t(Image().size());
  if (Error E = assignSlots())
    return std::move(E);
  {
    PostDominatorTree PDT(const_cast<Function &>(F));
    for (const BasicBlock &BB : F) {
      DomTreeNode *N = PDT.getNode(&BB);
      DomTreeNode *IDom = N ? N->getIDom() : nullptr;
      const BasicBlock *Join = IDom ? IDom->getBlock() : nullptr;
      Reconverge.push_back(Join ? BlockIndex.lookup(Join) : NoBlock);
    }
  }
  DenseSet<const Value *> Accumulators = wgmmaAccumulators(F);
  for (const BasicBlock &BB : F) {
    BlockStart.push_back(uint32_t(P->Code.size()));
    for (const Instruction &I : BB) {
      if (isa<PHINode>(I))
        continue;
      if (readsAccumulator(I, Accumulators)) {
        Inst Check;
        Check.Src = &I;
        Check.K = Kind::WaveOp;
        Check.Fn.Wave = reinterpret_cast<void *>(waveCheckAccumulatorRead);
        P->Code.push_back(Check);
      }
      if (Error E = I.isTerminator() ? decodeBlockEnd(I) : decodeInst(I))
        return std::move(E);
    }
  }
  // Edge targets were block indices; make them code indices.
  for (Edge &E : P->Edges)
    E.Target = BlockStart[E.Target];
  for (Inst &I : P->Code)
    if ((I.K == Kind::CondBr || I.K == Kind::Switch) && I.D != NoBlock)
      I.D = BlockStart[I.D];
  uint32_t TempBase = allocFrame(MaxTemp);
  for (Move &M : P->Moves)
    M.TempOff += TempBase;
  for (Inst &I : P->Code) {
    if (I.Tab)
      I.Tab = P->Ints.data() + (reinterpret_cast<uintptr_t>(I.Tab) - 1);
    I.K = fastKind(I);
  }
  P->FrameBytes = uint32_t(Image().size());
  return std::move(P);
}

Expected<uint32_t> Decoder::edgeTo(const BasicBlock *From, const BasicBlock *To) {
  Edge E;
  E.Target = BlockIndex.lookup(To);
  E.FirstMove = uint32_t(P->Moves.size());
  uint32_t TempOff = 0;
  SmallDenseSet<uint32_t, 8> Dsts;
  std::vector<uint32_t> Srcs;
  for (const PHINode &Phi : To->phis()) {
    auto Src = slot(Phi.getIncomingValueForBlock(From));
    if (!Src)
      return Src.takeError();
    auto TV = typeOf(Phi.getType());
    if (!TV)
      return TV.takeError();
    Move M{Slots.lookup(&Phi), *Src, TV->Bytes, TempOff};
    TempOff += align8(TV->Bytes);
    Dsts.insert(M.Dst);
    Srcs.push_back(M.Src);
    P->Moves.push_back(M);
  }
  E.NumMoves = uint32_t(P->Moves.size()) - E.FirstMove;
  for (uint32_t S : Srcs)
    if (Dsts.count(S))
      E.NeedsTemp = true;
  if (E.NeedsTemp)
    MaxTemp = std::max(MaxTemp, TempOff);
  P->Edges.push_back(E);
  return uint32_t(P->Edges.size() - 1);
}

Error Decoder::decodeBlockEnd(const Instruction &I) {
  Inst In;
  In.Src = &I;
  const BasicBlock *BB = I.getParent();
  In.D = Reconverge[BlockIndex.lookup(BB)]; // a block index until run() maps it
  if (auto *Br = dyn_cast<BranchInst>(&I)) {
    if (Br->isUnconditional()) {
      auto E = edgeTo(BB, Br->getSuccessor(0));
      if (!E)
        return E.takeError();
      In.K = Kind::Br;
      In.A = *E;
    } else {
      auto C = slot(Br->getCondition());
      auto T = C ? edgeTo(BB, Br->getSuccessor(0)) : Expected<uint32_t>(0u);
      auto Fa = T ? edgeTo(BB, Br->getSuccessor(1)) : Expected<uint32_t>(0u);
      if (!C)
        return C.takeError();
      if (!T)
        return T.takeError();
      if (!Fa)
        return Fa.takeError();
      In.K = Kind::CondBr;
      In.A = *C;
      In.B = *T;
      In.C = *Fa;
    }
  } else if (auto *Sw = dyn_cast<SwitchInst>(&I)) {
    auto C = slot(Sw->getCondition());
    if (!C)
      return C.takeError();
    auto TV = typeOf(Sw->getCondition()->getType());
    auto Def = edgeTo(BB, Sw->getDefaultDest());
    if (!Def)
      return Def.takeError();
    In.K = Kind::Switch;
    In.A = *C;
    In.B = *Def;
    In.Pred = uint8_t(TV->Bytes);
    In.Aux = uint32_t(P->Cases.size());
    for (auto &Case : Sw->cases()) {
      auto E = edgeTo(BB, Case.getCaseSuccessor());
      if (!E)
        return E.takeError();
      P->Cases.push_back({Case.getCaseValue()->getZExtValue(), *E});
    }
    In.Aux2 = uint32_t(P->Cases.size()) - In.Aux;
  } else if (isa<ReturnInst>(&I)) {
    In.K = Kind::Ret;
  } else if (isa<UnreachableInst>(&I)) {
    In.K = Kind::Unreachable;
  } else {
    return unsupported(I, "terminator");
  }
  P->Code.push_back(In);
  return Error::success();
}

Error Decoder::emitGep(const Instruction &I, Inst &In) {
  auto *GEP = cast<GetElementPtrInst>(&I);
  if (GEP->getType()->isVectorTy())
    return unsupported(I, "vector GEP");
  const DataLayout &DL = dataLayout();
  auto Base = slot(GEP->getPointerOperand());
  if (!Base)
    return Base.takeError();
  auto TV = typeOf(GEP->getType());
  if (!TV)
    return TV.takeError();
  unsigned IdxBits = DL.getIndexTypeSizeInBits(GEP->getType());
  std::vector<uint32_t> Tab = {0, 0, 0};
  int64_t Const = 0;
  unsigned NTerms = 0;
  for (gep_type_iterator GTI = gep_type_begin(GEP), E = gep_type_end(GEP); GTI != E; ++GTI) {
    const Value *Idx = GTI.getOperand();
    if (StructType *ST = GTI.getStructTypeOrNull()) {
      unsigned FieldNo = unsigned(cast<ConstantInt>(Idx)->getZExtValue());
      Const += int64_t(DL.getStructLayout(ST)->getElementOffset(FieldNo));
      continue;
    }
    uint64_t Scale = GTI.getSequentialElementStride(DL);
    if (auto *CI = dyn_cast<ConstantInt>(Idx)) {
      Const += CI->getSExtValue() * int64_t(Scale);
      continue;
    }
    if (Idx->getType()->isVectorTy())
      return unsupported(I, "vector GEP index");
    auto S = slot(Idx);
    if (!S)
      return S.takeError();
    unsigned Bits = std::min(Idx->getType()->getIntegerBitWidth(), IdxBits);
    // An index wider than the pointer's index type is truncated first.
    Tab.push_back(*S);
    Tab.push_back(Idx->getType()->getIntegerBitWidth() > IdxBits ? IdxBits : Bits);
    Tab.push_back(uint32_t(Scale));
    Tab.push_back(uint32_t(Scale >> 32));
    ++NTerms;
  }
  Tab[0] = uint32_t(uint64_t(Const));
  Tab[1] = uint32_t(uint64_t(Const) >> 32);
  Tab[2] = NTerms;
  In.K = Kind::Pure;
  In.Fn.Pure = opGep;
  In.Ty = TV->K;
  In.A = *Base;
  In.Aux2 = addInts(Tab);
  In.Tab = reinterpret_cast<const uint32_t *>(uintptr_t(In.Aux2) + 1);
  return Error::success();
}

Error Decoder::emitCast(const Instruction &I, Inst &In) {
  auto Src = slot(I.getOperand(0));
  if (!Src)
    return Src.takeError();
  auto From = typeOf(I.getOperand(0)->getType());
  auto To = typeOf(I.getType());
  if (!From)
    return From.takeError();
  if (!To)
    return To.takeError();
  In.K = Kind::Pure;
  In.A = *Src;
  In.N = To->N;
  In.Ty = To->K;
  In.Bits = To->Bits;
  In.Sub = uint16_t(From->K);
  In.Aux = From->Bits;
  unsigned Op = I.getOpcode();
  if (Op == Instruction::BitCast) {
    bool Simple = From->Bytes == To->Bytes && From->K != EK::IN && To->K != EK::IN &&
                  From->K != EK::I1 && To->K != EK::I1;
    if (Simple) {
      In.Fn.Pure = opCopy;
      In.Aux = To->Bytes;
      return Error::success();
    }
    if (From->K == EK::PBuf || To->K == EK::PBuf || From->Bytes * 8 > 2048)
      return unsupported(I, "bitcast");
    unsigned FB = From->Bits ? From->Bits : elemBytes(From->K, 0) * 8;
    unsigned TB = To->Bits ? To->Bits : elemBytes(To->K, 0) * 8;
    uint32_t T = addInts(
        {FB, elemBytes(From->K, From->Bits), From->N, TB, elemBytes(To->K, To->Bits), To->N});
    In.Fn.Pure = opRepack;
    In.Aux2 = T;
    In.Tab = reinterpret_cast<const uint32_t *>(uintptr_t(T) + 1);
    return Error::success();
  }
  if (Op == Instruction::AddrSpaceCast) {
    unsigned FA = I.getOperand(0)->getType()->getScalarType()->getPointerAddressSpace();
    unsigned TA = I.getType()->getScalarType()->getPointerAddressSpace();
    auto Is64 = [](unsigned A) { return A == 0 || A == 1 || A == 4; };
    if (Is64(FA) && Is64(TA)) {
      In.Fn.Pure = opCopy;
      In.Aux = To->Bytes;
      return Error::success();
    }
    if ((FA == 3 || FA == 5) && TA == 0) {
      In.Fn.Pure = [](const Inst &I, uint8_t *F) {
        for (unsigned E = 0; E < I.N; ++E)
          wr<uint64_t>(F, I.Dst + 8 * E,
                       (I.Pred == 3 ? LdsAperture : PrivAperture) | rd<uint32_t>(F, I.A + 4 * E));
      };
      In.Pred = uint8_t(FA);
      return Error::success();
    }
    if (FA == 0 && (TA == 3 || TA == 5)) {
      In.Fn.Pure = [](const Inst &I, uint8_t *F) {
        for (unsigned E = 0; E < I.N; ++E)
          wr<uint32_t>(F, I.Dst + 4 * E, uint32_t(rd<uint64_t>(F, I.A + 8 * E)));
      };
      return Error::success();
    }
    return unsupported(I, "address space cast");
  }
  if ((Op == Instruction::PtrToInt || Op == Instruction::IntToPtr) &&
      (From->K == EK::PBuf || To->K == EK::PBuf || From->K == EK::Rsrc || To->K == EK::Rsrc))
    return unsupported(I, "buffer pointer/integer conversion");
  if (Op == Instruction::PtrToInt)
    In.Aux = elemBytes(From->K, 0) * 8;
  In.Fn.Pure = castFn(Op, From->K, To->K);
  if (!In.Fn.Pure)
    return unsupported(I, "cast");
  return Error::success();
}

Error Decoder::emitMemory(const Instruction &I, Inst &In) {
  const Value *Ptr = getLoadStorePointerOperand(&I);
  if (!Ptr)
    Ptr = isa<AtomicRMWInst>(I) ? cast<AtomicRMWInst>(I).getPointerOperand()
                                : cast<AtomicCmpXchgInst>(I).getPointerOperand();
  unsigned AS = Ptr->getType()->getPointerAddressSpace();
  if (AS != 0 && AS != 1 && AS != 3 && AS != 4 && AS != 5 && AS != 7)
    return unsupported(I, "memory access address space");
  auto PS = slot(Ptr);
  if (!PS)
    return PS.takeError();
  Type *ValTy = isa<StoreInst>(I) ? cast<StoreInst>(I).getValueOperand()->getType()
                : isa<AtomicCmpXchgInst>(I)
                    ? cast<AtomicCmpXchgInst>(I).getCompareOperand()->getType()
                    : I.getType();
  if (isa<AtomicRMWInst>(I))
    ValTy = cast<AtomicRMWInst>(I).getValOperand()->getType();
  auto TV = typeOf(ValTy);
  if (!TV)
    return TV.takeError();
  if (TV->K == EK::Agg || TV->K == EK::PBuf)
    return unsupported(I, "memory access type");
  In.K = Kind::Ctx;
  In.A = *PS;
  In.Pred = uint8_t(AS);
  In.Ty = TV->K;
  In.Bits = TV->Bits;
  In.N = TV->N;
  In.Aux = TV->MemBytes;
  In.Aux2 = TV->Bytes;
  // The alignment the IR promises (D = align - 1): an access off it is
  // undefined behaviour, and targets that trust it (wide shared-memory
  // accesses on sm_90a) fault.
  llvm::Align Al = isa<LoadInst>(I)        ? cast<LoadInst>(I).getAlign()
                   : isa<StoreInst>(I)     ? cast<StoreInst>(I).getAlign()
                   : isa<AtomicRMWInst>(I) ? cast<AtomicRMWInst>(I).getAlign()
                                           : cast<AtomicCmpXchgInst>(I).getAlign();
  In.D = uint32_t(std::min<uint64_t>(Al.value(), uint64_t(1) << 31) - 1);
  if (!TV->Plain) {
    unsigned EB = elemBytes(TV->K, TV->Bits);
    uint32_t T = addInts({TV->Bits, EB, TV->N, TV->MemBytes});
    In.Tab = reinterpret_cast<const uint32_t *>(uintptr_t(T) + 1);
  }
  return Error::success();
}

static Error checkSimpleAtomicType(Decoder &D, const Instruction &I, EK K) {
  if (K == EK::I32 || K == EK::I64 || K == EK::F32 || K == EK::F64 || K == EK::BF16 ||
      K == EK::F16 || K == EK::P64)
    return Error::success();
  return D.unsupported(I, "atomic type");
}

Error Decoder::decodeInst(const Instruction &I) {
  Inst In;
  In.Src = &I;
  In.Dst = Slots.lookup(&I);
  if (isa<AllocaInst>(I))
    return Error::success(); // constant offset, set up in assignSlots
  if (auto *BO = dyn_cast<BinaryOperator>(&I)) {
    auto TV = typeOf(I.getType());
    if (!TV)
      return TV.takeError();
    if (Error E = slots({{BO->getOperand(0), &In.A}, {BO->getOperand(1), &In.B}}))
      return E;
    bool Approx = BO->getOpcode() == Instruction::FDiv && BO->hasApproxFunc();
    In.Fn.Pure = Approx ? approxDivFn(TV->K) : nullptr;
    if (!In.Fn.Pure)
      In.Fn.Pure = binaryFn(BO->getOpcode(), TV->K);
    if (!In.Fn.Pure)
      return unsupported(I, "binary operator");
    In.Ty = TV->K;
    In.Bits = TV->Bits;
    In.N = TV->N;
    In.Sub = uint16_t(BO->getOpcode());
  } else if (auto *UO = dyn_cast<UnaryOperator>(&I)) {
    auto TV = typeOf(I.getType());
    if (!TV)
      return TV.takeError();
    if (Error E = slots({{UO->getOperand(0), &In.A}}))
      return E;
    In.Ty = TV->K;
    In.N = TV->N;
    In.Sub = M_FNeg;
    In.Aux = 1;
    In.Fn.Pure = mathFn(M_FNeg, TV->K);
    if (!In.Fn.Pure)
      return unsupported(I, "unary operator");
  } else if (auto *Cmp = dyn_cast<CmpInst>(&I)) {
    auto TV = typeOf(Cmp->getOperand(0)->getType());
    if (!TV)
      return TV.takeError();
    if (Error E = slots({{Cmp->getOperand(0), &In.A}, {Cmp->getOperand(1), &In.B}}))
      return E;
    In.Fn.Pure = isa<ICmpInst>(Cmp) ? icmpFn(TV->K) : fcmpFn(TV->K);
    if (!In.Fn.Pure)
      return unsupported(I, "compare");
    In.Ty = TV->K;
    In.Bits = TV->Bits;
    In.N = TV->N;
    In.Pred = uint8_t(Cmp->getPredicate());
  } else if (auto *Sel = dyn_cast<SelectInst>(&I)) {
    auto TV = typeOf(I.getType());
    if (!TV)
      return TV.takeError();
    if (Error E = slots({{Sel->getCondition(), &In.A},
                         {Sel->getTrueValue(), &In.B},
                         {Sel->getFalseValue(), &In.C}}))
      return E;
    In.Fn.Pure = opSelect;
    In.Pred = Sel->getCondition()->getType()->isVectorTy();
    In.N = In.Pred ? TV->N : 1;
    In.Aux = In.Pred ? TV->Bytes / TV->N : TV->Bytes;
  } else if (isa<GetElementPtrInst>(I)) {
    if (Error E = emitGep(I, In))
      return E;
  } else if (I.isCast()) {
    if (Error E = emitCast(I, In))
      return E;
  } else if (isa<FreezeInst>(I)) {
    auto TV = typeOf(I.getType());
    if (!TV)
      return TV.takeError();
    if (Error E = slots({{I.getOperand(0), &In.A}}))
      return E;
    In.Fn.Pure = opCopy;
    In.Aux = TV->Bytes;
  } else if (auto *EE = dyn_cast<ExtractElementInst>(&I)) {
    auto VTy = typeOf(EE->getVectorOperandType());
    if (!VTy)
      return VTy.takeError();
    if (Error E = slots({{EE->getVectorOperand(), &In.A}, {EE->getIndexOperand(), &In.B}}))
      return E;
    In.Fn.Pure = opExtractElt;
    In.N = VTy->N;
    In.Aux = VTy->Bytes / VTy->N;
    In.Pred = uint8_t(EE->getIndexOperand()->getType()->getIntegerBitWidth() / 8);
  } else if (auto *IE = dyn_cast<InsertElementInst>(&I)) {
    auto VTy = typeOf(I.getType());
    if (!VTy)
      return VTy.takeError();
    if (Error E = slots(
            {{IE->getOperand(0), &In.A}, {IE->getOperand(1), &In.B}, {IE->getOperand(2), &In.C}}))
      return E;
    In.Fn.Pure = opInsertElt;
    In.N = VTy->N;
    In.Aux = VTy->Bytes / VTy->N;
    In.Pred = uint8_t(IE->getOperand(2)->getType()->getIntegerBitWidth() / 8);
  } else if (auto *SV = dyn_cast<ShuffleVectorInst>(&I)) {
    auto VTy = typeOf(I.getType());
    if (!VTy)
      return VTy.takeError();
    auto InTy = typeOf(SV->getOperand(0)->getType());
    if (!InTy)
      return InTy.takeError();
    if (Error E = slots({{SV->getOperand(0), &In.A}, {SV->getOperand(1), &In.B}}))
      return E;
    if (VTy->Bytes > 2048)
      return unsupported(I, "shuffle size");
    std::vector<uint32_t> Mask;
    for (int M : SV->getShuffleMask())
      Mask.push_back(M < 0 ? ~0u : uint32_t(M));
    // Concatenations (the common case) copy two halves; an undefined mask
    // element reads 0 in opShuffle, so those stay there.
    bool Concat = SV->isConcat() && !llvm::is_contained(Mask, ~0u);
    In.Fn.Pure = Concat ? opConcat : opShuffle;
    In.N = VTy->N;
    In.D = InTy->N;
    In.Aux = VTy->Bytes / VTy->N;
    uint32_t T = addInts(Mask);
    In.Tab = reinterpret_cast<const uint32_t *>(uintptr_t(T) + 1);
  } else if (auto *EV = dyn_cast<ExtractValueInst>(&I)) {
    if (Error E = slots({{EV->getAggregateOperand(), &In.A}}))
      return E;
    uint32_t Off = aggregateOffset(EV->getAggregateOperand()->getType(), EV->getIndices());
    auto TV = typeOf(I.getType());
    if (!TV)
      return TV.takeError();
    In.Fn.Pure = opExtractValue;
    In.Aux = Off;
    In.Aux2 = TV->Bytes;
  } else if (auto *IV = dyn_cast<InsertValueInst>(&I)) {
    if (Error E =
            slots({{IV->getAggregateOperand(), &In.A}, {IV->getInsertedValueOperand(), &In.B}}))
      return E;
    uint32_t Off = aggregateOffset(IV->getAggregateOperand()->getType(), IV->getIndices());
    In.Fn.Pure = opInsertValue;
    In.Aux = Off;
    In.Aux2 = typeOf(IV->getInsertedValueOperand()->getType())->Bytes;
    if (In.Aux2 > 256)
      return unsupported(I, "insertvalue of a member wider than 256 bytes");
    In.C = typeOf(I.getType())->Bytes;
  } else if (isa<LoadInst>(I) || isa<StoreInst>(I)) {
    if (Error E = emitMemory(I, In))
      return E;
    // The lanes of a group load or store in one handler call.
    In.K = Kind::Lanes;
    if (auto *SI = dyn_cast<StoreInst>(&I)) {
      if (Error E = slots({{SI->getValueOperand(), &In.B}}))
        return E;
      In.Fn.Wave = reinterpret_cast<void *>(lanesStore);
    } else {
      In.Fn.Wave = reinterpret_cast<void *>(lanesLoad);
    }
  } else if (auto *RMW = dyn_cast<AtomicRMWInst>(&I)) {
    if (Error E = emitMemory(I, In))
      return E;
    if (In.N == 1)
      if (Error E = checkSimpleAtomicType(*this, I, In.Ty))
        return E;
    if (In.N > 1 && !(In.N == 2 && (In.Ty == EK::BF16 || In.Ty == EK::F16)))
      return unsupported(I, "atomic vector type");
    if (Error E = slots({{RMW->getValOperand(), &In.B}}))
      return E;
    In.Sub = uint16_t(RMW->getOperation());
    In.Fn.Ctx = ctxAtomicRMW;
  } else if (auto *CX = dyn_cast<AtomicCmpXchgInst>(&I)) {
    if (Error E = emitMemory(I, In))
      return E;
    if (Error E = checkSimpleAtomicType(*this, I, In.Ty))
      return E;
    if (Error E = slots({{CX->getCompareOperand(), &In.B}, {CX->getNewValOperand(), &In.C}}))
      return E;
    In.Fn.Ctx = ctxCmpXchg;
  } else if (auto *Fe = dyn_cast<FenceInst>(&I)) {
    In.K = Kind::Ctx;
    In.Fn.Ctx = ctxFence;
    AtomicOrdering O = Fe->getOrdering();
    In.Pred = (isAcquireOrStronger(O) ? 1 : 0) | (isReleaseOrStronger(O) ? 2 : 0);
    SmallVector<StringRef, 8> Names;
    F.getContext().getSyncScopeNames(Names);
    StringRef Scope = Fe->getSyncScopeID() < Names.size() ? Names[Fe->getSyncScopeID()] : "";
    // Scopes wider than or equal to the workgroup order LDS between waves.
    In.Sub = !(Scope == "singlethread" || Scope.starts_with("wavefront"));
    P->UsesFences = true;
  } else if (auto *CI = dyn_cast<CallInst>(&I)) {
    if (Error E = decodeCall(*this, *CI, In))
      return E;
  } else {
    return unsupported(I, std::string("instruction '") + I.getOpcodeName() + "'");
  }
  P->Code.push_back(In);
  return Error::success();
}

} // namespace moegen::emu
