//===- MxQuant.h - MX block quantization ------------------------*- C++ -*-===//
//
// Quantizes f32 values to MXFP4 / MXFP8: blocks of 32 consecutive elements of
// the last dimension share one e8m0 scale X = 2^s; each element becomes
// encode(x / X) (RNE, saturating, see Formats.h). The rule that picks s is a
// named option, because aiter's quantizers and kernels disagree on it:
//
//   RoundUp        s = ceil(log2(amax / max_elem)) (aiter's default, e.g.
//                  ceil_pow2(amax / 6) for fp4): the smallest s with
//                  max_elem * 2^s >= amax, so nothing saturates.
//   Ocp            s = floor(log2 amax) - emax_elem (OCP MX v1.0; emax = 2 for
//                  e2m1, 8 for e4m3). Elements up to 2^(emax+1) saturate.
//   Even           aiter's "Even": amax's mantissa rounded to a power of two
//                  ((bits + 0x200000) & 0xFF800000), then floor(log2) - emax.
//   FusedEpilogue  the FlyDSL stage-1 epilogue: biased byte
//                  max(exp((bits(amax) + 0x400000) & 0xFF800000) - 2, 0) for
//                  fp4 (-8 for fp8), i.e. amax rounded to a power of two at
//                  1.5x, minus emax. Byte 0 is its floor.
//
// Common rules: an all-zero block gets s = -127 (byte 0); s below -127
// clamps to -127; a block holding NaN or inf gets the NaN scale 0xFF (its
// elements then decode to NaN whatever their codes are).
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_NUMERICS_MXQUANT_H
#define MOEGEN_RUNTIME_NUMERICS_MXQUANT_H

#include "runtime/numerics/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>

namespace moegen::num {

enum class ScaleRounding : uint8_t { RoundUp, Ocp, Even, FusedEpilogue };

llvm::StringRef toString(ScaleRounding r);
std::optional<ScaleRounding> parseScaleRounding(llvm::StringRef s);

/// The e8m0 byte the rule picks for a block with these values. `elem` is
/// MXFP4 or MXFP8.
uint8_t mxScaleFor(llvm::ArrayRef<float> block, ElemFormat elem, ScaleRounding mode);

/// Quantizes one block (any length <= 32): writes one element code per value
/// into `codes` (4-bit codes for fp4, unpacked) and returns the scale byte.
uint8_t quantizeMxBlock(llvm::ArrayRef<float> block, ElemFormat elem, ScaleRounding mode,
                        llvm::MutableArrayRef<uint8_t> codes);

/// Quantizes whole blocks of 32 values (values.size() a multiple of 32) into
/// caller buffers: `data` gets the packed codes (fp4x2, element 2j in the low
/// nibble, or one fp8 byte each), `scales` one byte per block. What
/// quantizeMx stores for the same values.
void quantizeMxInto(llvm::ArrayRef<float> values, ElemFormat elem, ScaleRounding mode,
                    uint8_t *data, uint8_t *scales);

/// Quantizes a row-major tensor of `shape` (last dimension a multiple of 32,
/// even for fp4) to `elem` (MXFP4 or MXFP8).
llvm::Expected<HostTensor> quantizeMx(llvm::ArrayRef<float> values, std::vector<int64_t> shape,
                                      ElemFormat elem, ScaleRounding mode);

/// Converts a tensor to `target`: BF16/F32 round from the decoded values; MX
/// targets quantize them with `mode`.
llvm::Expected<HostTensor> convertTo(llvm::ArrayRef<float> values, std::vector<int64_t> shape,
                                     ElemFormat target, ScaleRounding mode);

} // namespace moegen::num

#endif // MOEGEN_RUNTIME_NUMERICS_MXQUANT_H
