//===- CompiledLayers.h - Each layer compiled once --------------*- C++ -*-===//
//
// The gfx950 table benches compile the layer of many rows and token counts,
// most of them the same: this compiles a spec once, keyed by its printed
// form, and keeps the result for the bench's run.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_BENCH_COMMON_COMPILEDLAYERS_H
#define MOEGEN_BENCH_COMMON_COMPILEDLAYERS_H

#include "compiler/Compiler.h"
#include "compiler/spec/DslParser.h"

#include <map>
#include <string>

namespace moegen::bench {

class CompiledLayers {
public:
  /// `spec`'s layer, compiled on its first use (a failure is not kept).
  llvm::Expected<const CompiledLayer *> get(const MoeSpec &spec) {
    std::string key = printMoeSpec(spec);
    if (auto it = layers.find(key); it != layers.end())
      return &it->second;
    auto layer = compileLayer(spec, CompileOptions());
    if (!layer)
      return layer.takeError();
    return &(layers[key] = std::move(*layer));
  }
  size_t size() const { return layers.size(); }

private:
  std::map<std::string, CompiledLayer> layers;
};

} // namespace moegen::bench

#endif // MOEGEN_BENCH_COMMON_COMPILEDLAYERS_H
