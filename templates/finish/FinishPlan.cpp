//===- FinishPlan.cpp - The split-K finishing kernel's contract -----------===//

#include "templates/finish/FinishPlan.h"

#include "compiler/spec/DslParser.h"

#include "llvm/ADT/Hashing.h"

#include <cstdio>

namespace moegen {

std::string finishKernelSymbol(const MoeSpec &spec) {
  const StageSchedule &s = spec.stage1;
  const Problem &p = spec.problem;
  llvm::hash_code h =
      llvm::hash_combine(p.topk, p.doweightStage1, printActivation(spec.activation));
  char hex[17];
  snprintf(hex, sizeof(hex), "%08x", static_cast<uint32_t>(static_cast<size_t>(h)));
  return "moe_finish_i" + std::to_string(p.interDim) + "_kb" + std::to_string(s.kBatch) + "_" +
         toString(s.kBatchMode).str() + "_" + toString(s.fusedQuant).str() + "_" + hex;
}

KernelSignature finishKernelSignature(llvm::StringRef symbol) {
  using K = KernelArgKind;
  return {symbol.str(),
          {{"partials", K::Pointer},
           {"sorted_ids", K::Pointer},
           {"sorted_weights", K::Pointer},
           {"num_valid_ids", K::Pointer},
           {"out", K::Pointer},
           {"out_scale", K::Pointer},
           {"tokens", K::I32}},
          kFinishThreads};
}

std::array<int64_t, 3> finishGrid(const MoeSpec &spec, int64_t maxPaddedRows) {
  int64_t threads = maxPaddedRows * (spec.problem.interDim / 32);
  return {(threads + kFinishThreads - 1) / kFinishThreads, 1, 1};
}

} // namespace moegen
