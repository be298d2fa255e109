//===- RotatedInputs.h - The per-call inputs of a timed graph ---*- C++ -*-===//
//
// One input set of a call: the hidden states (N(0,1) x 0.1, bf16 values, as
// the layer check's inputs) and the router's choice (N(0,1) scores per
// (token, expert), top-k, softmax weights renormalized over the k: the
// routing of PEERS-H200.md). Set r of a token count draws from seed
// 1234 + r; each token from a stream of its own, so that the tokens are
// generated in parallel and a token's values do not depend on the count.
// The weights are shared by every set (DeviceWeights).
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_BENCH_H200_ROTATEDINPUTS_H
#define MOEGEN_BENCH_H200_ROTATEDINPUTS_H

#include "compiler/spec/Spec.h"
#include "runtime/numerics/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace moegen::bench {

struct RotatedInputs {
  int64_t tokens = 0;
  std::vector<uint16_t> hidden; // [tokens, model_dim] bf16 bits
  std::vector<int32_t> topkIds; // [tokens, topk]
  std::vector<float> topkWeights;
  /// The distinct experts the routing hits.
  int64_t expertsHit() const;
};

RotatedInputs makeRotatedInputs(const Problem &p, int64_t tokens, int64_t set);

/// The stage-1 A of `tokens` (rows of in.hidden) for the reference: the bf16
/// rows in formats.activation, MX with RoundUp scales (the quantization
/// kernel's rule, and the layer check's inputs').
llvm::Expected<num::HostTensor> stage1Input(const MoeSpec &spec, const RotatedInputs &in,
                                            llvm::ArrayRef<int64_t> tokens);

} // namespace moegen::bench

#endif // MOEGEN_BENCH_H200_ROTATEDINPUTS_H
