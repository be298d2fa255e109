//===- LdsShadow.h - Per-byte LDS access history for the race checks ------===//
//
// An "epoch" is the interval between two workgroup barriers. Two accesses of
// different waves to one byte in the same epoch, at least one a write, are a
// race: nothing orders them. A read of a byte never written is uninitialized.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_EMULATOR_LDSSHADOW_H
#define MOEGEN_EMULATOR_LDSSHADOW_H

#include <cstdint>
#include <vector>

namespace moegen::emu {

class LdsShadow {
public:
  static constexpr uint16_t ManyReaders = 0xFFFF;
  struct Cell {
    uint32_t Gen = 0;    // workgroup generation; a stale cell reads as fresh
    uint32_t WEpoch = 0; // 0 = never written
    uint32_t REpoch = 0;
    uint16_t WWave = 0;
    uint16_t RWave = 0;
  };
  enum class Issue : uint8_t { None, Uninit, RaceWriteRead, RaceReadWrite, RaceWriteWrite };
  struct Result {
    Issue What = Issue::None;
    uint32_t Offset = 0;    // offending byte
    uint16_t OtherWave = 0; // the wave of the conflicting access
    // For reads: the oldest cross-wave write this read observes (fence check).
    bool CrossWave = false;
    uint16_t WriterWave = 0;
    uint32_t WriterEpoch = 0;
  };

  /// Starts a new workgroup: O(1) unless the size changes.
  void reset(uint32_t Bytes) {
    if (Cells.size() != Bytes || ++Gen == 0) {
      Cells.assign(Bytes, Cell());
      Gen = 1;
    }
  }
  Result read(uint32_t Off, uint32_t N, uint16_t Wave, uint32_t Epoch, bool CheckInit);
  Result write(uint32_t Off, uint32_t N, uint16_t Wave, uint32_t Epoch);
  /// Atomics are ordered among themselves: they only make bytes initialized.
  void markAtomic(uint32_t Off, uint32_t N, uint16_t Wave) {
    for (uint32_t I = 0; I < N; ++I) {
      Cell &C = cell(Off + I);
      if (C.WEpoch == 0) {
        C.WEpoch = 1;
        C.WWave = Wave;
      }
    }
  }

private:
  Cell &cell(uint32_t Off) {
    Cell &C = Cells[Off];
    if (C.Gen != Gen) {
      C = Cell();
      C.Gen = Gen;
    }
    return C;
  }
  std::vector<Cell> Cells;
  uint32_t Gen = 1;
};

} // namespace moegen::emu

#endif
