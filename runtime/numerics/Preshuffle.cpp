//===- Preshuffle.cpp - Weight and scale layouts of the kernels -----------===//

#include "runtime/numerics/Preshuffle.h"

#include <cstring>

#include <algorithm>

namespace moegen::num {

namespace {

llvm::Error checkMatrix(llvm::StringRef what, size_t size, int64_t experts, int64_t rows,
                        int64_t rowBytes) {
  if (experts <= 0 || rows <= 0 || rowBytes <= 0)
    return llvm::createStringError("%s: experts (%lld), rows (%lld) and row bytes (%lld) must "
                                   "be positive",
                                   what.str().c_str(), static_cast<long long>(experts),
                                   static_cast<long long>(rows), static_cast<long long>(rowBytes));
  if (static_cast<int64_t>(size) != experts * rows * rowBytes)
    return llvm::createStringError("%s: buffer holds %zu bytes, expected %lld x %lld x %lld",
                                   what.str().c_str(), size, static_cast<long long>(experts),
                                   static_cast<long long>(rows), static_cast<long long>(rowBytes));
  return llvm::Error::success();
}

// Source row (in GGUU order) of row `r` of the GUGU order.
int64_t guguToGguu(int64_t r, int64_t rows) {
  int64_t half = rows / 2;
  int64_t group = r / 32, within = r % 32;
  bool up = within >= 16;
  return (up ? half : 0) + group * 16 + within % 16;
}

llvm::Expected<std::vector<uint8_t>> permuteGateUp(llvm::ArrayRef<uint8_t> src, int64_t experts,
                                                   int64_t rows, int64_t rowBytes, bool toGugu) {
  if (auto err = checkMatrix("gate/up interleave", src.size(), experts, rows, rowBytes))
    return std::move(err);
  if (rows % 32 != 0)
    return llvm::createStringError("gate/up interleave: %lld rows is not 2 x a multiple of 16",
                                   static_cast<long long>(rows));
  std::vector<uint8_t> dst(src.size());
  for (int64_t e = 0; e < experts; ++e)
    for (int64_t r = 0; r < rows; ++r) {
      int64_t g = guguToGguu(r, rows);
      int64_t from = toGugu ? g : r, to = toGugu ? r : g;
      std::copy_n(src.begin() + (e * rows + from) * rowBytes, rowBytes,
                  dst.begin() + (e * rows + to) * rowBytes);
    }
  return dst;
}

int64_t shuffleOffset(int64_t n, int64_t kb, int64_t rowBytes) {
  return (n / 16) * (16 * rowBytes) + (kb / 16) * 256 + (n % 16) * 16 + kb % 16;
}

llvm::Expected<std::vector<uint8_t>> shuffle(llvm::ArrayRef<uint8_t> src, int64_t experts,
                                             int64_t rows, int64_t rowBytes, bool forward) {
  if (auto err = checkMatrix("(16,16) weight shuffle", src.size(), experts, rows, rowBytes))
    return std::move(err);
  if (rows % 16 != 0 || rowBytes % 32 != 0)
    return llvm::createStringError("(16,16) weight shuffle needs rows %% 16 == 0 and row bytes "
                                   "%% 32 == 0, got %lld rows x %lld bytes",
                                   static_cast<long long>(rows), static_cast<long long>(rowBytes));
  std::vector<uint8_t> dst(src.size());
  const int64_t per = rows * rowBytes;
  // 16 consecutive bytes of a row stay together (kb % 16 is the innermost
  // term of shuffleOffset): move them as one piece.
  for (int64_t e = 0; e < experts; ++e)
    for (int64_t n = 0; n < rows; ++n)
      for (int64_t kb = 0; kb < rowBytes; kb += 16) {
        int64_t lin = e * per + n * rowBytes + kb;
        int64_t shuf = e * per + shuffleOffset(n, kb, rowBytes);
        if (forward)
          std::memcpy(&dst[shuf], &src[lin], 16);
        else
          std::memcpy(&dst[lin], &src[shuf], 16);
      }
  return dst;
}

} // namespace

llvm::Expected<std::vector<uint8_t>> interleaveGateUp(llvm::ArrayRef<uint8_t> src, int64_t experts,
                                                      int64_t rows, int64_t rowBytes) {
  return permuteGateUp(src, experts, rows, rowBytes, /*toGugu=*/true);
}

llvm::Expected<std::vector<uint8_t>>
deinterleaveGateUp(llvm::ArrayRef<uint8_t> src, int64_t experts, int64_t rows, int64_t rowBytes) {
  return permuteGateUp(src, experts, rows, rowBytes, /*toGugu=*/false);
}

llvm::Expected<std::vector<uint8_t>> shuffleWeight16x16(llvm::ArrayRef<uint8_t> src,
                                                        int64_t experts, int64_t rows,
                                                        int64_t rowBytes, bool gateUpInterleave) {
  if (!gateUpInterleave)
    return shuffle(src, experts, rows, rowBytes, true);
  auto gugu = interleaveGateUp(src, experts, rows, rowBytes);
  if (!gugu)
    return gugu.takeError();
  return shuffle(*gugu, experts, rows, rowBytes, true);
}

llvm::Expected<std::vector<uint8_t>> unshuffleWeight16x16(llvm::ArrayRef<uint8_t> src,
                                                          int64_t experts, int64_t rows,
                                                          int64_t rowBytes, bool gateUpInterleave) {
  auto lin = shuffle(src, experts, rows, rowBytes, false);
  if (!lin || !gateUpInterleave)
    return lin;
  return deinterleaveGateUp(*lin, experts, rows, rowBytes);
}

int64_t e8m0ShuffleOffset(int64_t r, int64_t c, int64_t paddedCols) {
  int64_t r0 = r / 32, r1 = (r / 16) % 2, r2 = r % 16;
  int64_t c0 = c / 8, c1 = (c / 4) % 2, c2 = c % 4;
  return r0 * (32 * paddedCols) + c0 * 256 + c2 * 64 + r2 * 4 + c1 * 2 + r1;
}

int64_t e8m0ShuffledRows(int64_t rows) { return (rows + 255) / 256 * 256; }
int64_t e8m0ShuffledCols(int64_t cols) { return (cols + 7) / 8 * 8; }

std::vector<uint8_t> e8m0Shuffle(llvm::ArrayRef<uint8_t> src, int64_t rows, int64_t cols) {
  const int64_t pc = e8m0ShuffledCols(cols);
  std::vector<uint8_t> dst(e8m0ShuffledRows(rows) * pc, 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      dst[e8m0ShuffleOffset(r, c, pc)] = src[r * cols + c];
  return dst;
}

llvm::Expected<std::vector<uint8_t>> e8m0Unshuffle(llvm::ArrayRef<uint8_t> src, int64_t rows,
                                                   int64_t cols) {
  const int64_t pc = e8m0ShuffledCols(cols);
  // Any buffer covering the 32-row groups of the logical rows will do: the
  // fused epilogue pads to 256 rows, moe_mxfp4_sort to 32.
  const int64_t need = (rows + 31) / 32 * 32 * pc;
  if (static_cast<int64_t>(src.size()) < need)
    return llvm::createStringError("e8m0 unshuffle: buffer holds %zu bytes, [%lld, %lld] needs "
                                   "at least %lld",
                                   src.size(), static_cast<long long>(rows),
                                   static_cast<long long>(cols), static_cast<long long>(need));
  std::vector<uint8_t> dst(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      dst[r * cols + c] = src[e8m0ShuffleOffset(r, c, pc)];
  return dst;
}

namespace {

llvm::Expected<std::vector<uint8_t>> expertScales(llvm::ArrayRef<uint8_t> src, int64_t experts,
                                                  int64_t rows, int64_t cols, bool gateUp,
                                                  bool forward) {
  if (auto err = checkMatrix("expert scale shuffle", src.size(), experts, rows, cols))
    return std::move(err);
  if (rows % 32 != 0 || cols % 8 != 0)
    return llvm::createStringError("expert scale shuffle needs rows %% 32 == 0 and cols %% 8 == "
                                   "0, got %lld x %lld",
                                   static_cast<long long>(rows), static_cast<long long>(cols));
  std::vector<uint8_t> in(src.begin(), src.end());
  if (gateUp && forward) {
    auto gugu = interleaveGateUp(src, experts, rows, cols);
    if (!gugu)
      return gugu.takeError();
    in = std::move(*gugu);
  }
  std::vector<uint8_t> out(in.size());
  const int64_t per = rows * cols;
  for (int64_t e = 0; e < experts; ++e)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        int64_t lin = e * per + r * cols + c, shuf = e * per + e8m0ShuffleOffset(r, c, cols);
        if (forward)
          out[shuf] = in[lin];
        else
          out[lin] = in[shuf];
      }
  if (gateUp && !forward)
    return deinterleaveGateUp(out, experts, rows, cols);
  return out;
}

} // namespace

llvm::Expected<std::vector<uint8_t>> shuffleExpertScales(llvm::ArrayRef<uint8_t> src,
                                                         int64_t experts, int64_t rows,
                                                         int64_t cols, bool gateUpInterleave) {
  return expertScales(src, experts, rows, cols, gateUpInterleave, true);
}

llvm::Expected<std::vector<uint8_t>> unshuffleExpertScales(llvm::ArrayRef<uint8_t> src,
                                                           int64_t experts, int64_t rows,
                                                           int64_t cols, bool gateUpInterleave) {
  return expertScales(src, experts, rows, cols, gateUpInterleave, false);
}

namespace {

/// One weight tensor of [experts, rows, cols] packed for the kernels.
llvm::Error packWeight(const MoeSpec &spec, const HostTensor &w, llvm::StringRef name, int64_t rows,
                       int64_t cols, bool interleave, std::vector<uint8_t> &data,
                       std::vector<uint8_t> &scales) {
  const int64_t experts = spec.problem.experts;
  ElemFormat want = elemFormatOf(spec.formats.weight);
  if (w.format != want || w.shape != std::vector<int64_t>{experts, rows, cols})
    return llvm::createStringError(
        "packWeights: %s must be [%lld, %lld, %lld] in the spec's weight format",
        name.str().c_str(), static_cast<long long>(experts), static_cast<long long>(rows),
        static_cast<long long>(cols));
  auto shuffled =
      shuffleWeight16x16(w.data, experts, rows, packedBytes(w.format, cols), interleave);
  if (!shuffled)
    return shuffled.takeError();
  data = std::move(*shuffled);
  if (!isMx(w.format)) {
    scales.assign(4, 0);
    return llvm::Error::success();
  }
  if (static_cast<int64_t>(w.scales.size()) != experts * rows * w.scaleCols())
    return llvm::createStringError("packWeights: %s has %zu scales, expected %lld",
                                   name.str().c_str(), w.scales.size(),
                                   static_cast<long long>(experts * rows * w.scaleCols()));
  std::vector<uint8_t> logical = w.scales;
  if (interleave) {
    auto inter = interleaveGateUp(logical, experts, rows, w.scaleCols());
    if (!inter)
      return inter.takeError();
    logical = std::move(*inter);
  }
  scales = e8m0Shuffle(logical, experts * rows, w.scaleCols());
  return llvm::Error::success();
}

} // namespace

llvm::Expected<PackedWeights> packWeights(const MoeSpec &spec, const HostTensor &w1,
                                          const HostTensor &w2) {
  const int64_t K = spec.problem.modelDim, I = spec.problem.interDim;
  PackedWeights p;
  bool interleave = spec.problem.gateUp == GateUpLayout::Interleaved;
  if (llvm::Error e = packWeight(spec, w1, "w1", 2 * I, K, interleave, p.w1, p.w1Scale))
    return std::move(e);
  if (llvm::Error e = packWeight(spec, w2, "w2", K, I, /*interleave=*/false, p.w2, p.w2Scale))
    return std::move(e);
  return p;
}

} // namespace moegen::num
