//===- LdsShadowTest.cpp - The LDS race shadow against a per-byte model ---===//
//
// LdsShadow keeps one history per uniform 16-byte piece and stamps across
// workgroups; this model keeps the rule in its plainest form (a cell per
// byte, cleared per workgroup, visited byte by byte) and both must report the
// same thing for random access sequences.
//
//===----------------------------------------------------------------------===//
#include "emulator/LdsShadow.h"

#include "gtest/gtest.h"

#include <random>

using namespace moegen::emu;

namespace {

class ByteModel {
public:
  void reset(uint32_t Bytes) { Cells.assign(Bytes, Cell()); }

  LdsShadow::Result read(uint32_t Off, uint32_t N, uint16_t Wave, uint32_t Epoch, bool CheckInit) {
    LdsShadow::Result R;
    for (uint32_t B = Off; B < Off + N; ++B) {
      Cell &C = Cells[B];
      if (C.WEpoch == 0) {
        if (CheckInit && R.What == LdsShadow::Issue::None) {
          R.What = LdsShadow::Issue::Uninit;
          R.Offset = B;
        }
      } else if (C.WWave != Wave) {
        if (C.WEpoch == Epoch) {
          if (R.What == LdsShadow::Issue::None) {
            R.What = LdsShadow::Issue::RaceWriteRead;
            R.Offset = B;
            R.OtherWave = C.WWave;
          }
        } else if (!R.CrossWave) {
          R.CrossWave = true;
          R.WriterWave = C.WWave;
          R.WriterEpoch = C.WEpoch;
          R.Offset = R.What == LdsShadow::Issue::None ? B : R.Offset;
        }
      }
      if (C.REpoch != Epoch) {
        C.REpoch = Epoch;
        C.RWave = Wave;
      } else if (C.RWave != Wave) {
        C.RWave = LdsShadow::ManyReaders;
      }
    }
    return R;
  }

  LdsShadow::Result write(uint32_t Off, uint32_t N, uint16_t Wave, uint32_t Epoch) {
    LdsShadow::Result R;
    for (uint32_t B = Off; B < Off + N; ++B) {
      Cell &C = Cells[B];
      if (R.What == LdsShadow::Issue::None) {
        if (C.WEpoch == Epoch && C.WWave != Wave) {
          R.What = LdsShadow::Issue::RaceWriteWrite;
          R.Offset = B;
          R.OtherWave = C.WWave;
        } else if (C.REpoch == Epoch && C.RWave != Wave) {
          R.What = LdsShadow::Issue::RaceReadWrite;
          R.Offset = B;
          R.OtherWave = C.RWave;
        }
      }
      C.WEpoch = Epoch;
      C.WWave = Wave;
    }
    return R;
  }

  void markAtomic(uint32_t Off, uint32_t N, uint16_t Wave) {
    for (uint32_t B = Off; B < Off + N; ++B)
      if (Cells[B].WEpoch == 0) {
        Cells[B].WEpoch = 1;
        Cells[B].WWave = Wave;
      }
  }

private:
  struct Cell {
    uint32_t WEpoch = 0, REpoch = 0;
    uint16_t WWave = 0, RWave = 0;
  };
  std::vector<Cell> Cells;
};

void expectSame(const LdsShadow::Result &Got, const LdsShadow::Result &Want,
                const std::string &Where) {
  EXPECT_EQ(int(Got.What), int(Want.What)) << Where;
  EXPECT_EQ(Got.Offset, Want.Offset) << Where;
  EXPECT_EQ(Got.OtherWave, Want.OtherWave) << Where;
  EXPECT_EQ(Got.CrossWave, Want.CrossWave) << Where;
  EXPECT_EQ(Got.WriterWave, Want.WriterWave) << Where;
  EXPECT_EQ(Got.WriterEpoch, Want.WriterEpoch) << Where;
}

} // namespace

// Random reads, writes and atomics by 4 waves over a small LDS, half of them
// whole aligned 16-byte pieces (the shadow's fast path), the others of 1..32
// bytes anywhere (splitting those pieces), with barriers (epochs) and new
// workgroups in between; an LDS size that is not a multiple of 16 too.
// Issues are frequent, and the shadow must find the same first one as the
// model.
TEST(LdsShadow, MatchesPerByteModel) {
  std::mt19937 Gen(12345);
  LdsShadow Shadow;
  ByteModel Model;
  int Issues = 0, Cross = 0;
  for (int Group = 0; Group < 60; ++Group) {
    const uint32_t Bytes = Group < 40 ? 96 : 100;
    Shadow.reset(Bytes);
    Model.reset(Bytes);
    uint32_t Epoch = 1;
    for (int Step = 0; Step < 400; ++Step) {
      const unsigned Op = Gen() % 16;
      if (Op == 0) {
        ++Epoch;
        continue;
      }
      uint32_t N, Off;
      if (Gen() % 2) {
        N = 16 * (1 + Gen() % 2);
        Off = 16 * (Gen() % ((Bytes - N) / 16 + 1));
      } else {
        N = 1 + Gen() % 32;
        Off = Gen() % (Bytes - N + 1);
      }
      const uint16_t Wave = uint16_t(Gen() % 4);
      const std::string Where = "group " + std::to_string(Group) + " step " + std::to_string(Step);
      if (Op == 1) {
        Shadow.markAtomic(Off, N, Wave);
        Model.markAtomic(Off, N, Wave);
      } else if (Op < 8) {
        LdsShadow::Result Want = Model.write(Off, N, Wave, Epoch);
        expectSame(Shadow.write(Off, N, Wave, Epoch), Want, Where + " write");
        Issues += Want.What != LdsShadow::Issue::None;
      } else {
        const bool CheckInit = Op != 15;
        LdsShadow::Result Want = Model.read(Off, N, Wave, Epoch, CheckInit);
        expectSame(Shadow.read(Off, N, Wave, Epoch, CheckInit), Want, Where + " read");
        Issues += Want.What != LdsShadow::Issue::None;
        Cross += Want.CrossWave;
      }
      if (::testing::Test::HasFailure())
        return;
    }
  }
  // The sequence exercised both the reports and the clean path.
  EXPECT_GT(Issues, 100);
  EXPECT_GT(Cross, 100);
}

// A workgroup's history does not leak into the next one, whatever size the
// shadow had: a byte written in the last workgroup reads as never written.
TEST(LdsShadow, NewWorkgroupForgetsHistory) {
  LdsShadow Shadow;
  Shadow.reset(64);
  EXPECT_EQ(Shadow.write(0, 16, 1, 1).What, LdsShadow::Issue::None);
  EXPECT_EQ(Shadow.read(0, 16, 2, 2, true).What, LdsShadow::Issue::None);
  for (int Group = 0; Group < 3; ++Group) {
    Shadow.reset(64);
    LdsShadow::Result R = Shadow.read(4, 4, 1, 1, true);
    EXPECT_EQ(R.What, LdsShadow::Issue::Uninit);
    EXPECT_EQ(R.Offset, 4u);
    // Bytes the old workgroup read in epoch 2 (by wave 2): writing them in
    // this workgroup's epoch 2 is no race.
    EXPECT_EQ(Shadow.write(8, 8, 3, 2).What, LdsShadow::Issue::None);
  }
}

// Epoch numbers as large as a stamp can hold: the shadow restarts its stamps
// and keeps the current workgroup's history.
TEST(LdsShadow, HugeEpochsKeepHistory) {
  LdsShadow Shadow;
  Shadow.reset(32);
  EXPECT_EQ(Shadow.write(0, 8, 0, 1).What, LdsShadow::Issue::None);
  const uint32_t Late = 0xFFFFFFF0u;
  EXPECT_EQ(Shadow.write(8, 8, 0, Late).What, LdsShadow::Issue::None);
  // Another wave in the same (late) epoch: a race on bytes 8..15, and a
  // cross-wave read of epoch 1's bytes 0..7.
  LdsShadow::Result Race = Shadow.read(8, 4, 1, Late, true);
  EXPECT_EQ(Race.What, LdsShadow::Issue::RaceWriteRead);
  EXPECT_EQ(Race.Offset, 8u);
  LdsShadow::Result Old = Shadow.read(0, 8, 1, Late, true);
  EXPECT_EQ(Old.What, LdsShadow::Issue::None);
  EXPECT_TRUE(Old.CrossWave);
  EXPECT_EQ(Old.WriterEpoch, 1u);
  Shadow.reset(32);
  EXPECT_EQ(Shadow.read(0, 1, 0, 1, true).What, LdsShadow::Issue::Uninit);
}
