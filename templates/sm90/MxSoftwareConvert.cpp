//===- MxSoftwareConvert.cpp - MX element encoding without hardware -------===//

#include "templates/sm90/MxSoftwareConvert.h"

#include "templates/KernelBuilder.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using arith::CmpFPredicate;
using arith::CmpIPredicate;

namespace moegen::sm90 {

// Integer bit operations and plain adds rather than math ops or fabs/
// roundeven intrinsics: convert-gpu-to-nvvm turns those into libdevice calls,
// which moegen does not link.
namespace {
Value f32Const(ImplicitLocOpBuilder &b, float v) {
  return arith::ConstantFloatOp::create(b, b.getF32Type(), llvm::APFloat(v));
}
Value boolToI32(ImplicitLocOpBuilder &b, Value c) {
  return arith::ExtUIOp::create(b, b.getI32Type(), c);
}
/// |v|, by clearing the sign bit.
Value absF32(Arith &a, Value v) {
  Value bits = arith::BitcastOp::create(a.b, a.b.getI32Type(), v);
  Value mag = arith::AndIOp::create(a.b, bits, a.i32(0x7FFFFFFF));
  return arith::BitcastOp::create(a.b, a.b.getF32Type(), mag);
}
/// The sign bit of `v` moved to bit `to`.
Value signBit(Arith &a, Value v, int64_t to) {
  Value bits = arith::BitcastOp::create(a.b, a.b.getI32Type(), v);
  return a.shl(arith::ShRUIOp::create(a.b, bits, a.i32(31)), a.i32(to));
}
} // namespace

Value emitE2m1Code(ImplicitLocOpBuilder &b, Value v) {
  Arith a{b};
  // e2m1 magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6 are codes 0..7: the code is
  // the number of midpoints |v| lies above. A tie goes to the even code, so
  // the midpoints below an even code count only when passed strictly.
  Value mag = absF32(a, v);
  struct Midpoint {
    float value;
    bool inclusive; // the upper neighbour has the even code
  };
  const Midpoint midpoints[] = {{0.25f, false}, {0.75f, true}, {1.25f, false}, {1.75f, true},
                                {2.5f, false},  {3.5f, true},  {5.0f, false}};
  Value code = a.i32(0);
  for (const Midpoint &m : midpoints) {
    Value above = arith::CmpFOp::create(b, m.inclusive ? CmpFPredicate::OGE : CmpFPredicate::OGT,
                                        mag, f32Const(b, m.value));
    code = a.add(code, boolToI32(b, above));
  }
  return a.bitOr(code, signBit(a, v, 3));
}

Value emitE4m3Code(ImplicitLocOpBuilder &b, Value v) {
  Arith a{b};
  Value bits = arith::BitcastOp::create(b, b.getI32Type(), v);
  Value magBits = arith::AndIOp::create(b, bits, a.i32(0x7FFFFFFF));
  // Normal results (|v| >= 2^-6): round the f32 mantissa to 3 bits, ties to
  // even, with the carry into the exponent; then rebias 127 -> 7.
  Value lsb = arith::AndIOp::create(b, arith::ShRUIOp::create(b, magBits, a.i32(20)), a.i32(1));
  Value rounded = a.add(magBits, a.add(a.i32(0x7FFFF), lsb));
  Value normal = a.sub(arith::ShRUIOp::create(b, rounded, a.i32(20)), a.i32((127 - 7) << 3));
  normal = arith::MinUIOp::create(b, normal, a.i32(0x7E)); // saturate at 448 (inf too)
  // Subnormal results: multiples of 2^-9, RNE; 8 * 2^-9 is code 8 = 2^-6.
  // Adding and subtracting 2^23 rounds a value in [0, 2^22) to an integer
  // in the current mode, RNE (no fast-math flags, so it is not folded). The
  // clamp keeps the unused result of large values in range.
  Value scaled = arith::MulFOp::create(b, absF32(a, v), f32Const(b, 512.0f));
  scaled = arith::MinimumFOp::create(b, scaled, f32Const(b, 16.0f));
  Value magic = f32Const(b, 8388608.0f);
  Value integral = arith::SubFOp::create(b, arith::AddFOp::create(b, scaled, magic), magic);
  Value sub = arith::FPToUIOp::create(b, b.getI32Type(), integral);
  Value isSub = a.cmp(CmpIPredicate::ult, magBits, a.i32(0x3C800000));
  Value isNan = a.cmp(CmpIPredicate::ugt, magBits, a.i32(0x7F800000));
  Value code = a.select(isNan, a.i32(0x7F), a.select(isSub, sub, normal));
  return a.bitOr(code, signBit(a, v, 7));
}

Value emitInverseScale(ImplicitLocOpBuilder &b, Value scaleByte) {
  Arith a{b};
  // 1 / 2^(byte - 127) = 2^(127 - byte): biased exponent 254 - byte.
  Value biased = arith::MaxSIOp::create(b, a.sub(a.i32(254), scaleByte), a.i32(1));
  return arith::BitcastOp::create(b, b.getF32Type(), a.shl(biased, a.i32(23)));
}

llvm::SmallVector<Value> emitMxBlockWords(ImplicitLocOpBuilder &b, Value block, Value scaleByte,
                                          bool fp4) {
  Arith a{b};
  Value inv = emitInverseScale(b, scaleByte);
  const int64_t n = 32;
  llvm::SmallVector<Value> codes;
  for (int64_t i = 0; i < n; ++i) {
    Value x = vector::ExtractOp::create(b, block, i);
    Value v = arith::MulFOp::create(b, x, inv);
    codes.push_back(fp4 ? emitE2m1Code(b, v) : emitE4m3Code(b, v));
  }
  const int64_t bits = fp4 ? 4 : 8, perWord = 32 / bits;
  const int64_t mask = fp4 ? 0xF : 0xFF;
  llvm::SmallVector<Value> words;
  for (int64_t w = 0; w < n / perWord; ++w) {
    Value word = a.i32(0);
    for (int64_t i = 0; i < perWord; ++i) {
      Value c = arith::AndIOp::create(b, codes[w * perWord + i], a.i32(mask));
      word = a.bitOr(word, a.shl(c, a.i32(i * bits)));
    }
    words.push_back(word);
  }
  return words;
}

} // namespace moegen::sm90
