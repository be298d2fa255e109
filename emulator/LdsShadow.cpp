//===- LdsShadow.cpp ------------------------------------------------------===//
//
// read() and write() first test all bytes of an access at once, in loops
// without early exits that the compiler vectorizes; only an access that has
// something to report walks its bytes one by one to find the first.
//
//===----------------------------------------------------------------------===//
#include "emulator/LdsShadow.h"

#include <algorithm>

namespace moegen::emu {

void LdsShadow::clear(uint32_t Bytes) {
  WStamp.assign(Bytes, 0);
  RStamp.assign(Bytes, 0);
  WWave.assign(Bytes, 0);
  RWave.assign(Bytes, 0);
  Base = Top = 0;
}

void LdsShadow::rebase() {
  for (uint32_t *Stamps : {WStamp.data(), RStamp.data()})
    for (size_t I = 0, E = WStamp.size(); I < E; ++I)
      Stamps[I] = Stamps[I] > Base ? Stamps[I] - Base : 0;
  Top -= Base;
  Base = 0;
}

LdsShadow::Result LdsShadow::readSlow(uint32_t Off, uint32_t N, uint16_t Wave, uint32_t S,
                                      bool CheckInit) {
  Result R;
  for (uint32_t I = Off; I < Off + N; ++I) {
    if (!written(I)) {
      if (CheckInit && R.What == Issue::None) {
        R.What = Issue::Uninit;
        R.Offset = I;
      }
    } else if (WWave[I] != Wave) {
      if (WStamp[I] == S) {
        if (R.What == Issue::None) {
          R.What = Issue::RaceWriteRead;
          R.Offset = I;
          R.OtherWave = WWave[I];
        }
      } else if (!R.CrossWave) {
        R.CrossWave = true;
        R.WriterWave = WWave[I];
        R.WriterEpoch = WStamp[I] - Base;
        R.Offset = R.What == Issue::None ? I : R.Offset;
      }
    }
    if (RStamp[I] != S) {
      RStamp[I] = S;
      RWave[I] = Wave;
    } else if (RWave[I] != Wave) {
      RWave[I] = ManyReaders;
    }
  }
  return R;
}

LdsShadow::Result LdsShadow::read(uint32_t Off, uint32_t N, uint16_t Wave, uint32_t Epoch,
                                  bool CheckInit) {
  const uint32_t S = stamp(Epoch);
  const uint32_t *WS = &WStamp[Off];
  const uint16_t *WW = &WWave[Off];
  // The common case: every byte written in this workgroup, none by another
  // wave in this epoch; whether some byte comes from another wave at all.
  bool Clean = true, Cross = false;
  for (uint32_t I = 0; I < N; ++I) {
    Clean &= (WS[I] > Base) & !((WS[I] == S) & (WW[I] != Wave));
    Cross |= WW[I] != Wave;
  }
  if (!Clean)
    return readSlow(Off, N, Wave, S, CheckInit);
  Result R;
  if (Cross) {
    const uint32_t I =
        uint32_t(std::find_if(WW, WW + N, [&](uint16_t W) { return W != Wave; }) - WW);
    R.CrossWave = true;
    R.WriterWave = WW[I];
    R.WriterEpoch = WS[I] - Base;
    R.Offset = Off + I;
  }
  uint32_t *RS = &RStamp[Off];
  uint16_t *RW = &RWave[Off];
  // The first read of the epoch names its wave; a read by another wave in
  // the same epoch makes it ManyReaders.
  for (uint32_t I = 0; I < N; ++I) {
    RW[I] = (RS[I] != S) | (RW[I] == Wave) ? Wave : ManyReaders;
    RS[I] = S;
  }
  return R;
}

LdsShadow::Result LdsShadow::write(uint32_t Off, uint32_t N, uint16_t Wave, uint32_t Epoch) {
  const uint32_t S = stamp(Epoch);
  uint32_t *WS = &WStamp[Off];
  uint16_t *WW = &WWave[Off];
  const uint32_t *RS = &RStamp[Off];
  const uint16_t *RW = &RWave[Off];
  bool Clean = true;
  for (uint32_t I = 0; I < N; ++I)
    Clean &= !(((WS[I] == S) & (WW[I] != Wave)) | ((RS[I] == S) & (RW[I] != Wave)));
  Result R;
  for (uint32_t I = 0; I < N && !Clean; ++I) {
    if (WS[I] == S && WW[I] != Wave) {
      R.What = Issue::RaceWriteWrite;
      R.Offset = Off + I;
      R.OtherWave = WW[I];
      break;
    }
    if (RS[I] == S && RW[I] != Wave) {
      R.What = Issue::RaceReadWrite;
      R.Offset = Off + I;
      R.OtherWave = RW[I];
      break;
    }
  }
  std::fill_n(WS, N, S);
  std::fill_n(WW, N, Wave);
  return R;
}

void LdsShadow::markAtomic(uint32_t Off, uint32_t N, uint16_t Wave) {
  const uint32_t S = stamp(1);
  for (uint32_t I = Off; I < Off + N; ++I)
    if (!written(I)) {
      WStamp[I] = S;
      WWave[I] = Wave;
    }
}

} // namespace moegen::emu
