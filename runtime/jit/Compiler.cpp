//===- Compiler.cpp - The runtime's JIT compiler handle -------------------===//

#include "runtime/jit/Compiler.h"

#include "compiler/Compiler.h"

namespace moegen::runtime {
namespace {

cache::ArgKind toArgKind(KernelArgKind k) {
  switch (k) {
  case KernelArgKind::Pointer:
    return cache::ArgKind::Pointer;
  case KernelArgKind::I32:
    return cache::ArgKind::I32;
  case KernelArgKind::F32:
    return cache::ArgKind::F32;
  }
  return cache::ArgKind::Pointer;
}

cache::KernelBinary toBinary(CompiledKernel &&k, const std::string &description) {
  cache::KernelBinary b;
  b.meta.family = k.family;
  b.meta.symbol = k.signature.symbol;
  for (const KernelArg &a : k.signature.args)
    b.meta.args.push_back({a.name, toArgKind(a.kind)});
  b.meta.blockSize = k.signature.blockSize;
  b.meta.dynamicSharedBytes = k.signature.dynamicSharedBytes;
  const KernelResources &r = k.resources;
  b.meta.vgprs = r.vgprs;
  b.meta.agprs = r.agprs;
  b.meta.sgprs = r.sgprs;
  b.meta.ldsBytes = r.ldsBytes;
  b.meta.scratchBytes = r.scratchBytes;
  b.meta.vgprSpills = r.vgprSpills;
  b.meta.sgprSpills = r.sgprSpills;
  b.meta.kernargBytes = r.kernargBytes;
  b.meta.codeBytes = r.codeBytes;
  b.meta.compileMs = k.compileMs;
  b.meta.description = description;
  b.hsaco.assign(k.code.hsaco.begin(), k.code.hsaco.end());
  b.bitcode.assign(k.code.bitcode.begin(), k.code.bitcode.end());
  return b;
}

CompileOptions compileOptions(const Target &target, int optLevel) {
  CompileOptions options;
  options.chip = target.chip;
  options.codeObjectVersion = target.codeObjectVersion;
  options.optLevel = optLevel;
  return options;
}

} // namespace

llvm::Error Compiler::verify(const MoeSpec &spec, const Target &target,
                             llvm::ArrayRef<KernelFamily> families) const {
  // The families must be the layer's (the base class says so by name).
  if (!families.empty())
    if (llvm::Error e = KernelSource::verify(spec, target, families))
      return e;
  CompileOptions options = compileOptions(target, this->options().optLevel);
  options.families.assign(families.begin(), families.end());
  return verifyLayer(spec, options);
}

llvm::Expected<std::vector<KernelBinary>>
Compiler::compileMissing(const PreparedLayer &layer, const TargetInfo &,
                         llvm::ArrayRef<cache::PlannedKernel>) {
  CompileOptions options = compileOptions(layer.target, this->options().optLevel);
  options.families = layer.families;
  auto compiled = compileLayer(layer.spec, options);
  if (!compiled)
    return compiled.takeError();
  std::string description = layer.spec.name + " for " + layer.target.id();
  std::vector<KernelBinary> out;
  for (CompiledKernel &k : compiled->kernels)
    out.push_back(toBinary(std::move(k), description));
  return out;
}

} // namespace moegen::runtime
