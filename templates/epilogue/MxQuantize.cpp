//===- MxQuantize.cpp - MX block scales and conversions as IR ------------===//

#include "templates/epilogue/MxQuantize.h"

#include "templates/sm90/MxSoftwareConvert.h"
#include "templates/sm90/MxSoftwareDecode.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using arith::CmpIPredicate;

namespace moegen {
namespace {

Value i32(ImplicitLocOpBuilder &b, int64_t v) { return arith::ConstantIntOp::create(b, v, 32); }

/// 0xFF when the f32 bits are NaN or Inf, else `e`.
Value nanToFF(ImplicitLocOpBuilder &b, Value amaxBits, Value e) {
  Value expo = arith::AndIOp::create(b, amaxBits, i32(b, 0x7F800000));
  Value nonFinite = arith::CmpIOp::create(b, CmpIPredicate::eq, expo, i32(b, 0x7F800000));
  return arith::SelectOp::create(b, nonFinite, i32(b, 0xFF), e);
}

/// f32 with exponent field e (2^(e-127); e = 0 means 2^-127 to the scaled
/// conversions, which read only the exponent field).
Value scaleOf(ImplicitLocOpBuilder &b, Value e) {
  return arith::BitcastOp::create(b, b.getF32Type(), arith::ShLIOp::create(b, e, i32(b, 23)));
}

} // namespace

Value emitEpilogueScale(ImplicitLocOpBuilder &b, Value amaxBits, bool fp4) {
  Value rounded = arith::AndIOp::create(b, arith::AddIOp::create(b, amaxBits, i32(b, 0x400000)),
                                        i32(b, 0x7F800000));
  Value e =
      arith::SubIOp::create(b, arith::ShRUIOp::create(b, rounded, i32(b, 23)), i32(b, fp4 ? 2 : 8));
  return nanToFF(b, amaxBits, arith::MaxSIOp::create(b, e, i32(b, 0)));
}

Value emitRoundUpScale(ImplicitLocOpBuilder &b, Value amaxBits, bool fp4) {
  // amax = m 2^E, m in [1, 2); max = 1.5 2^2 (fp4) or 1.75 2^8 (fp8), so
  // s = E - 2 + (m > 1.5), or E - 8 + (m > 1.75): a byte of Ef - 2 + (M > 0x400000).
  Value ef = arith::ShRUIOp::create(b, amaxBits, i32(b, 23));
  Value mant = arith::AndIOp::create(b, amaxBits, i32(b, 0x7FFFFF));
  Value above =
      arith::CmpIOp::create(b, CmpIPredicate::ugt, mant, i32(b, fp4 ? 0x400000 : 0x600000));
  Value e = arith::SubIOp::create(b, ef, i32(b, fp4 ? 2 : 8));
  e = arith::AddIOp::create(b, e, arith::ExtUIOp::create(b, b.getI32Type(), above));
  // amax = 0 and amax below 2^-127 give 0; subnormal amax has Ef = 0.
  e = arith::MaxSIOp::create(b, e, i32(b, 0));
  Value isZeroExp = arith::CmpIOp::create(b, CmpIPredicate::eq, ef, i32(b, 0));
  e = arith::SelectOp::create(b, isZeroExp, i32(b, 0), e);
  return nanToFF(b, amaxBits, e);
}

Value emitFp4Byte(ImplicitLocOpBuilder &b, const TargetInfo &target, Value lo, Value hi, Value e) {
  if (target.isNvptx()) {
    Value inv = sm90::emitInverseScale(b, e);
    Value loCode = sm90::emitE2m1Code(b, arith::MulFOp::create(b, lo, inv));
    Value hiCode = sm90::emitE2m1Code(b, arith::MulFOp::create(b, hi, inv));
    Value byte = arith::OrIOp::create(b, arith::AndIOp::create(b, loCode, i32(b, 0xF)),
                                      arith::ShLIOp::create(b, hiCode, i32(b, 4)));
    return arith::TruncIOp::create(b, b.getI8Type(), byte);
  }
  Value src =
      vector::FromElementsOp::create(b, VectorType::get({2}, b.getF32Type()), ValueRange{lo, hi});
  Value packed = amdgpu::PackedScaledTruncOp::create(
      b, VectorType::get({8}, b.getType<Float4E2M1FNType>()), src, scaleOf(b, e), 0, Value());
  Value bytes = vector::BitCastOp::create(b, VectorType::get({4}, b.getI8Type()), packed);
  return vector::ExtractOp::create(b, bytes, ArrayRef<int64_t>{0});
}

Value emitFp8Byte(ImplicitLocOpBuilder &b, const TargetInfo &target, Value v, Value e) {
  if (target.isNvptx()) {
    // The software encoding saturates at 448 itself.
    Value code = sm90::emitE4m3Code(b, arith::MulFOp::create(b, v, sm90::emitInverseScale(b, e)));
    return arith::TruncIOp::create(b, b.getI8Type(), code);
  }
  // v_cvt_scalef32_pk_fp8_f32 divides by the scale but does not saturate:
  // clamp to 448 * 2^(e-127) = 1.75 * 2^(e+8-127) first, built from bits so
  // that e = 0 is exact too.
  Value limit = arith::BitcastOp::create(
      b, b.getF32Type(),
      arith::OrIOp::create(
          b, arith::ShLIOp::create(b, arith::AddIOp::create(b, e, i32(b, 8)), i32(b, 23)),
          i32(b, 0x600000)));
  Value q = arith::MinimumFOp::create(
      b, arith::MaximumFOp::create(b, v, arith::NegFOp::create(b, limit)), limit);
  Value src =
      vector::FromElementsOp::create(b, VectorType::get({1}, b.getF32Type()), ValueRange{q});
  Value packed = amdgpu::PackedScaledTruncOp::create(
      b, VectorType::get({4}, b.getType<Float8E4M3FNType>()), src, scaleOf(b, e), 0, Value());
  Value f8 = vector::ExtractOp::create(b, packed, ArrayRef<int64_t>{0});
  return arith::BitcastOp::create(b, b.getI8Type(), f8);
}

Value emitMxDecodedValue(ImplicitLocOpBuilder &b, Value v, Value e, bool fp4) {
  Value scaled = arith::MulFOp::create(b, v, sm90::emitInverseScale(b, e));
  Value value = fp4 ? sm90::emitE2m1ToF32(b, sm90::emitE2m1Code(b, scaled))
                    : sm90::emitE4m3ToF32(b, sm90::emitE4m3Code(b, scaled));
  return arith::MulFOp::create(b, value, sm90::emitE8m0ToF32(b, e));
}

} // namespace moegen
