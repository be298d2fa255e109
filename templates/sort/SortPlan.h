//===- SortPlan.h - The MoE sorting kernels' plan and rules -----*- C++ -*-===//
//
// The sort runs as three kernels over token chunks (templates/sort/SortKernel.h
// describes the algorithm): sort_count (a histogram per chunk), sort_scan
// (per expert, the chunks' bases and the expert's total) and sort (the
// segment layout and the scatter). A chunk is `chunkTokens` consecutive
// tokens, so the work grows with the token count across workgroups. Up to
// singleEntries entries (per target) one sort workgroup counts and places
// them all and is the only launch (the other two get empty grids).
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEMPLATES_SORT_SORTPLAN_H
#define MOEGEN_TEMPLATES_SORT_SORTPLAN_H

#include "compiler/spec/Spec.h"
#include "compiler/spec/TargetInfo.h"
#include "templates/KernelSignature.h"
#include "templates/ScheduleIssue.h"

#include <algorithm>
#include <array>

namespace moegen {

struct SortPlan {
  /// A sorting block's rows (stage 1's tile_m): any multiple of 16, the MMA
  /// M of both targets (not only aiter's powers of two: 48-, 80- or 96-row
  /// blocks pad an expert's rows less where it has 35-95 of them).
  static constexpr int64_t kBlockMMultiple = 16;
  int64_t blockM = 0;
  int64_t experts = 0;
  int64_t topk = 0;
  /// Lanes of a wave (64 on gfx950, 32 on sm_90a): the placing walks a
  /// wave's part a wave of entries at a time, with one ballot per step.
  int64_t waveSize = 64;
  /// Threads of a sort_count or sort workgroup (kThreads on gfx950; on
  /// sm_90a the most, up to kThreads, whose sort LDS fits the static
  /// shared memory, at least kMinNvptxThreads; planSort).
  int64_t threads = kThreads;
  /// sort takes its LDS as dynamic shared memory (sm_90a: more experts than
  /// two warps' rows fit in the 48 KiB a kernel may declare statically); its
  /// launches provide scatterLdsBytes() (KernelSignature::dynamicSharedBytes).
  bool dynamicShared = false;
  /// Where stage 2 starts beside stage 1 (stagesOverlap,
  /// templates/TargetSupport.h): what sort stores into each sorted block's
  /// stage_ready counter where it writes the block's expert (stageReadyCount:
  /// stage 1's N tiles, plus one for an inter-stage quantization); 0 for none
  /// (no stage_ready argument).
  int64_t stageReadyCount = 0;
  /// Threads of a sort_scan workgroup (one wave).
  int64_t scanThreads = 64;
  /// Consecutive chunks a sort_scan lane scans at a time.
  int64_t scanPerLane = 4;
  /// (token, slot) entries a chunk holds at most (per target, planSort:
  /// kChunkEntries on gfx950, kNvptxChunkEntries on sm_90a, whose smaller
  /// workgroups gain from more of them); chunkTokens follows.
  static constexpr int64_t kChunkEntries = 2048;
  static constexpr int64_t kNvptxChunkEntries = 512;
  int64_t chunkTokens = 0;
  /// The most threads of a sort_count or sort workgroup, and the fewest
  /// sm_90a goes down to for many experts (two warps).
  static constexpr int64_t kThreads = 512;
  static constexpr int64_t kMinNvptxThreads = 64;

  int64_t waves() const { return threads / waveSize; }
  /// Entries a chunk holds at most.
  int64_t chunkEntries() const { return chunkTokens * topk; }
  /// Entries a sort_count thread counts at most (strided by threads).
  int64_t countPerThread() const { return (chunkEntries() + threads - 1) / threads; }
  /// Entries a sort lane counts and places at most (a wave's part, by waveSize).
  int64_t partPerLane() const {
    return ((chunkEntries() + waves() - 1) / waves() + waveSize - 1) / waveSize;
  }
  /// Token chunks of `tokens` tokens: at least one, so that the layout is
  /// written even without tokens.
  int64_t chunks(int64_t tokens) const {
    return tokens <= 0 ? 1 : (tokens + chunkTokens - 1) / chunkTokens;
  }
  /// The counts region: i32 [chunks, experts].
  int64_t countsBytes(int64_t tokens) const { return 4 * chunks(tokens) * experts; }
  /// The totals region: i32 [experts].
  int64_t totalsBytes() const { return 4 * experts; }
  /// LDS of sort_count (a histogram and a spare slot) and of sort (segment
  /// starts, a histogram and an owner row per wave, a total per wave for the
  /// workgroup scan); sort_scan, one wave, needs none.
  int64_t countLdsBytes() const { return 4 * (experts + 1); }
  int64_t scatterLdsBytes() const { return scatterLdsBytesFor(experts); }
  /// Words of a sort LDS buffer: whole 16-byte units, each buffer 16-byte
  /// aligned, as the histograms and owner rows are cleared 4 words a store.
  static int64_t scatterLdsWords(int64_t words) { return (words + 3) / 4 * 4; }
  /// The most experts whose sort LDS fits `limit` bytes with this plan's
  /// waves.
  int64_t maxExperts(int64_t limit) const {
    int64_t most = (limit / 4 - 3 * waves()) / (1 + 2 * waves()); // without the rounding
    while (most > 0 && scatterLdsBytesFor(most) > limit)
      --most;
    return most;
  }
  /// A wave's histogram row in sort: its experts and a spare slot.
  int64_t histRow() const { return experts + 1; }
  /// sort's LDS with `e` experts: segment starts, the waves' histogram and
  /// owner rows, the waves' totals.
  int64_t scatterLdsBytesFor(int64_t e) const {
    return 4 *
           (scatterLdsWords(e) + 2 * scatterLdsWords((e + 1) * waves()) + scatterLdsWords(waves()));
  }
  /// Experts each sort thread lays out (contiguous).
  int64_t expertsPerThread() const { return (experts + threads - 1) / threads; }

  /// Entries that one sort workgroup sorts by itself, without sort_count
  /// and sort_scan (one launch instead of three): kSingleEntries on gfx950;
  /// on sm_90a one chunk's (kNvptxChunkEntries), as there three queued
  /// kernels over several chunks beat one workgroup of at most 16 warps
  /// well below 8192 entries (docs/sm90a.md).
  static constexpr int64_t kSingleEntries = 8192;
  int64_t singleEntries = kSingleEntries;
  /// Entries that wave 0 of sort sorts in registers, one a lane, without LDS
  /// or barriers. Its loop runs once per expert present, and by the latency
  /// model it beats the workgroup's path up to about 40 of them, so it takes
  /// half a wave (gfx950 32, sm_90a 16), or a whole wave where the layer has
  /// at most half a wave of experts. sm_90a keeps the same rule: measured
  /// within 0.2 us of the workgroup's path there (launch-bound, docs/sm90a.md).
  int64_t tinyEntries = 0;
  /// Whether sort alone sorts `tokens` tokens, in one workgroup.
  bool singleChunk(int64_t tokens) const { return tokens * topk <= singleEntries; }
  /// Entries one sort workgroup takes.
  int64_t workgroupEntries(int64_t tokens) const {
    return singleChunk(tokens) ? std::max<int64_t>(0, tokens) * topk : chunkEntries();
  }
  /// Grids (x, y, z) for `tokens` tokens; empty ones are not launched.
  std::array<int64_t, 3> countGrid(int64_t tokens) const {
    return {singleChunk(tokens) ? 0 : chunks(tokens), 1, 1};
  }
  std::array<int64_t, 3> scanGrid(int64_t tokens) const {
    return {singleChunk(tokens) ? 0 : experts, 1, 1};
  }
  std::array<int64_t, 3> scatterGrid(int64_t tokens) const {
    return {singleChunk(tokens) ? 1 : chunks(tokens), 1, 1};
  }

  /// Sizes of the outputs for `tokens` tokens (aiter's formulas).
  int64_t maxPaddedRows(int64_t tokens) const { return tokens * topk + experts * blockM - topk; }
  int64_t maxBlocks(int64_t tokens) const { return (maxPaddedRows(tokens) + blockM - 1) / blockM; }
};

/// The sorted-id sentinel of padding rows: token = M, slot = topk.
inline uint32_t sortSentinel(int64_t tokens, int64_t topk) {
  return (static_cast<uint32_t>(topk) << 24) | static_cast<uint32_t>(tokens);
}

/// Symbols, unique per plan: "moe_sort_count_e896_k16", "moe_sort_scan_e896",
/// "moe_sort_e896_k16_bm32".
std::string sortCountKernelSymbol(const SortPlan &plan);
std::string sortScanKernelSymbol(const SortPlan &plan);
std::string sortKernelSymbol(const SortPlan &plan);

/// sort_count: topk_ids, chunk_counts, tokens.
KernelSignature sortCountKernelSignature(llvm::StringRef symbol, const SortPlan &plan);
/// sort_scan: chunk_counts, expert_totals, tokens.
KernelSignature sortScanKernelSignature(llvm::StringRef symbol, const SortPlan &plan);
/// sort: topk_ids, topk_weights, chunk_counts, expert_totals, sorted_ids,
/// sorted_weights, sorted_experts, num_valid_ids, tokens.
KernelSignature sortKernelSignature(llvm::StringRef symbol, const SortPlan &plan);

SortPlan planSort(const MoeSpec &spec, const TargetInfo &target, ScheduleIssues &issues);

} // namespace moegen

#endif // MOEGEN_TEMPLATES_SORT_SORTPLAN_H
