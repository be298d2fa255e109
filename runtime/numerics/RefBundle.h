//===- RefBundle.h - Inputs and reference outputs on disk -------*- C++ -*-===//
//
// What `moegen ref` writes: every input of a layer generated from a seed,
// the kernel-layout views of them (sorting, preshuffled weights, shuffled
// scales) and the reference outputs of both stages plus the exact f64 layer,
// each as .npy (packed formats as uint8 + side JSON, see Npy.h), and a
// manifest.json describing every file.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_NUMERICS_REFBUNDLE_H
#define MOEGEN_RUNTIME_NUMERICS_REFBUNDLE_H

#include "compiler/spec/Spec.h"
#include "runtime/numerics/Compare.h"
#include "runtime/numerics/Reference.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace moegen::num {

struct RefBundleOptions {
  uint64_t seed = 0;
  RefOptions ref;
};

struct RefBundleSummary {
  int64_t tokens = 0;
  std::vector<std::string> files;
  /// Stage-2 output of the quantized pipeline against the exact f64 layer.
  CompareResult vsExact;
  /// Accum::F32 against Accum::F64 of the same quantized pipeline (stage-2
  /// sums before output rounding).
  CompareResult f32VsF64;
  int64_t sortedRows = 0, validRows = 0;
  std::string text() const;
};

/// Generates, computes and writes everything into outDir (created if
/// missing).
llvm::Expected<RefBundleSummary> writeReferenceBundle(const MoeSpec &spec, int64_t tokens,
                                                      llvm::StringRef outDir,
                                                      const RefBundleOptions &opts = {});

} // namespace moegen::num

#endif // MOEGEN_RUNTIME_NUMERICS_REFBUNDLE_H
