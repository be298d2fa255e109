//===- RefBundle.cpp - Inputs and reference outputs on disk ---------------===//

#include "runtime/numerics/RefBundle.h"

#include "compiler/spec/SpecLimits.h"

#include "runtime/numerics/InputGen.h"
#include "runtime/numerics/Npy.h"
#include "runtime/numerics/Preshuffle.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <utility>

namespace moegen::num {

namespace {

class BundleWriter {
public:
  BundleWriter(llvm::StringRef dir) : dir(dir.str()) {}

  llvm::Error tensor(llvm::StringRef name, const HostTensor &t, llvm::StringRef what) {
    std::vector<std::string> written;
    if (auto err = writeTensor(dir, name, t, &written))
      return err;
    note(name, what, written);
    return llvm::Error::success();
  }

  template <typename T>
  llvm::Error array(llvm::StringRef name, llvm::StringRef descr, std::vector<int64_t> shape,
                    llvm::ArrayRef<T> values, llvm::StringRef what) {
    std::string path = join((name + ".npy").str());
    if (auto err = writeNpyOf(path, descr, shape, values))
      return err;
    note(name, what, {path});
    return llvm::Error::success();
  }

  std::vector<std::string> files;
  llvm::json::Array entries;
  std::string join(const std::string &file) const {
    llvm::SmallString<256> p(dir);
    llvm::sys::path::append(p, file);
    return std::string(p);
  }

private:
  void note(llvm::StringRef name, llvm::StringRef what, const std::vector<std::string> &paths) {
    llvm::json::Array fileNames;
    for (const std::string &p : paths) {
      files.push_back(p);
      fileNames.push_back(llvm::sys::path::filename(p).str());
    }
    // json::Value keeps a StringRef without copying: store owned strings.
    entries.push_back(llvm::json::Object{
        {"name", name.str()}, {"description", what.str()}, {"files", std::move(fileNames)}});
  }
  std::string dir;
};

/// Rows of a weight's scale matrix in the order the kernel reads them: the
/// gate/up interleave of w1 when the spec asks for it.
llvm::Expected<std::vector<uint8_t>> kernelScaleRows(const HostTensor &w, bool interleave) {
  if (!interleave)
    return w.scales;
  return interleaveGateUp(w.scales, w.shape[0], w.shape[1], w.scaleCols());
}

llvm::Error writeWeight(BundleWriter &bw, llvm::StringRef name, const HostTensor &w,
                        bool interleave, llvm::StringRef what) {
  if (auto err = bw.tensor(name, w, what))
    return err;
  const int64_t E = w.shape[0], N = w.shape[1];
  const int64_t rowBytes = packedBytes(w.format, w.shape[2]);
  auto shuf = shuffleWeight16x16(w.data, E, N, rowBytes, interleave);
  if (!shuf)
    return shuf.takeError();
  if (auto err = bw.array<uint8_t>(
          (name + "_shuffled").str(), "|u1", {E, N, rowBytes}, *shuf,
          interleave ? "bytes in the (16,16) preshuffle of the GUGU-interleaved rows"
                     : "bytes in the (16,16) preshuffle layout"))
    return err;
  if (!isMx(w.format))
    return llvm::Error::success();
  auto rows = kernelScaleRows(w, interleave);
  if (!rows)
    return rows.takeError();
  std::vector<uint8_t> s = e8m0Shuffle(*rows, E * N, w.scaleCols());
  return bw.array<uint8_t>((name + "_scale_shuffled").str(), "|u1",
                           {e8m0ShuffledRows(E * N), e8m0ShuffledCols(w.scaleCols())}, s,
                           "e8m0 scales of [E*N, K/32] in the e8m0_shuffle layout");
}

/// Scale rows gathered into sorted order (row of sorted position p = scales
/// of `rowOf(entry)`), padding rows 0.
std::vector<uint8_t> sortedScaleRows(const HostTensor &t, const MoeSorting &s, bool perPair) {
  const int64_t sc = t.scaleCols();
  std::vector<uint8_t> out(s.sortedTokenIds.size() * sc, 0);
  for (int64_t p = 0; p < s.numValidIds[0]; ++p) {
    if (!s.isValidRow(p))
      continue;
    int32_t e = s.sortedTokenIds[p];
    int64_t row =
        perPair ? MoeSorting::tokenOf(e) * s.topk + MoeSorting::slotOf(e) : MoeSorting::tokenOf(e);
    std::copy_n(&t.scales[row * sc], sc, &out[p * sc]);
  }
  return out;
}

llvm::Error writeSortedScales(BundleWriter &bw, llvm::StringRef name,
                              llvm::ArrayRef<uint8_t> sorted, int64_t rows, int64_t cols,
                              llvm::StringRef what) {
  if (auto err = bw.array<uint8_t>(name, "|u1", {rows, cols}, sorted,
                                   (what + " by sorted position (logical)").str()))
    return err;
  std::vector<uint8_t> s = e8m0Shuffle(sorted, rows, cols);
  return bw.array<uint8_t>((name + "_shuffled").str(), "|u1",
                           {e8m0ShuffledRows(rows), e8m0ShuffledCols(cols)}, s,
                           (what + " by sorted position, e8m0_shuffle layout").str());
}

} // namespace

std::string RefBundleSummary::text() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "tokens " << tokens << ", sorted rows " << sortedRows << " (" << validRows << " valid), "
     << files.size() << " files\n";
  os << "layer vs exact f64:  cosine diff " << llvm::format("%.3e", vsExact.cosineDiff)
     << ", rel frobenius " << llvm::format("%.3e", vsExact.relFrobenius) << ", max abs "
     << llvm::format("%.3e", vsExact.maxAbs) << ", non-finite " << vsExact.nonFinite << "\n";
  os << "f32 vs f64 accumulation (stage-2 sums before rounding): cosine diff "
     << llvm::format("%.3e", f32VsF64.cosineDiff) << ", max abs "
     << llvm::format("%.3e", f32VsF64.maxAbs) << "\n";
  return s;
}

namespace {

llvm::Error fsError(std::error_code ec, llvm::StringRef what, llvm::StringRef path) {
  return llvm::createStringError(ec, "cannot %s %s: %s", what.str().c_str(), path.str().c_str(),
                                 ec.message().c_str());
}

/// The nearest existing one of outDir and its ancestors must be a directory
/// (checked before any work, so a mistyped --out fails at once).
llvm::Error checkOutDir(llvm::StringRef outDir) {
  for (llvm::StringRef p = outDir; !p.empty(); p = llvm::sys::path::parent_path(p)) {
    if (!llvm::sys::fs::exists(p))
      continue;
    if (llvm::sys::fs::is_directory(p))
      return llvm::Error::success();
    return llvm::createStringError(std::make_error_code(std::errc::not_a_directory),
                                   "cannot write into %s: %s is not a directory",
                                   outDir.str().c_str(), p.str().c_str());
  }
  return llvm::Error::success();
}

/// A directory next to `outDir` that collects the bundle; commit() moves its
/// files into outDir, and it is removed with everything in it otherwise, so
/// an error leaves nothing behind.
class StagingDir {
public:
  static llvm::Expected<StagingDir> create(llvm::StringRef outDir) {
    StagingDir d;
    d.outDir = outDir.size() > 1 ? outDir.rtrim("/").str() : outDir.str();
    llvm::StringRef parent = llvm::sys::path::parent_path(d.outDir);
    if (!parent.empty())
      if (std::error_code ec = llvm::sys::fs::create_directories(parent))
        return fsError(ec, "create", parent);
    llvm::SmallString<256> path;
    if (std::error_code ec = llvm::sys::fs::createUniqueDirectory(d.outDir + ".partial", path))
      return fsError(ec, "create a directory next to", d.outDir);
    d.path = std::string(path);
    return d;
  }
  StagingDir(StagingDir &&o) : outDir(std::move(o.outDir)), path(std::exchange(o.path, "")) {}
  ~StagingDir() {
    if (!path.empty())
      llvm::sys::fs::remove_directories(path, /*IgnoreErrors=*/true);
  }

  /// Moves `files` (paths inside the staging directory) into outDir; returns
  /// their new paths.
  llvm::Expected<std::vector<std::string>> commit(const std::vector<std::string> &files) {
    if (std::error_code ec = llvm::sys::fs::create_directories(outDir))
      return fsError(ec, "create", outDir);
    std::vector<std::string> moved;
    for (const std::string &f : files) {
      llvm::SmallString<256> to(outDir);
      llvm::sys::path::append(to, llvm::sys::path::filename(f));
      if (std::error_code ec = llvm::sys::fs::rename(f, to))
        return fsError(ec, "move into place", to);
      moved.push_back(std::string(to));
    }
    return moved;
  }

  std::string outDir, path;

private:
  StagingDir() = default;
};

} // namespace

llvm::Expected<RefBundleSummary> writeReferenceBundle(const MoeSpec &spec, int64_t tokens,
                                                      llvm::StringRef outDir,
                                                      const RefBundleOptions &opts) {
  if (llvm::Error e = checkSpecLimits(spec))
    return std::move(e);
  if (llvm::Error e = checkTokenCount(tokens, "tokens"))
    return std::move(e);
  if (llvm::Error e = checkHostMemory(spec, tokens, physicalMemoryBytes()))
    return std::move(e);
  if (llvm::Error e = checkOutDir(outDir))
    return std::move(e);
  GenOptions gen;
  gen.seed = opts.seed;
  auto in = generateInputs(spec, tokens, gen);
  if (!in)
    return in.takeError();
  auto layer = referenceLayer(spec, in->a1, in->topkIds, in->topkWeights, in->w1, in->w2, opts.ref);
  if (!layer)
    return layer.takeError();
  RefOptions other = opts.ref;
  other.accum = opts.ref.accum == Accum::F32 ? Accum::F64 : Accum::F32;
  auto alt = referenceLayer(spec, in->a1, in->topkIds, in->topkWeights, in->w1, in->w2, other);
  if (!alt)
    return alt.takeError();
  std::vector<double> x(in->hidden.begin(), in->hidden.end());
  auto exact = referenceLayerF64(spec, x, in->topkIds, in->topkWeights, in->w1, in->w2);
  if (!exact)
    return exact.takeError();

  const Problem &p = spec.problem;
  const int64_t M = tokens, K = p.modelDim, I = p.interDim;
  const MoeSorting &s = layer->sorting;
  const int64_t sortedRows = static_cast<int64_t>(s.sortedTokenIds.size());
  const bool interleave = p.gateUp == GateUpLayout::Interleaved;
  auto staging = StagingDir::create(outDir);
  if (!staging)
    return staging.takeError();
  BundleWriter bw(staging->path);
  auto run = [&]() -> llvm::Error {
    if (auto err = bw.array<float>("hidden", "<f4", {M, K}, in->hidden,
                                   "layer input (bf16-representable values)"))
      return err;
    if (auto err = bw.tensor("a1", in->a1, "stage-1 A in the activation format, token-major"))
      return err;
    if (isMx(in->a1.format))
      if (auto err = writeSortedScales(bw, "a1_scale_sorted", sortedScaleRows(in->a1, s, false),
                                       sortedRows, in->a1.scaleCols(), "a1 scales"))
        return err;
    if (auto err = bw.array<int32_t>("topk_ids", "<i4", {M, p.topk}, in->topkIds,
                                     "router expert ids [M, topk]"))
      return err;
    if (auto err = bw.array<float>("topk_weights", "<f4", {M, p.topk}, in->topkWeights,
                                   "router weights [M, topk]"))
      return err;
    if (auto err = writeWeight(bw, "w1", in->w1, interleave,
                               "stage-1 logical weights [E, 2 * inter_dim, model_dim], gate rows "
                               "then up rows (GGUU)"))
      return err;
    if (auto err = writeWeight(bw, "w2", in->w2, false,
                               "stage-2 logical weights [E, model_dim, inter_dim]"))
      return err;
    if (auto err = bw.array<int32_t>("sorted_token_ids", "<i4", {sortedRows}, s.sortedTokenIds,
                                     "(slot << 24) | token; padding (topk << 24) | M"))
      return err;
    if (auto err = bw.array<float>("sorted_weights", "<f4", {sortedRows}, s.sortedWeights,
                                   "topk weight per sorted row, 0 for padding"))
      return err;
    if (auto err = bw.array<int32_t>("sorted_expert_ids", "<i4",
                                     {static_cast<int64_t>(s.sortedExpertIds.size())},
                                     s.sortedExpertIds, "expert per block, -1 past the used"))
      return err;
    if (auto err = bw.array<int32_t>("num_valid_ids", "<i4", {2},
                                     llvm::ArrayRef<int32_t>(s.numValidIds, 2),
                                     "{padded rows used, tokens}"))
      return err;
    const Stage1Result &s1 = layer->stage1;
    if (auto err = bw.tensor("stage1_out", s1.out, "stage-1 output [M, topk, I]"))
      return err;
    if (auto err = bw.tensor("stage1_pre", s1.preRound,
                             "stage-1 values before output encoding [M, topk, I]"))
      return err;
    if (!s1.sortedScales.empty())
      if (auto err = writeSortedScales(bw, "stage1_out_scale_sorted", s1.sortedScales, sortedRows,
                                       I / kMxBlock, "fused-quant scales"))
        return err;
    if (auto err = bw.tensor("a2", layer->a2, "stage-2 A [M, topk, I]"))
      return err;
    if (isMx(layer->a2.format))
      if (auto err = writeSortedScales(bw, "a2_scale_sorted", sortedScaleRows(layer->a2, s, true),
                                       sortedRows, layer->a2.scaleCols(), "a2 scales"))
        return err;
    const Stage2Result &s2 = layer->stage2;
    if (auto err = bw.tensor("out", s2.out, "layer output [M, K]"))
      return err;
    if (auto err = bw.tensor("stage2_pre", s2.preRound, "stage-2 sums before rounding [M, K]"))
      return err;
    if (auto err =
            bw.tensor("stage2_per_slot", s2.perSlot, "weighted per-slot stage-2 rows [M, topk, K]"))
      return err;
    return bw.array<double>("out_exact_f64", "<f8", {M, K}, *exact,
                            "the layer in f64 without intermediate quantization");
  };
  if (auto err = run())
    return std::move(err);

  RefBundleSummary sum;
  sum.tokens = M;
  sum.sortedRows = sortedRows;
  sum.validRows = 0;
  for (bool v : layer->stage1.sortedRowValid)
    sum.validRows += v;
  CompareOptions loose;
  loose.maxMismatch = 1.0;
  sum.vsExact = compareValues(*exact, decodeF64(layer->stage2.out), K, {}, loose);
  // Before output rounding, where the summation order is still visible.
  sum.f32VsF64 = compareValues(decodeF64(alt->stage2.preRound), decodeF64(layer->stage2.preRound),
                               K, {}, loose);

  llvm::json::Object manifest{
      {"spec", spec.name},
      {"tokens", M},
      {"seed", static_cast<int64_t>(opts.seed)},
      {"accumulation", opts.ref.accum == Accum::F32 ? "f32" : "f64"},
      {"fused_quant_rounding", toString(fusedQuantRoundingFor(spec, opts.ref))},
      {"metrics", llvm::json::Object{{"cosine_diff_vs_exact", sum.vsExact.cosineDiff},
                                     {"rel_frobenius_vs_exact", sum.vsExact.relFrobenius},
                                     {"max_abs_vs_exact", sum.vsExact.maxAbs}}},
      {"tensors", std::move(bw.entries)}};
  std::string path = bw.join("manifest.json");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return fsError(ec, "write", path);
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))) << "\n";
    os.close();
    if (os.has_error())
      return fsError(os.error(), "write", path);
  }
  bw.files.push_back(path);
  auto files = staging->commit(bw.files);
  if (!files)
    return files.takeError();
  sum.files = std::move(*files);
  return sum;
}

} // namespace moegen::num
