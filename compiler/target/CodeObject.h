//===- CodeObject.h - LLVM dialect kernels to gfx950 code objects -*- C++ -*-===//
//
// Fully in-process: MLIR (LLVM + ROCDL dialects) -> LLVM IR -> LLVM O3 ->
// AMDGPU TargetMachine (gfx950) -> relocatable object -> liblld ELF link ->
// .hsaco. For sm_90a: MLIR (LLVM + NVVM dialects) -> LLVM IR -> O3 -> NVPTX
// TargetMachine -> PTX text, which the CUDA driver compiles at load.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_COMPILER_TARGET_CODEOBJECT_H
#define MOEGEN_COMPILER_TARGET_CODEOBJECT_H

#include "compiler/spec/TargetInfo.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <string>
#include <vector>

namespace moegen {

struct CodeObjectOptions {
  std::string chip = TargetInfo::kDefaultChip.str();
  /// AMDHSA code object version. 6 by default: LLVM 22's default, and it
  /// lets one code object name a generic target; ROCm 6.x+ loads it. 5 is
  /// available for older runtimes.
  int abi = 6;
  int optLevel = 3;
};

/// Receives the text of one stage of code generation ("llvm" before
/// optimization, "llvm-opt" after, "isa") for --dump-ir.
using StageDumper = std::function<void(llvm::StringRef stage, llvm::StringRef text)>;

struct CodeObject {
  std::vector<char> hsaco;   // the linked ELF code object; PTX text + NUL for sm_90a
  std::vector<char> bitcode; // the optimized LLVM IR, as bitcode (what the emulator runs)
  std::string isa;           // the assembly LLVM printed (PTX for sm_90a)
  /// LLVM's warnings while generating code (e.g. an unmet waves_per_eu).
  std::vector<std::string> warnings;
};

/// Compiles one gpu.module already lowered to the LLVM dialect.
llvm::Expected<CodeObject> emitCodeObject(mlir::gpu::GPUModuleOp module,
                                          const CodeObjectOptions &options,
                                          const StageDumper &dump = nullptr);

/// Makes the AMDGPU target available to LLVM (idempotent, thread-safe).
void initializeAMDGPUTarget();
/// Makes the NVPTX target available to LLVM (idempotent, thread-safe).
void initializeNVPTXTarget();

} // namespace moegen

#endif // MOEGEN_COMPILER_TARGET_CODEOBJECT_H
