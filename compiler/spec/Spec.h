//===- Spec.h - The MoE layer specification ---------------------*- C++ -*-===//
//
// A MoeSpec is everything moegen needs to generate the kernels of one MoE
// layer: the problem, the number formats, the activation and the schedule of
// each stage. It is what the .moe DSL parses into, what the `moe` dialect
// carries as attributes, and the single source the reference reads.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_COMPILER_SPEC_SPEC_H
#define MOEGEN_COMPILER_SPEC_SPEC_H

#include "compiler/spec/Expr.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace moegen {

/// Element formats of tensors. MX formats carry one e8m0 scale per 32
/// consecutive elements along K.
enum class DType : uint8_t { BF16, MXFP8, MXFP4, F32 };

enum class GateUpLayout : uint8_t {
  Separated,   // all gate rows, then all up rows ("GGUU")
  Interleaved, // gate and up interleaved in 16-row groups ("GUGU")
};

enum class FusedQuant : uint8_t { None, FP4, FP8 };

/// How stage 2 sums the top-k contributions of a token.
enum class ReduceMode : uint8_t {
  Atomic, // packed bf16 atomics into a zeroed output
  Reduce, // per-slot rows, then a reduction kernel
};

/// How split-K partials across workgroups (k_batch > 1) are combined.
enum class KBatchMode : uint8_t {
  Atomic,        // f32 atomics into a zeroed buffer, then a finishing kernel
  Deterministic, // per-split workspace, then an ordered reduction
};

/// How an sm_90a register-weight GEMM decodes its MXFP4 weights to bf16
/// (Hopper has no fp4 MMA; gfx950 multiplies e2m1 natively and takes only
/// the default).
enum class WeightDecode : uint8_t {
  Mixed,      // half the rows through byte tables (integer pipe), half by two bf16 products
  Arithmetic, // every row by one bf16 product (FMA pipe); blocks with scales above 2 re-run
};

/// What stage 2 waits for before it reads its A rows, where the target
/// launches a kernel beside the one before it (sm_90a: programmatic
/// dependent launch; templates/gemm/StageReady.h). Elsewhere every kernel
/// starts after the one before it, whichever is set.
enum class Stage2Wait : uint8_t {
  Rows, // each M tile's rows, a sorted block at a time: starts beside stage 1's last round
  Grid, // the whole grid before it, at its start
};

struct Problem {
  int64_t modelDim = 0; // hidden size: K of stage 1, N of stage 2
  int64_t interDim = 0; // per-expert intermediate size: N of stage 1, K of stage 2
  int64_t experts = 0;
  int64_t topk = 0;
  GateUpLayout gateUp = GateUpLayout::Separated;
  bool doweightStage1 = false; // topk weights applied in stage 1 (else stage 2)
};

struct Formats {
  DType activation = DType::BF16; // bf16 (a16w4), mxfp8 (a8w4), mxfp4 (a4w4)
  DType weight = DType::MXFP4;
  DType output = DType::BF16;
};

enum class StageId : uint8_t { Stage1 = 1, Stage2 = 2 };

struct StageSchedule {
  int64_t tileM = 32;
  int64_t tileN = 128;
  int64_t tileK = 256;
  int64_t kBatch = 1;                       // split-K across workgroups
  int64_t kWave = 1;                        // split-K across the waves of one workgroup
  int64_t wavesPerEU = 0;                   // occupancy cap in waves per SIMD; 0 = none
  FusedQuant fusedQuant = FusedQuant::None; // stage 1 only
  KBatchMode kBatchMode = KBatchMode::Atomic;
  ReduceMode reduce = ReduceMode::Atomic; // stage 2 only
  WeightDecode weightDecode = WeightDecode::Mixed;
  /// sm_90a register-weight GEMMs: K steps of MXFP4 weights loaded ahead into
  /// registers; 0 = what the register plan allows (Sm90GemmPlan.h).
  int64_t prefetch = 0;
  /// gfx950: the launch's workgroups regrouped in this many groups so that
  /// each group (the workgroups one XCD receives, dispatch being round-robin
  /// over the XCDs) computes consecutive tiles (GemmPlan::xcdSwizzledId); 1:
  /// dispatch order.
  int64_t xcdSwizzle = 1;
  Stage2Wait wait = Stage2Wait::Rows; // stage 2 only
};

/// Where a part of a spec was written: "file:line:col" of a .moe key, or
/// "--set" for a command-line override.
struct SourceLoc {
  std::string file;
  unsigned line = 0, col = 0;
};

struct MoeSpec {
  std::string name;
  Problem problem;
  Formats formats;
  ActivationExpr activation;
  StageSchedule stage1;
  StageSchedule stage2;
  /// Source locations by key: "layer", "stage1", "stage2", "topk",
  /// "stage1.k_batch", ... Filled by the DSL parser; empty for specs built in C++.
  std::map<std::string, SourceLoc> locations;

  const StageSchedule &stage(StageId id) const { return id == StageId::Stage1 ? stage1 : stage2; }
  StageSchedule &stage(StageId id) { return id == StageId::Stage1 ? stage1 : stage2; }

  /// The reduction length of a stage: model_dim for stage 1, inter_dim for 2.
  int64_t stageK(StageId id) const {
    return id == StageId::Stage1 ? problem.modelDim : problem.interDim;
  }
  /// The output width of a stage: inter_dim (x2 for gate+up) / model_dim.
  int64_t stageN(StageId id) const {
    return id == StageId::Stage1 ? problem.interDim : problem.modelDim;
  }
};

// Keyword spellings shared by the DSL, the dialect's attribute syntax and the
// CLI. Each parse* returns nullopt for an unknown word.
llvm::StringRef toString(DType t);
llvm::StringRef toString(GateUpLayout l);
llvm::StringRef toString(FusedQuant q);
llvm::StringRef toString(ReduceMode m);
llvm::StringRef toString(KBatchMode m);
llvm::StringRef toString(StageId s);
llvm::StringRef toString(WeightDecode d);
llvm::StringRef toString(Stage2Wait w);
std::optional<DType> parseDType(llvm::StringRef s);
std::optional<GateUpLayout> parseGateUpLayout(llvm::StringRef s);
std::optional<FusedQuant> parseFusedQuant(llvm::StringRef s);
std::optional<ReduceMode> parseReduceMode(llvm::StringRef s);
std::optional<KBatchMode> parseKBatchMode(llvm::StringRef s);
std::optional<WeightDecode> parseWeightDecode(llvm::StringRef s);
std::optional<Stage2Wait> parseStage2Wait(llvm::StringRef s);

/// Structural equality and hash of everything that shapes the kernels (the
/// source locations are not part of it). Cheap: no printing.
bool sameSpec(const MoeSpec &a, const MoeSpec &b);
size_t hashSpec(const MoeSpec &s);

/// aiter's name of an activation dtype pairing, e.g. "a4w4" for mxfp4 x mxfp4.
std::string precisionTag(const Formats &f);

} // namespace moegen

#endif // MOEGEN_COMPILER_SPEC_SPEC_H
