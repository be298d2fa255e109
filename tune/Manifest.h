//===- Manifest.h - What a tuning run compiled, for the measuring part --*- C++ -*-===//
//
// `moegen tune` on hip or cuda is two parts: compiling the candidates (MLIR,
// child processes) and measuring them (MLIR-free: check + timing from the
// kernel cache). The first writes this manifest into the cache directory;
// the second (`moegen tune` itself, or `moegen-tune-device` on a machine
// where only a static binary runs) reads it. One line per record, fields
// separated by tabs:
//
//   moegen-tune-manifest  1
//   spec       FILE                        the layer (FILE relative to the manifest)
//   target     CHIP  GFX  CU_NUM           what the kernels are for; the key columns
//   tokens     T,...
//   candidate  N  s1|s2  BLOCK_M  FILE  KERNEL_NAME  ID
//   order      T  N,...                    candidates to check at T, in order
//   pair       BLOCK_M  N1  N2  FILE  ID   the layer of stage 1 of N1 and stage 2 of N2
//   incumbent  T  FILE  KERNEL1  KERNEL2  ID   the --out table's row of T: measured beside
//                                          the candidates, it stays where it is faster
//   failed     ID  REASON                  a compile that failed (never measured)
//
// Every FILE's layer was compiled into the cache unless it is `failed`; a
// layer missing from the cache is an error naming its ID.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TUNE_MANIFEST_H
#define MOEGEN_TUNE_MANIFEST_H

#include "compiler/spec/Spec.h"

#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace moegen::tune {

struct ManifestLayer {
  std::string file; // relative to the manifest's directory
  std::string id;
};

struct ManifestCandidate : ManifestLayer {
  StageId stage = StageId::Stage1;
  int64_t blockM = 0;
  std::string kernelName;
};

struct ManifestPair : ManifestLayer {
  int64_t blockM = 0;
  size_t s1 = 0, s2 = 0; // candidate indices
};

/// The row the output table already has for a token count (its kernel names,
/// the layer they give the spec).
struct ManifestIncumbent : ManifestLayer {
  std::string kernelName1, kernelName2;
};

struct Manifest {
  std::string specFile;
  std::string chip, gfx;
  int64_t cuNum = 0;
  std::vector<int64_t> tokens;
  std::vector<ManifestCandidate> candidates;
  std::map<int64_t, std::vector<size_t>> order; // by token count
  std::vector<ManifestPair> pairs;
  std::map<int64_t, ManifestIncumbent> incumbents; // by token count
  std::map<std::string, std::string> failed; // id -> reason

  std::string print() const;
  /// Errors name the file, the line and what is wrong.
  static llvm::Expected<Manifest> parse(llvm::StringRef text, llvm::StringRef name);
  static llvm::Expected<Manifest> load(llvm::StringRef path);
  /// The pair of candidates s1 and s2, or null.
  const ManifestPair *pairOf(size_t s1, size_t s2) const;
};

/// The manifest's file name inside the cache directory.
inline constexpr const char *kManifestName = "tune-manifest.txt";

} // namespace moegen::tune

#endif // MOEGEN_TUNE_MANIFEST_H
