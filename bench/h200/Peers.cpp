//===- Peers.cpp - Published H200 times of other MoE implementations ------===//
//
// Numbers from shared/design/PEERS-H200.md ("Whole MoE after routing prep
// (`core`), us, median", measured 2026-11-29 on one H200, driver 580.159.04),
// without its estimated best-config columns.
//
//===----------------------------------------------------------------------===//

#include "bench/h200/Peers.h"

namespace moegen::bench {
namespace {

// tokens, torch_gmm, vllm_bf16_def, vllm_bf16_tun, vllm_fp8_blk, tk_mxfp4
const PeerTimes kShapeA[] = {
    {1, {100, 52.0, 50.3, 45.0, 42.8}},     {4, {238, 136, 139, 109, 78.8}},
    {16, {714, 455, 444, 309, 211}},        {64, {1757, 1213, 1157, 796, 522}},
    {256, {2515, 1795, 1734, 1154, 749}},   {1024, {2926, 2678, 1809, 1302, 1369}},
    {2048, {3444, 2985, 1951, 1450, 1437}}, {4096, {4535, 3971, 2466, 2363, 2116}},
    {8192, {7174, 5862, 3966, 3790, 4113}}, {16384, {14071, 10399, 6307, 6617, 6518}},
};

const PeerTimes kShapeB[] = {
    {1, {86.2, 61.6, 39.7, 48.8, 58.7}},    {4, {179, 104, 92.8, 72.3, 73.4}},
    {16, {474, 311, 286, 169, 147}},        {64, {964, 646, 597, 344, 293}},
    {256, {1166, 725, 677, 421, 317}},      {1024, {1539, 1126, 832, 606, 597}},
    {2048, {2041, 1517, 1031, 876, 896}},   {4096, {3447, 2455, 1429, 1457, 1336}},
    {8192, {5841, 3869, 2401, 2641, 2312}}, {16384, {11138, 7184, 4234, 4934, 4217}},
};

const PeerShape kShapes[] = {
    {"A", "Kimi-K3 TP8", 3584, 384, 896, 16, kShapeA},
    {"B", "DeepSeek-V3 TP8", 7168, 256, 256, 8, kShapeB},
};

} // namespace

llvm::StringRef toString(Peer p) {
  switch (p) {
  case Peer::TorchGmm:
    return "torch_gmm";
  case Peer::VllmBf16Default:
    return "vllm_bf16_def";
  case Peer::VllmBf16Tuned:
    return "vllm_bf16_tun";
  case Peer::VllmFp8Block:
    return "vllm_fp8_blk";
  case Peer::TkMxfp4:
    return "tk_mxfp4";
  case Peer::Count:
    break;
  }
  return "?";
}

Peer PeerTimes::best() const {
  Peer best = Peer::TorchGmm;
  for (size_t i = 1; i < static_cast<size_t>(Peer::Count); ++i)
    if (us[i] < of(best))
      best = static_cast<Peer>(i);
  return best;
}

std::optional<PeerShape> peerShapeOf(const Problem &p) {
  for (const PeerShape &s : kShapes)
    if (s.modelDim == p.modelDim && s.interDim == p.interDim && s.experts == p.experts &&
        s.topk == p.topk)
      return s;
  return std::nullopt;
}

std::optional<PeerTimes> peerTimesAt(const PeerShape &shape, int64_t tokens) {
  for (const PeerTimes &t : shape.times)
    if (t.tokens == tokens)
      return t;
  return std::nullopt;
}

} // namespace moegen::bench
