//===- LdsShadow.cpp ------------------------------------------------------===//
#include "emulator/LdsShadow.h"

namespace moegen::emu {

LdsShadow::Result LdsShadow::read(uint32_t Off, uint32_t N, uint16_t Wave, uint32_t Epoch,
                                  bool CheckInit) {
  Result R;
  for (uint32_t I = 0; I < N; ++I) {
    Cell &C = cell(Off + I);
    if (C.WEpoch == 0) {
      if (CheckInit && R.What == Issue::None) {
        R.What = Issue::Uninit;
        R.Offset = Off + I;
      }
    } else if (C.WWave != Wave) {
      if (C.WEpoch == Epoch) {
        if (R.What == Issue::None) {
          R.What = Issue::RaceWriteRead;
          R.Offset = Off + I;
          R.OtherWave = C.WWave;
        }
      } else if (!R.CrossWave) {
        R.CrossWave = true;
        R.WriterWave = C.WWave;
        R.WriterEpoch = C.WEpoch;
        R.Offset = R.What == Issue::None ? Off + I : R.Offset;
      }
    }
    if (C.REpoch != Epoch) {
      C.REpoch = Epoch;
      C.RWave = Wave;
    } else if (C.RWave != Wave) {
      C.RWave = ManyReaders;
    }
  }
  return R;
}

LdsShadow::Result LdsShadow::write(uint32_t Off, uint32_t N, uint16_t Wave, uint32_t Epoch) {
  Result R;
  for (uint32_t I = 0; I < N; ++I) {
    Cell &C = cell(Off + I);
    if (R.What == Issue::None) {
      if (C.WEpoch == Epoch && C.WWave != Wave) {
        R.What = Issue::RaceWriteWrite;
        R.Offset = Off + I;
        R.OtherWave = C.WWave;
      } else if (C.REpoch == Epoch && C.RWave != Wave) {
        R.What = Issue::RaceReadWrite;
        R.Offset = Off + I;
        R.OtherWave = C.RWave;
      }
    }
    C.WEpoch = Epoch;
    C.WWave = Wave;
  }
  return R;
}

} // namespace moegen::emu
