//===- Emulator.cpp - Public entry points -----------------------------------===//
#include "emulator/Emulator.h"

#include "emulator/Decoder.h"
#include "emulator/Runner.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace llvm;

namespace moegen::emu {

struct Emulator::Impl {
  Options Opts;
  LLVMContext Ctx;
  std::vector<std::unique_ptr<Module>> Modules;
  GlobalMemory Mem;
  Stats Last;
  DenseMap<const GlobalVariable *, uint64_t> GlobalAddrs;
  std::vector<std::unique_ptr<std::vector<uint8_t>>> GlobalStorage;
  struct Kernel {
    std::unique_ptr<Program> P;
    KernelInfo Info;
  };
  std::map<std::pair<unsigned, std::string>, Kernel> Kernels;

  unsigned addModule(std::unique_ptr<Module> Mod);
  Expected<Kernel *> kernel(StringRef Name, int Module);
};

/// Non-LDS globals with simple initializers become emulator-owned buffers.
unsigned Emulator::Impl::addModule(std::unique_ptr<Module> Mod) {
  Modules.push_back(std::move(Mod));
  Module *M = Modules.back().get();
  const DataLayout &DL = M->getDataLayout();
  for (GlobalVariable &GV : M->globals()) {
    unsigned AS = GV.getAddressSpace();
    if (AS == 3 || !GV.hasInitializer())
      continue;
    const Constant *Init = GV.getInitializer();
    auto Bytes = std::make_unique<std::vector<uint8_t>>(DL.getTypeAllocSize(GV.getValueType()), 0);
    if (auto *CDS = dyn_cast<ConstantDataSequential>(Init)) {
      StringRef Raw = CDS->getRawDataValues();
      std::memcpy(Bytes->data(), Raw.data(), std::min(Raw.size(), Bytes->size()));
    } else if (auto *CI = dyn_cast<ConstantInt>(Init)) {
      uint64_t V = CI->getZExtValue();
      std::memcpy(Bytes->data(), &V, std::min<size_t>(8, Bytes->size()));
    } else if (auto *CF = dyn_cast<ConstantFP>(Init)) {
      uint64_t V = CF->getValueAPF().bitcastToAPInt().getZExtValue();
      std::memcpy(Bytes->data(), &V, std::min<size_t>(8, Bytes->size()));
    } else if (!isa<ConstantAggregateZero>(Init) && !isa<UndefValue>(Init)) {
      continue; // left unmapped: a kernel that uses it fails to decode
    }
    GlobalAddrs[&GV] = Mem.add(Bytes->data(), Bytes->size());
    GlobalStorage.push_back(std::move(Bytes));
  }
  return unsigned(Modules.size() - 1);
}

Expected<Emulator::Impl::Kernel *> Emulator::Impl::kernel(StringRef Name, int Module) {
  const Function *F = nullptr;
  unsigned Index = 0;
  for (int I = int(Modules.size()) - 1; I >= 0 && !F; --I) {
    if (Module >= 0 && I != Module)
      continue;
    const Function *G = Modules[unsigned(I)]->getFunction(Name);
    if (G && !G->isDeclaration()) {
      F = G;
      Index = unsigned(I);
    }
  }
  if (!F)
    return createStringError(inconvertibleErrorCode(), "no kernel named '%s' is loaded",
                             Name.str().c_str());
  auto It = Kernels.find({Index, Name.str()});
  if (It != Kernels.end())
    return &It->second;
  Decoder D(*F, GlobalAddrs);
  auto P = D.run();
  if (!P)
    return P.takeError();
  Kernel K;
  K.Info.Name = Name.str();
  K.Info.KernargBytes = (*P)->KernargBytes;
  K.Info.StaticLdsBytes = (*P)->StaticLdsBytes;
  for (const ArgSlot &A : (*P)->Args)
    K.Info.Args.push_back({A.KernargOffset, A.Bytes, A.Ty == EK::P64 || A.Ty == EK::P32});
  K.P = std::move(*P);
  return &Kernels.emplace(std::make_pair(Index, Name.str()), std::move(K)).first->second;
}

Emulator::Emulator(Options Opts) : P(std::make_unique<Impl>()) { P->Opts = Opts; }
Emulator::~Emulator() = default;

Error Emulator::loadIRFile(StringRef Path) {
  auto Buf = MemoryBuffer::getFile(Path);
  if (!Buf)
    return createStringError(Buf.getError(), "cannot read '%s'", Path.str().c_str());
  return loadIR((*Buf)->getMemBufferRef());
}

Expected<unsigned> Emulator::addIR(MemoryBufferRef Buffer) {
  SMDiagnostic Diag;
  std::unique_ptr<Module> Mod = parseIR(Buffer, Diag, P->Ctx);
  if (!Mod) {
    std::string S;
    raw_string_ostream OS(S);
    Diag.print("moegen-emu", OS, false);
    return createStringError(inconvertibleErrorCode(), S);
  }
  // Only gfx950 and sm_90a code (each kernel's target-cpu is checked when it
  // is decoded): other chips differ (e.g. FNUZ fp8 on gfx942).
  const Triple &T = Mod->getTargetTriple();
  if (!T.str().starts_with("amdgcn") && T.getArch() != Triple::nvptx64)
    return createStringError(inconvertibleErrorCode(),
                             "module '%s' has target triple '%s', not amdgcn-amd-amdhsa or "
                             "nvptx64-nvidia-cuda",
                             Mod->getModuleIdentifier().c_str(), T.str().c_str());
  return P->addModule(std::move(Mod));
}

uint64_t Emulator::registerBuffer(void *Host, uint64_t Bytes) { return P->Mem.add(Host, Bytes); }

Error Emulator::unregisterBuffer(uint64_t DeviceAddr) {
  if (!P->Mem.remove(DeviceAddr))
    return createStringError(inconvertibleErrorCode(), "no buffer registered at 0x%llx",
                             (unsigned long long)DeviceAddr);
  return Error::success();
}

void *Emulator::hostPointer(uint64_t DeviceAddr, uint64_t Bytes) const {
  return P->Mem.translate(DeviceAddr, Bytes);
}

Expected<const KernelInfo *> Emulator::getKernel(StringRef Name, int Module) {
  auto K = P->kernel(Name, Module);
  if (!K)
    return K.takeError();
  return &(*K)->Info;
}

std::vector<std::string> Emulator::kernelNames(int Module) const {
  std::vector<std::string> Names;
  for (unsigned I = 0; I < P->Modules.size(); ++I)
    if (Module < 0 || unsigned(Module) == I)
      for (const Function &F : *P->Modules[I])
        if (!F.isDeclaration() && (F.getCallingConv() == CallingConv::AMDGPU_KERNEL ||
                                   F.getCallingConv() == CallingConv::PTX_Kernel))
          Names.push_back(F.getName().str());
  return Names;
}

Error Emulator::launch(StringRef Kernel, const LaunchConfig &Cfg, ArrayRef<uint8_t> Kernarg,
                       int Module) {
  auto K = P->kernel(Kernel, Module);
  if (!K)
    return K.takeError();
  P->Last = Stats();
  Runner R(*(*K)->P, P->Opts, P->Mem, P->Last, Cfg);
  return R.run(Kernarg);
}

const Stats &Emulator::lastStats() const { return P->Last; }
Options &Emulator::options() { return P->Opts; }

KernargBuilder &KernargBuilder::add(const void *Data, uint32_t Size) {
  if (Next >= K.Args.size() || K.Args[Next].Size != Size) {
    Ok = false;
    return *this;
  }
  std::memcpy(Bytes.data() + K.Args[Next].Offset, Data, Size);
  ++Next;
  return *this;
}

} // namespace moegen::emu
