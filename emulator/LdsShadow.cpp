//===- LdsShadow.cpp ------------------------------------------------------===//
#include "emulator/LdsShadow.h"

#include <algorithm>

namespace moegen::emu {

void LdsShadow::clear(uint32_t Bytes) {
  ByteCells.assign(Bytes, Cell());
  GranuleCells.assign((Bytes + Granule - 1) / Granule, Cell());
  Uniform.assign(GranuleCells.size(), 1);
  Base = Top = 0;
}

void LdsShadow::rebase() {
  auto Down = [&](uint32_t &Stamp) { Stamp = Stamp > Base ? Stamp - Base : 0; };
  for (std::vector<Cell> *Cells : {&ByteCells, &GranuleCells})
    for (Cell &C : *Cells) {
      Down(C.WStamp);
      Down(C.RStamp);
    }
  Top -= Base;
  Base = 0;
}

template <class VisitFn> void LdsShadow::forCells(uint32_t Off, uint32_t N, VisitFn Visit) {
  const uint32_t Size = uint32_t(ByteCells.size());
  for (uint32_t At = Off, End = Off + N; At < End;) {
    const uint32_t G = At / Granule, First = G * Granule, Stop = std::min(End, First + Granule);
    const bool Whole = At == First && Stop == First + Granule;
    if (Uniform[G] && Whole) {
      Visit(GranuleCells[G], At);
      At = Stop;
      continue;
    }
    if (Uniform[G]) { // split: every byte starts from the granule's history
      std::fill(ByteCells.begin() + First, ByteCells.begin() + std::min(Size, First + Granule),
                GranuleCells[G]);
      Uniform[G] = 0;
    }
    for (; At < Stop; ++At)
      Visit(ByteCells[At], At);
    if (Whole && std::all_of(ByteCells.begin() + First + 1, ByteCells.begin() + Stop,
                             [&](const Cell &C) { return C == ByteCells[First]; })) {
      GranuleCells[G] = ByteCells[First];
      Uniform[G] = 1;
    }
  }
}

void LdsShadow::readCell(Cell &C, uint32_t At, uint16_t Wave, uint32_t S, bool CheckInit,
                         Result &R) const {
  if (C.WStamp <= Base) {
    if (CheckInit && R.What == Issue::None) {
      R.What = Issue::Uninit;
      R.Offset = At;
    }
  } else if (C.WWave != Wave) {
    if (C.WStamp == S) {
      if (R.What == Issue::None) {
        R.What = Issue::RaceWriteRead;
        R.Offset = At;
        R.OtherWave = C.WWave;
      }
    } else if (!R.CrossWave) {
      R.CrossWave = true;
      R.WriterWave = C.WWave;
      R.WriterEpoch = C.WStamp - Base;
      R.Offset = R.What == Issue::None ? At : R.Offset;
    }
  }
  if (C.RStamp != S) {
    C.RStamp = S;
    C.RWave = Wave;
  } else if (C.RWave != Wave) {
    C.RWave = ManyReaders;
  }
}

void LdsShadow::writeCell(Cell &C, uint32_t At, uint16_t Wave, uint32_t S, Result &R) const {
  if (R.What == Issue::None) {
    if (C.WStamp == S && C.WWave != Wave) {
      R.What = Issue::RaceWriteWrite;
      R.Offset = At;
      R.OtherWave = C.WWave;
    } else if (C.RStamp == S && C.RWave != Wave) {
      R.What = Issue::RaceReadWrite;
      R.Offset = At;
      R.OtherWave = C.RWave;
    }
  }
  C.WStamp = S;
  C.WWave = Wave;
}

LdsShadow::Result LdsShadow::read(uint32_t Off, uint32_t N, uint16_t Wave, uint32_t Epoch,
                                  bool CheckInit) {
  const uint32_t S = stamp(Epoch);
  Result R;
  forCells(Off, N, [&](Cell &C, uint32_t At) { readCell(C, At, Wave, S, CheckInit, R); });
  return R;
}

LdsShadow::Result LdsShadow::write(uint32_t Off, uint32_t N, uint16_t Wave, uint32_t Epoch) {
  const uint32_t S = stamp(Epoch);
  Result R;
  forCells(Off, N, [&](Cell &C, uint32_t At) { writeCell(C, At, Wave, S, R); });
  return R;
}

void LdsShadow::markAtomic(uint32_t Off, uint32_t N, uint16_t Wave) {
  const uint32_t S = stamp(1);
  forCells(Off, N, [&](Cell &C, uint32_t) {
    if (C.WStamp <= Base) {
      C.WStamp = S;
      C.WWave = Wave;
    }
  });
}

} // namespace moegen::emu
