//===- KernelName.h - aiter FlyDSL kernel names -----------------*- C++ -*-===//
//
// Parses the FlyDSL MoE kernel names of aiter's tuned tables and maps them to
// moegen stage schedules. Grammars:
//   flydsl_moe1_a{A}_w{B}_{OUT}_t{M}x{N}x{K} [_w{wpe}] [_kb{k}] [_bnt{b}]
//       [_go] [_gui] [_xcd{n}] [_kw{k}] [_fp4|_fp8] [_sbm{S}] [_dqa] [_pf{p}]
//   flydsl_moe2[_layout]_a{A}_w{B}_{OUT}_t{M}x{N}x{K}_{atomic|reduce}
//       [_bnt{b}] [_xcd{n}] [_persist] [_async] [_w{wpe}] [_cumul{n}] [_nt]
//       [_sbm{S}] [_bf16lds] [_sp{G*100+M01}] [_dqa] [_pf{p}] [_gridwait]
//   flydsl_mxmoe_g1_a4w4_{BM}x{N}x{K} [_f16in] [_nt] [_sk{N}] [_xcd{N}]
//   flydsl_mxmoe_g2_a4w4_{BM}x{N}x{K} [_atomic[_nt]|_f4out|_cshuffle]
//       [_sk{N}] [_xcd{N}]
// Absent tokens take aiter's defaults (stage 1: waves_per_eu 1, k_batch 1,
// k_wave 1). `_xcd{n}` is the schedule's xcd_swizzle (n groups of
// workgroups; 0 and 1: none). `_dqa` is moegen's own (its sm_90a tables):
// weight_decode = arithmetic, and so are `_pf{p}`: prefetch = p, and stage 2's `_gridwait`:
// wait = grid. Names of other families (CK,
// CK-Tile, Opus, asm) and features moegen has no equivalent for are reported as errors, never
// guessed.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_DISPATCH_KERNELNAME_H
#define MOEGEN_RUNTIME_DISPATCH_KERNELNAME_H

#include "compiler/spec/Spec.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace moegen::dispatch {

/// Which FlyDSL kernel a name describes (moe1/moe2/moe2_layout, mxmoe g1/g2).
enum class AiterKernelKind : uint8_t { Moe1, Moe2, Moe2Layout, MxMoeG1, MxMoeG2 };

struct KernelNameInfo {
  std::string name;
  AiterKernelKind kind = AiterKernelKind::Moe1;
  StageId stage = StageId::Stage1;
  std::string aDtype, bDtype, outDtype; // "fp4", "fp8", "bf16", ...
  int64_t tileM = 0, tileN = 0, tileK = 0;
  std::optional<int64_t> wavesPerEU, kBatch, bNt, xcd, kWave, sortBlockM, spatial, cuMul, splitK,
      prefetch;
  bool mockGateOnly = false, gateUpInterleave = false, persist = false, async = false,
       nonTemporal = false, bf16Lds = false, f16In = false, f4Out = false, cshuffle = false,
       arithmeticDecode = false, gridWait = false;
  FusedQuant fusedQuant = FusedQuant::None;
  std::optional<ReduceMode> reduce;
};

/// Parses a FlyDSL MoE kernel name; errors say which token at which
/// character offset is not understood.
llvm::Expected<KernelNameInfo> parseKernelName(llvm::StringRef name);

struct MappedSchedule {
  StageId stage = StageId::Stage1;
  StageSchedule schedule;
  std::optional<DType> activation; // A dtype the kernel reads
  std::optional<DType> weight;
  std::optional<GateUpLayout> gateUp; // stage 1 only
  /// Stage 2 `_sbm{S}`: the sorting block the kernel expects, which must be
  /// stage 1's tile_m (aiter's block_m).
  std::optional<int64_t> sortBlockM;
  /// Performance hints of the name that moegen's schedule does not carry
  /// (b_nt, persist, ...), as "token: meaning".
  std::vector<std::string> droppedHints;
};

/// Maps a parsed name; features without a moegen equivalent are errors.
llvm::Expected<MappedSchedule> mapToSchedule(const KernelNameInfo &info);
llvm::Expected<MappedSchedule> kernelNameToSchedule(llvm::StringRef name);

/// The FlyDSL name aiter's tables use for a stage of `spec` (the inverse of
/// kernelNameToSchedule): moe1 names carry waves_per_eu (absent = 1),
/// k_batch, k_wave, gate/up interleave and the fused quantization; moe2
/// names the reduction, waves_per_eu (absent = 0) and the sorting block.
/// Schedules the grammar cannot spell (a stage-1 waves_per_eu of 0, a
/// deterministic split, a stage-2 split, bf16 outputs aside) are errors that
/// name the parameter.
llvm::Expected<std::string> kernelNameFor(const MoeSpec &spec, StageId stage);

/// One line: "tile=32x32x256 k_batch=1 k_wave=2 waves_per_eu=4 ...".
std::string describe(const MappedSchedule &m);

} // namespace moegen::dispatch

#endif // MOEGEN_RUNTIME_DISPATCH_KERNELNAME_H
