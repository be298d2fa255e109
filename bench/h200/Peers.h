//===- Peers.h - Published H200 times of other MoE implementations -*- C++ -*-===//
//
// The whole-MoE times (`core`: everything after routing prep, median per call
// of CUDA-graph replays with rotated inputs) that shared/design/PEERS-H200.md
// measured on one H200 for its two shapes, per token count. moegen's time
// includes its sorting, which `core` does not: the comparison is against the
// peers' faster number.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_BENCH_H200_PEERS_H
#define MOEGEN_BENCH_H200_PEERS_H

#include "compiler/spec/Spec.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace moegen::bench {

/// The peers, in the document's column order.
enum class Peer : uint8_t {
  TorchGmm,
  VllmBf16Default,
  VllmBf16Tuned,
  VllmFp8Block,
  TkMxfp4,
  Count
};
llvm::StringRef toString(Peer p);

struct PeerTimes {
  int64_t tokens = 0;
  double us[static_cast<size_t>(Peer::Count)] = {};
  double of(Peer p) const { return us[static_cast<size_t>(p)]; }
  /// The fastest peer at this token count.
  Peer best() const;
};

/// The shapes the document measured: "A" and "B", with their problem sizes.
struct PeerShape {
  llvm::StringRef name;        // "A", "B"
  llvm::StringRef description; // "Kimi-K3 TP8", ...
  int64_t modelDim, interDim, experts, topk;
  llvm::ArrayRef<PeerTimes> times;
};

/// The document's shape of `p` (its four sizes), if it measured one.
std::optional<PeerShape> peerShapeOf(const Problem &p);
/// The times at exactly `tokens`, if measured.
std::optional<PeerTimes> peerTimesAt(const PeerShape &shape, int64_t tokens);

} // namespace moegen::bench

#endif // MOEGEN_BENCH_H200_PEERS_H
