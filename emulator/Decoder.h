//===- Decoder.h - llvm::Function -> Program --------------------------------===//
#ifndef MOEGEN_EMULATOR_DECODER_H
#define MOEGEN_EMULATOR_DECODER_H

#include "emulator/Program.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Error.h"

#include <initializer_list>
#include <utility>

#include <memory>

namespace llvm {
class BasicBlock;
class CallInst;
class Constant;
class DataLayout;
class GlobalVariable;
class Type;
class Value;
} // namespace llvm

namespace moegen::emu {

/// Register shape of an LLVM type.
struct VT {
  EK K = EK::I32;
  uint8_t Bits = 0;
  uint16_t N = 1;
  uint32_t Bytes = 0;    // register bytes
  bool Plain = true;     // register bytes == memory bytes
  uint32_t MemBytes = 0; // DataLayout store size
};

class Decoder {
public:
  Decoder(const llvm::Function &F,
          const llvm::DenseMap<const llvm::GlobalVariable *, uint64_t> &GlobalAddrs);
  llvm::Expected<std::unique_ptr<Program>> run();

  // Used by the intrinsic decoders.
  llvm::Expected<VT> typeOf(llvm::Type *T);
  /// Byte offset of the element that `Indices` select inside an aggregate of
  /// type `T` (extractvalue/insertvalue), in the decoder's 8-byte-aligned layout.
  uint32_t aggregateOffset(llvm::Type *T, llvm::ArrayRef<unsigned> Indices);
  llvm::Expected<uint32_t> slot(const llvm::Value *V);
  /// The slots of values, each into its destination, in order.
  llvm::Error slots(std::initializer_list<std::pair<const llvm::Value *, uint32_t *>> List);
  uint32_t resultSlot(const llvm::Value *V) { return Slots.lookup(V); }
  uint32_t addInts(llvm::ArrayRef<uint32_t> Vals);
  /// Reserves per-wave-op scratch bytes in the frame.
  uint32_t allocFrame(uint32_t Bytes);
  llvm::Error unsupported(const llvm::Instruction &I, llvm::StringRef What);
  const llvm::DataLayout &dataLayout() const;
  Program &program() { return *P; }

private:
  llvm::Error assignSlots();
  llvm::Error decodeInst(const llvm::Instruction &I);
  llvm::Error decodeBlockEnd(const llvm::Instruction &I);
  llvm::Expected<uint32_t> edgeTo(const llvm::BasicBlock *From, const llvm::BasicBlock *To);
  llvm::Error writeConst(const llvm::Constant *C, llvm::Type *T, uint32_t Off);
  llvm::Error layoutLds();
  llvm::Error layoutArgs();
  llvm::Error emitGep(const llvm::Instruction &I, Inst &In);
  llvm::Error emitCast(const llvm::Instruction &I, Inst &In);
  llvm::Error emitMemory(const llvm::Instruction &I, Inst &In);

  const llvm::Function &F;
  const llvm::DenseMap<const llvm::GlobalVariable *, uint64_t> &GlobalAddrs;
  std::unique_ptr<Program> P;
  llvm::DenseMap<const llvm::Value *, uint32_t> Slots;
  llvm::DenseMap<const llvm::GlobalVariable *, uint32_t> LdsOffsets;
  llvm::DenseMap<const llvm::BasicBlock *, uint32_t> BlockIndex;
  std::vector<uint32_t> BlockStart;
  /// The immediate post-dominator of each block (its index; NoBlock for the
  /// exit): where the lanes that diverge at its branch meet again.
  std::vector<uint32_t> Reconverge;
  std::vector<uint8_t> &Image() { return P->ConstImage; }
  uint32_t MaxTemp = 0;
  std::vector<uint32_t> TempFixups; // moves needing the temp base
};

/// Decodes a call (intrinsic or device-library function) into In.
llvm::Error decodeCall(Decoder &D, const llvm::CallInst &CI, Inst &In);

} // namespace moegen::emu

#endif
