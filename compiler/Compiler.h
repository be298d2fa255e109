//===- Compiler.h - The moegen compiler API ---------------------*- C++ -*-===//
//
// Compiles a MoeSpec into code objects (gfx950 ELF, or sm_90a PTX), one per
// kernel of the layer.
// Used by the CLI and the runtime's JIT. Thread-safe: every call works in its
// own MLIR context. The kernels of one layer are compiled in parallel; the
// code objects are the same bytes whatever the number of threads.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_COMPILER_COMPILER_H
#define MOEGEN_COMPILER_COMPILER_H

#include "compiler/spec/Spec.h"
#include "compiler/spec/TargetInfo.h"
#include "compiler/target/CodeObject.h"
#include "compiler/target/CodeObjectInfo.h"
#include "templates/LayerKernels.h"

#include "llvm/Support/Error.h"

namespace moegen {

struct CompileOptions {
  std::string chip = TargetInfo::kDefaultChip.str();
  int codeObjectVersion = 6;
  int optLevel = 3;
  /// Threads compiling the kernels of the layer (and running the MLIR
  /// pipeline on its kernel modules); 0 means llvm::hardware_concurrency().
  unsigned threads = 0;
  /// When set, the IR of every pipeline stage is written here: 00-input.mlir,
  /// then the MLIR pass manager's file tree (one directory per operation a
  /// pass ran on, builtin_module_no-symbol-name/ and its gpu_module_<kernel>/
  /// subdirectories, with <N>_<pass>.mlir after each pass), then
  /// <kernel>.ll (translated), <kernel>.opt.ll (after O3) and <kernel>.s (ISA).
  std::string dumpDir;
  /// Only the kernels of these families (empty: every kernel of the layer).
  /// A target without templates for some families (sm_90a so far) compiles
  /// the others this way; asking for an unported family is an error.
  std::vector<KernelFamily> families;
};

struct CompiledKernel {
  KernelFamily family;
  KernelSignature signature;
  CodeObject code;
  KernelResources resources;
  double compileMs = 0; // LLVM IR translation, O3, codegen and link of this kernel
};

struct CompiledLayer {
  std::vector<CompiledKernel> kernels;
  double frontendMs = 0; // verification, template expansion and lowering, for all kernels
};

/// Runs moe-verify-schedule on `spec`; the error lists every diagnostic
/// ("<loc>: error: stage1: k_batch=3 does not divide K=3584 (model_dim)").
llvm::Error verifyLayer(const MoeSpec &spec, const CompileOptions &options);

/// Verifies and compiles every kernel of the layer.
llvm::Expected<CompiledLayer> compileLayer(const MoeSpec &spec, const CompileOptions &options);

} // namespace moegen

#endif // MOEGEN_COMPILER_COMPILER_H
