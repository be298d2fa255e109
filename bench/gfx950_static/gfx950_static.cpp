//===- gfx950_static.cpp - Static performance table of the kernels --------===//
//
// For every kernel of the Kimi-K3 TP8 and DeepSeek-V3 TP8 examples (or the
// .moe files given as arguments): registers, LDS, occupancy, spills, code
// size, and for the main loop (the innermost loop holding MFMAs) the MFMAs and
// memory instructions per iteration with an estimate of its cycles against
// the MFMA-bound ideal.
//
// Cycle model (per wave, one SIMD): MFMAs cost their documented issue cycles
// (docs/gfx950-facts.md 7.3: 16x16x128 f8f6f4 16 with fp4 operands and 32 with an
// fp8 one, 16x16x32 bf16 16, 32x32x16 bf16 32); every other vector or memory
// instruction costs 4 cycles of issue (wave64 on a 16-lane SIMD), scalar ones
// 1; the matrix core overlaps the rest, so the estimate is the larger of the
// two sums. Memory latency is not modelled (that needs occupancy or
// pipelining to hide), which is why llvm-mca is not used: its MFMA costs are
// not gfx950's.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compiler.h"
#include "compiler/spec/DslParser.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace moegen;

namespace {

struct LoopStats {
  bool wholeKernel = false; // no MFMA loop: the K loop was fully unrolled
  int64_t instructions = 0, mfmas = 0, mfmaCycles = 0, loads = 0, stores = 0, lds = 0;
  int64_t issueCycles = 0;
};

int64_t mfmaCycles(llvm::StringRef line) {
  if (line.contains("v_mfma_scale_f32_16x16x128_f8f6f4"))
    return (line.contains("cbsz:4") && line.contains("blgp:4")) ? 16 : 32;
  if (line.contains("v_mfma_scale_f32_32x32x64_f8f6f4"))
    return (line.contains("cbsz:4") && line.contains("blgp:4")) ? 32 : 64;
  if (line.contains("v_mfma_f32_16x16x32_bf16"))
    return 16;
  if (line.contains("v_mfma_f32_32x32x16_bf16"))
    return 32;
  return line.contains("v_mfma") ? 16 : 0;
}

/// Counts the instructions of lines [from, to].
LoopStats countRange(llvm::ArrayRef<llvm::StringRef> lines, size_t from, size_t to) {
  LoopStats s;
  for (size_t j = from; j <= to && j < lines.size(); ++j) {
    llvm::StringRef ins = lines[j].trim();
    if (ins.empty() || ins.starts_with(";") || ins.starts_with(".") || ins.ends_with(":"))
      continue;
    ++s.instructions;
    if (int64_t c = mfmaCycles(ins)) {
      ++s.mfmas;
      s.mfmaCycles += c;
      continue;
    }
    if (ins.starts_with("global_load") || ins.starts_with("buffer_load"))
      ++s.loads;
    else if (ins.starts_with("global_store") || ins.starts_with("buffer_store") ||
             ins.starts_with("global_atomic") || ins.starts_with("buffer_atomic"))
      ++s.stores;
    else if (ins.starts_with("ds_"))
      ++s.lds;
    s.issueCycles += ins.starts_with("s_") ? 1 : 4;
  }
  return s;
}

/// The innermost loop with the most MFMAs: a label whose block range ends
/// with a backward branch to it.
LoopStats mainLoop(llvm::StringRef isa) {
  llvm::SmallVector<llvm::StringRef> lines;
  isa.split(lines, '\n');
  std::map<std::string, size_t> labels;
  for (size_t i = 0; i < lines.size(); ++i) {
    llvm::StringRef l = lines[i].trim();
    if (l.starts_with(".LBB") && l.ends_with(":"))
      labels[l.drop_back().str()] = i;
  }
  LoopStats best;
  for (size_t i = 0; i < lines.size(); ++i) {
    llvm::StringRef l = lines[i].trim();
    if (!l.starts_with("s_cbranch") && !l.starts_with("s_branch"))
      continue;
    auto it = labels.find(l.rsplit(' ').second.str());
    if (it == labels.end() || it->second >= i)
      continue;
    LoopStats s = countRange(lines, it->second + 1, i);
    if (s.mfmas > best.mfmas || (s.mfmas == best.mfmas && s.instructions < best.instructions))
      best = s;
  }
  if (best.mfmas == 0) {
    best = countRange(lines, 0, lines.size() - 1);
    best.wholeKernel = best.mfmas > 0;
  }
  return best;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> specs;
  for (int i = 1; i < argc; ++i)
    specs.push_back(argv[i]);
  if (specs.empty())
    for (const char *f :
         {"kimi_k3_tp8_a4w4", "kimi_k3_tp8_a8w4", "kimi_k3_tp8_a16w4", "deepseek_v3_tp8_a4w4"})
      specs.push_back(std::string(MOEGEN_EXAMPLES_DIR) + "/" + f + ".moe");

  llvm::outs() << "gfx950 static kernel table (MFMA cycles per main-loop "
                  "iteration against an "
                  "issue-bound estimate; see the source for the model)\n\n";
  llvm::outs() << llvm::format("%-58s %5s %5s %5s %7s %4s %6s %6s | %5s %5s %5s %5s %7s %7s %6s\n",
                               "kernel", "VGPR", "AGPR", "SGPR", "LDS", "occ", "spills", "code",
                               "MFMA", "ld", "st", "ds", "ideal", "est", "util");
  for (const std::string &path : specs) {
    auto spec = parseMoeSpecFile(path);
    if (!spec) {
      llvm::errs() << llvm::toString(spec.takeError());
      return 1;
    }
    auto layer = compileLayer(*spec, CompileOptions());
    if (!layer) {
      llvm::errs() << path << ": " << llvm::toString(layer.takeError()) << "\n";
      return 1;
    }
    llvm::outs() << spec->name << " (" << precisionTag(spec->formats) << ")\n";
    for (const CompiledKernel &k : layer->kernels) {
      const KernelResources &r = k.resources;
      LoopStats loop = mainLoop(k.code.isa);
      int64_t est = std::max(loop.mfmaCycles, loop.issueCycles);
      llvm::outs() << llvm::format(
          "  %-56s %5lld %5lld %5lld %7lld %4lld %6lld %6lld | %5lld %5lld "
          "%5lld %5lld %7lld %7lld ",
          k.signature.symbol.c_str(), (long long)r.vgprs, (long long)r.agprs, (long long)r.sgprs,
          (long long)r.ldsBytes, (long long)occupancyFromRegisters(r),
          (long long)(r.vgprSpills + r.sgprSpills), (long long)r.codeBytes, (long long)loop.mfmas,
          (long long)loop.loads, (long long)loop.stores, (long long)loop.lds,
          (long long)loop.mfmaCycles, (long long)est);
      if (loop.mfmas)
        llvm::outs() << llvm::format("%5.0f%%", 100.0 * loop.mfmaCycles / est)
                     << (loop.wholeKernel ? " (whole kernel: K loop unrolled)" : "");
      else
        llvm::outs() << "     -";
      llvm::outs() << "\n";
    }
  }
  return 0;
}
