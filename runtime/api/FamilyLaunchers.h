//===- FamilyLaunchers.h - How moegen's kernel families launch --*- C++ -*-===//
//
// The built-in FamilyLaunchers (MoeLayer.h) and the per-tier plan of the
// workspace, both read from the kernel templates' launch contracts
// (templates/<family>/*Kernel.h) and the kernel set a tier compiled to.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_API_FAMILYLAUNCHERS_H
#define MOEGEN_RUNTIME_API_FAMILYLAUNCHERS_H

#include "runtime/api/MoeLayer.h"
#include "templates/quant/QuantPlan.h"
#include "templates/reduce/ReducePlan.h"
#include "templates/sort/SortPlan.h"

#include <array>
#include <optional>

namespace moegen::runtime {

/// What a tier's workspace and output clearing depend on.
struct LayerPlan {
  MoeSpec spec;
  SortPlan sort;
  bool stage1 = false, stage2 = false, finish = false;
  std::optional<QuantPlan> quantInput, quantInter;
  std::optional<ReducePlan> reduce;
  /// MX activations carried as bf16 of their decoded values
  /// (carriesDecodedMx): inputQ, a quantized stage-1 output and interQ are
  /// bf16 rows without scales.
  bool decodedMx = false;
  /// The inter-stage quantization counts each sorted block's stage_ready
  /// down by one (interQuantCountsDown), whether or not this set runs it.
  bool stageReadyQuant = false;

  static LayerPlan make(const MoeSpec &spec, const KernelSet &kernels, const TargetInfo &target);
  /// The plan of a layer with these kernel families.
  static LayerPlan make(const MoeSpec &spec, llvm::ArrayRef<KernelFamily> families,
                        const TargetInfo &target);
  WorkspaceLayout layout(int64_t tokens) const;
  /// Stage 2 adds packed bf16 atomics into the (cleared) output.
  bool atomicOutput() const { return stage2 && !reduce; }
};

/// A launcher per family, indexed by KernelFamily.
using FamilyLaunchers = std::array<FamilyLauncher, kNumKernelFamilies>;

/// moegen's launcher of every family.
FamilyLaunchers builtinLaunchers();

/// What the argument `name` of a family's kernel binds to: the launch's own
/// binding, else the one every family shares ("topk_ids", "sorted_ids",
/// "chunk_counts", "tokens", ...); nullopt for neither.
std::optional<ArgValue> bindingOf(const FamilyLaunch &launch, llvm::StringRef name);

} // namespace moegen::runtime

#endif // MOEGEN_RUNTIME_API_FAMILYLAUNCHERS_H
