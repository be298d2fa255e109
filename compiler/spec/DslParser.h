//===- DslParser.h - The .moe DSL: parse and print --------------*- C++ -*-===//
//
// A .moe file describes one MoE layer:
//
//   moe kimi_k3_tp8_a4w4 {
//     model_dim = 3584            # K of stage 1
//     inter_dim = 384             # per-expert intermediate size
//     experts = 896
//     topk = 16
//     gate_up = separated         # separated | interleaved
//     doweight = stage2           # which stage applies the top-k weights
//     activation_dtype = mxfp4    # bf16 (a16w4) | mxfp8 (a8w4) | mxfp4 (a4w4)
//     weight_dtype = mxfp4        # mxfp4 | mxfp8 | bf16
//     output_dtype = bf16
//     activation = situv2(beta = 4.0, linear_beta = 25.0)
//     stage1 { tile = 32x32x256; k_wave = 2; waves_per_eu = 4; fused_quant = fp4 }
//     stage2 { tile = 32x128x128; reduce = reduce }
//   }
//
// A user-written activation names its arguments and parameters:
//   activation = act(g, u; beta = 4.0, lb = 25.0) = beta*tanh(g/beta)*sigmoid(g) * lb*tanh(u/lb)
//
// Stage keys: tile, k_batch, k_batch_mode (atomic|deterministic), k_wave,
// waves_per_eu, fused_quant (stage1: none|fp4|fp8), reduce (stage2: atomic|reduce).
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_COMPILER_SPEC_DSLPARSER_H
#define MOEGEN_COMPILER_SPEC_DSLPARSER_H

#include "compiler/spec/Spec.h"

#include "llvm/Support/Error.h"

namespace moegen {

/// Parses .moe text. Errors read "<bufferName>:line:col: error: ..." followed
/// by the source line and a caret.
llvm::Expected<MoeSpec> parseMoeSpec(llvm::StringRef text, llvm::StringRef bufferName);

/// Reads and parses a .moe file.
llvm::Expected<MoeSpec> parseMoeSpecFile(llvm::StringRef path);

/// Reads a .moe file ("-": standard input), parses it and applies the
/// "section.key=value" overrides in order. The first error is returned.
llvm::Expected<MoeSpec> loadMoeSpec(llvm::StringRef path, llvm::ArrayRef<std::string> overrides);

/// Applies one "section.key=value" override (the CLI's --set), e.g.
/// "stage1.k_batch=2", "topk=8" or "activation=silu". The value is parsed
/// exactly as in a .moe file.
llvm::Error applySpecOverride(MoeSpec &spec, llvm::StringRef assignment);

/// Parses the value of an `activation =` statement on its own, e.g.
/// "situv2(beta = 4.0)" or "act(g, u; b = 2.0) = g * sigmoid(b * g) * u".
llvm::Expected<ActivationExpr> parseActivation(llvm::StringRef text);

/// Prints the canonical .moe text of a spec; parsing it gives the same spec.
std::string printMoeSpec(const MoeSpec &spec);

/// Prints only the activation, in the syntax of the `activation =` value.
std::string printActivation(const ActivationExpr &act);

} // namespace moegen

#endif // MOEGEN_COMPILER_SPEC_DSLPARSER_H
