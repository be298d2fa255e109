//===- LdsShadow.h - Per-byte LDS access history for the race checks ------===//
//
// An "epoch" is the interval between two workgroup barriers. Two accesses of
// different waves to one byte in the same epoch, at least one a write, are a
// race: nothing orders them. A read of a byte never written is uninitialized.
//
// Each byte's last write and read are kept as stamps: the workgroup's base
// plus the epoch. A new workgroup moves the base past every stamp given so
// far, so older stamps read as "never" without clearing the shadow.
//
// The history is per byte, but kernels move LDS data in aligned 16-byte
// pieces: a 16-byte granule whose bytes share one history keeps it once, and
// an access of the whole granule checks and updates that one record. A
// partial access splits the granule into its bytes; a later whole write or
// read that leaves them alike merges them again. The reports are the
// per-byte rule's either way.
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

  /// Starts a new workgroup (epochs count from 1 again): O(1) unless the
  /// size changes or the stamps run out.
  void reset(uint32_t Bytes) {
    if (ByteCells.size() != Bytes || Top > StampLimit)
      clear(Bytes);
    Base = Top;
  }
  Result read(uint32_t Off, uint32_t N, uint16_t Wave, uint32_t Epoch, bool CheckInit);
  Result write(uint32_t Off, uint32_t N, uint16_t Wave, uint32_t Epoch);
  /// Atomics are ordered among themselves: they only make bytes initialized.
  void markAtomic(uint32_t Off, uint32_t N, uint16_t Wave);

private:
  static constexpr uint32_t Granule = 16;
  /// Stamps stay below 2^31 between workgroups, so that one workgroup's
  /// epochs can never wrap them.
  static constexpr uint32_t StampLimit = 0x7FFFFFFFu;

  /// The history of a byte (or of every byte of a uniform granule).
  struct Cell {
    uint32_t WStamp = 0, RStamp = 0; // <= Base: not in this workgroup
    uint16_t WWave = 0, RWave = 0;   // RWave: ManyReaders when several waves read
    bool operator==(const Cell &O) const {
      return WStamp == O.WStamp && RStamp == O.RStamp && WWave == O.WWave && RWave == O.RWave;
    }
  };

  uint32_t stamp(uint32_t Epoch) {
    if (Epoch > ~0u - Base)
      rebase();
    uint32_t S = Base + Epoch;
    Top = S > Top ? S : Top;
    return S;
  }
  void clear(uint32_t Bytes);
  /// Restarts the stamps at 0, keeping this workgroup's history.
  void rebase();
  /// Calls Visit(Cell, first byte) for the pieces of [Off, Off + N) in byte
  /// order: a whole uniform granule once, other bytes one by one.
  template <class VisitFn> void forCells(uint32_t Off, uint32_t N, VisitFn Visit);
  void readCell(Cell &C, uint32_t At, uint16_t Wave, uint32_t S, bool CheckInit, Result &R) const;
  void writeCell(Cell &C, uint32_t At, uint16_t Wave, uint32_t S, Result &R) const;

  std::vector<Cell> GranuleCells; // valid where Uniform
  std::vector<uint8_t> Uniform;
  std::vector<Cell> ByteCells; // valid in granules that are not uniform
  uint32_t Base = 0;           // stamps <= Base belong to earlier workgroups (or none)
  uint32_t Top = 0;            // the largest stamp given
};

} // namespace moegen::emu

#endif
