//===- LayerSchedule.h - Which schedules a layer runs per tier --*- C++ -*-===//
//
// The decision MoeLayer.h documents: tuned row, else the fallback heuristic,
// else the spec's schedules; each step down is logged once per shape.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_API_LAYERSCHEDULE_H
#define MOEGEN_RUNTIME_API_LAYERSCHEDULE_H

#include "runtime/api/MoeLayer.h"
#include "runtime/dispatch/TunedTable.h"

#include <optional>

namespace moegen::runtime {

/// Applies a tuned row's kernel names (stage 1, then stage 2; "Null", a
/// 1-stage row's, keeps stage 2) to `spec`, or says in `why` which name does
/// not fit the layer.
bool applyKernelNames(MoeSpec &spec, llvm::StringRef name1, llvm::StringRef name2,
                      std::string &why);

class LayerScheduler {
public:
  static llvm::Expected<std::unique_ptr<LayerScheduler>> create(const MoeSpec &spec,
                                                                const LayerOptions &options);

  struct Candidate {
    ScheduleSource source;
    std::string origin;
    MoeSpec spec;
  };
  /// The schedules to try for `tokens`, best first; the last is always the
  /// spec's own. Stepping down from the tuned row is logged here.
  std::vector<Candidate> candidates(int64_t tokens);

  /// The first candidate whose kernels `kernels` provides (compiled, or
  /// found in the cache), with its kernels (every field but
  /// `tier` set).
  llvm::Expected<TierDispatch> choose(int64_t tokens, KernelSource &kernels);

private:
  std::optional<Candidate> fromTable(int64_t tokens, std::string &why);
  std::optional<Candidate> fromHeuristic(int64_t tokens, std::string &why);
  void logOnce(int64_t tokens, const llvm::Twine &message);

  MoeSpec spec;
  LayerOptions options;
  std::optional<dispatch::TunedTable> table;
  std::optional<dispatch::TunedKey> key;
  std::string keyError;
};

} // namespace moegen::runtime

#endif // MOEGEN_RUNTIME_API_LAYERSCHEDULE_H
