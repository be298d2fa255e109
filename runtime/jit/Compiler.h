//===- Compiler.h - The runtime's JIT compiler handle -----------*- C++ -*-===//
//
// A KernelSource (runtime/api/KernelSource.h) that compiles what the cache
// does not have: compile on first use, then from memory or from the disk
// cache. Host applications that ship a prefilled cache need not link it.
//
//   auto jit = std::make_shared<moegen::runtime::Compiler>();   // $MOEGEN_CACHE_DIR, ...
//   auto spec = moegen::parseMoeSpecFile("layer.moe");
//   auto sort = jit->getKernel(*spec, moegen::runtime::Target(), moegen::KernelFamily::Sort);
//   // (*sort)->hsaco, (*sort)->meta.args, (*sort)->meta.blockSize
//
// Thread-safe. One compile per (spec, target) per process, and per cache
// directory across processes.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_JIT_COMPILER_H
#define MOEGEN_RUNTIME_JIT_COMPILER_H

#include "runtime/api/KernelSource.h"

namespace moegen::runtime {

using CompilerOptions = KernelSourceOptions;

class Compiler : public KernelSource {
public:
  explicit Compiler(CompilerOptions options = {}) : KernelSource(std::move(options)) {}

  /// KernelSource::verify and the `moe` dialect's verifiers, through
  /// moe-verify-schedule: what compiling would check first.
  llvm::Error verify(const MoeSpec &spec, const Target &target = Target(),
                     llvm::ArrayRef<KernelFamily> families = {}) const override;

protected:
  llvm::Expected<std::vector<KernelBinary>>
  compileMissing(const PreparedLayer &layer, const TargetInfo &target,
                 llvm::ArrayRef<cache::PlannedKernel> planned) override;
};

} // namespace moegen::runtime

#endif // MOEGEN_RUNTIME_JIT_COMPILER_H
