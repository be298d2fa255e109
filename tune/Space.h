//===- Space.h - The schedules a tuner tries ---------------------*- C++ -*-===//
//
// A tuner's candidates for one layer, per stage and sorting block (aiter's
// block_m), enumerated from axes of schedule parameters and pruned by the
// templates' own rules (checkLayer) before anything is compiled: a split
// that does not divide K, a tile the MFMA shape or LDS refuses, ... never
// reaches the compiler. A candidate must also be spelled by an aiter kernel
// name that reads back to the same schedule, so that the tuned table it
// lands in means what was measured.
//
// Like aiter's tuner, the stages are tuned apart: a stage-1 candidate is a
// whole layer whose stage 2 is the partner schedule (the spec's stage 2 on
// the same block_m, or where that breaks a rule there, the first of the
// stage-2 axis values that does not), and the other way round. The chosen
// pair is compiled and checked again as one layer before a row is written.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TUNE_SPACE_H
#define MOEGEN_TUNE_SPACE_H

#include "compiler/spec/Spec.h"
#include "compiler/spec/TargetInfo.h"

#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace moegen::tune {

/// The values tried for each schedule parameter.
struct SearchSpace {
  std::vector<int64_t> blockM{32, 64, 128};
  std::vector<int64_t> tileN1{32, 64, 128, 256}, tileK1{128, 256};
  std::vector<int64_t> kBatch1{1, 2, 4, 7}, kWave1{1, 2, 4}, wavesPerEU1{1, 2, 3, 4};
  /// Empty: none, and the activation format's fused quantization when the
  /// activations are MX.
  std::vector<FusedQuant> fusedQuant1;
  std::vector<int64_t> tileN2{64, 128, 256}, tileK2{128, 256}, wavesPerEU2{0, 2, 4};
  /// Stage 2's M tiles; empty: the sorting block (block_m). A smaller one
  /// that divides block_m runs several M tiles per sorting block (sm_90a:
  /// wgmma stage 1 on 128-row blocks with stage 2 on 64-row tiles).
  std::vector<int64_t> tileM2;
  std::vector<ReduceMode> reduce2{ReduceMode::Atomic, ReduceMode::Reduce};
  /// How sm_90a decodes the MXFP4 weights (gfx950 takes only `mixed`).
  std::vector<WeightDecode> weightDecode1{WeightDecode::Mixed}, weightDecode2{WeightDecode::Mixed};
  /// sm_90a's steps of register weights loaded ahead; 0: the plan's.
  std::vector<int64_t> prefetch1{0}, prefetch2{0};
  /// gfx950's workgroup regrouping over the XCDs: 1 only by default, as the
  /// latency model that ranks candidates has no L2s to tell the values apart.
  std::vector<int64_t> xcdSwizzle1{1}, xcdSwizzle2{1};
  /// sm_90a: stage 2 beside stage 1's last round (rows) or after its grid;
  /// `rows` only by default: a stage timed on its own cannot tell them
  /// apart, only a layer's graph replays (--graph-rank) can.
  std::vector<Stage2Wait> wait2{Stage2Wait::Rows};

  /// The defaults for `target`: aiter's, and on sm_90a also sorting blocks
  /// of 48 and 80 rows (the H200 tables' 1024-16384-token rows take them:
  /// they pad an expert's 35-80 rows to one block; docs/sm90a.md), both
  /// weight decodings and stage 1 with the plan's steps of weights ahead and
  /// with two (which is faster depends on the token count).
  static SearchSpace defaultsFor(const TargetInfo &target);

  /// Applies "key=v1,v2,..." (keys: block_m, stage1.tile_n, stage1.tile_k,
  /// stage1.k_batch, stage1.k_wave, stage1.waves_per_eu, stage1.fused_quant,
  /// stage1.weight_decode, stage1.prefetch, stage1.xcd_swizzle, stage2.tile_m,
  /// stage2.tile_n, stage2.tile_k, stage2.waves_per_eu, stage2.reduce,
  /// stage2.weight_decode, stage2.prefetch, stage2.xcd_swizzle).
  llvm::Error setAxis(llvm::StringRef assignment);
  /// The axis keys setAxis accepts.
  static std::vector<std::string> axisKeys();
};

/// One stage schedule to try, as the layer that is compiled for it.
struct Candidate {
  StageId stage = StageId::Stage1;
  int64_t blockM = 0;
  MoeSpec layer;          // the candidate's stage plus the partner stage
  std::string id;         // stable, unique: what ties are broken by and the journal keys
  std::string kernelName; // aiter's name of the candidate's stage
};

struct SpaceReport {
  int64_t generated = 0, kept = 0;
  /// Rejections by reason, "stage1 k_batch" / "name" / ...: counts.
  std::map<std::string, int64_t> rejected;
  /// Block sizes skipped because the partner stage breaks a rule there
  /// (the spec's, and every schedule of that stage's axis values).
  std::vector<std::string> skipped;
  /// Block sizes where the spec's partner schedule breaks a rule and one
  /// from the partner stage's axis values stands in.
  std::vector<std::string> partners;
  int64_t rejectedTotal() const;
  /// "generated 2304, rejected 1800 (stage1 k_batch 600, ...), kept 504".
  std::string summary(size_t topReasons = 5) const;
};

/// The candidate's identity: "s1 bm32 t32x64x256 kb1 kw2 w4 fp4" or
/// "s2 bm32 t32x128x128 w0 atomic".
std::string candidateId(const MoeSpec &layer, StageId stage);

/// Every candidate of `space` for `spec`, kept by the rules, in a fixed order
/// (block_m, then the axes in declaration order).
std::vector<Candidate> enumerateCandidates(const MoeSpec &spec, const SearchSpace &space,
                                           const TargetInfo &target, SpaceReport &report);

/// The layer of a chosen pair: stage 1 of `s1`, stage 2 of `s2` (same
/// block_m).
MoeSpec combine(const Candidate &s1, const Candidate &s2);

} // namespace moegen::tune

#endif // MOEGEN_TUNE_SPACE_H
