//===- KernelFamily.h - The kernel families a layer compiles to -*- C++ -*-===//
//
// The one registry of kernel families: templates plan them, the compiler
// builds them, the cache names its entries after them and the runtime
// launches them in this order. Their names are stable: they appear in cache
// entries, reports and diagnostics.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_COMPILER_SPEC_KERNELFAMILY_H
#define MOEGEN_COMPILER_SPEC_KERNELFAMILY_H

#include "compiler/spec/Spec.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace moegen {

/// In launch order: sort_count -> sort_scan -> sort -> (quant_input) ->
/// stage1 -> (finish) -> (quant_inter) -> stage2 -> (reduce).
enum class KernelFamily : uint8_t {
  SortCount,  // sorting, 1/3: per token chunk, its entries per expert
  SortScan,   // sorting, 2/3: per expert, the chunks' bases and its total
  Sort,       // sorting, 3/3: segment layout and scatter (aiter's format)
  QuantInput, // bf16 input -> MX activations of stage 1
  Stage1,     // gate+up GEMM, activation, optional fused quantization
  Finish,     // split-K partial sums of stage 1 -> activation (+ quantization)
  QuantInter, // stage-1 output -> MX activations of stage 2
  Stage2,     // down GEMM, top-k weights
  Reduce,     // per-slot rows of stage 2 -> output
};

inline constexpr size_t kNumKernelFamilies = 9;

/// Every family, in launch order.
llvm::ArrayRef<KernelFamily> allKernelFamilies();

/// "sort_count", "sort_scan", "sort", "quant_input", "stage1", "finish", "quant_inter", "stage2",
/// "reduce".
llvm::StringRef toString(KernelFamily family);

/// The family named `name`, or nullopt.
std::optional<KernelFamily> parseKernelFamily(llvm::StringRef name);

/// The families named, in the order given; an unknown name is an error that
/// lists the known ones: "unknown kernel family 'x' (families: sort_count, ...)".
llvm::Expected<std::vector<KernelFamily>> parseKernelFamilies(llvm::ArrayRef<std::string> names);

/// The stage whose schedule a family serves, and where its diagnostics point:
/// stage 1 for the sorting kernels, input quantization and the split-K finish; stage 2 for
/// the inter-stage quantization and the reduction.
StageId servedStage(KernelFamily family);

/// The family of a stage's GEMM.
inline KernelFamily gemmFamily(StageId stage) {
  return stage == StageId::Stage1 ? KernelFamily::Stage1 : KernelFamily::Stage2;
}

} // namespace moegen

#endif // MOEGEN_COMPILER_SPEC_KERNELFAMILY_H
