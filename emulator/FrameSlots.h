//===- FrameSlots.h - Frame bytes of SSA values from their live ranges ----===//
//
// A lane's frame holds a slot per SSA value. Giving every value bytes of its
// own makes the frames of production kernels (unrolled main loops) tens of
// KiB per lane, and the 64 frames of a wave then no longer stay in the
// host's caches. Here values share bytes when their live ranges do not
// overlap, so a frame holds about what is live at once.
//
// A value's range runs, in the code layout, from its definition to the last
// point it is live on any path: its uses, the ends of blocks it is live out
// of (phi operands are live out of their predecessor), the starts of blocks
// it is live into; a phi's range also covers the end of each predecessor,
// where the edge moves write it. A definition and the uses at the same
// instruction overlap, so no instruction's result shares bytes with its
// operands.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_EMULATOR_FRAMESLOTS_H
#define MOEGEN_EMULATOR_FRAMESLOTS_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace llvm {
class Function;
class Instruction;
} // namespace llvm

namespace moegen::emu {

struct SlotRequest {
  const llvm::Instruction *Value;
  uint32_t Bytes;
  /// Bytes of its own for the whole kernel (a value other lanes may read
  /// while this lane is elsewhere, e.g. through readlane).
  bool Pinned = false;
};

/// Offsets (from the start of the value region, 8-byte aligned) for the
/// requests, in their order; returns the region's size.
uint32_t packFrameSlots(const llvm::Function &F, llvm::ArrayRef<SlotRequest> Requests,
                        std::vector<uint32_t> &Offsets);

} // namespace moegen::emu

#endif
