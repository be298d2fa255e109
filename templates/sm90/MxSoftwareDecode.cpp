//===- MxSoftwareDecode.cpp - MX element decoding without hardware --------===//

#include "templates/sm90/MxSoftwareDecode.h"

#include "templates/KernelBuilder.h"

using namespace mlir;
using arith::CmpIPredicate;

namespace moegen::sm90 {

namespace {
Value bitsToF32(ImplicitLocOpBuilder &b, Value bits) {
  return arith::BitcastOp::create(b, b.getF32Type(), bits);
}
Value shr(Arith &a, Value x, int64_t n) { return arith::ShRUIOp::create(a.b, x, a.i32(n)); }
Value andI(Arith &a, Value x, int64_t m) { return arith::AndIOp::create(a.b, x, a.i32(m)); }
} // namespace

Value emitE2m1ToF32(ImplicitLocOpBuilder &b, Value code) {
  Arith a{b};
  // Magnitude codes 1..7 are 0.5, 1, 1.5, 2, 3, 4, 6: exponent field x = code/2
  // and mantissa bit m = code%2 give (1 + m/2) 2^(x-1) for x > 0 and m/2 for x = 0.
  Value exp = andI(a, shr(a, code, 1), 3);
  Value mant = andI(a, code, 1);
  Value normal = a.bitOr(a.shl(a.add(exp, a.i32(126)), a.i32(23)), a.shl(mant, a.i32(22)));
  Value isSub = a.cmp(CmpIPredicate::eq, exp, a.i32(0));
  Value sub = a.mul(mant, a.i32(0x3F000000)); // 0.5 or 0
  Value mag = a.select(isSub, sub, normal);
  return bitsToF32(b, a.bitOr(mag, a.shl(andI(a, code, 8), a.i32(28))));
}

Value emitE4m3ToF32(ImplicitLocOpBuilder &b, Value byte) {
  Arith a{b};
  Value exp = andI(a, shr(a, byte, 3), 15);
  Value mant = andI(a, byte, 7);
  // Normal: (1 + m/8) 2^(e-7), f32 exponent field e + 120.
  Value normal = a.bitOr(a.shl(a.add(exp, a.i32(120)), a.i32(23)), a.shl(mant, a.i32(20)));
  // Subnormal: m 2^-9, exact as an f32 product of small integers and a power of two.
  Value subValue = arith::MulFOp::create(
      b, arith::UIToFPOp::create(b, b.getF32Type(), mant),
      arith::ConstantFloatOp::create(b, b.getF32Type(), llvm::APFloat(0x1p-9f)));
  Value sub = arith::BitcastOp::create(b, b.getI32Type(), subValue);
  Value mag = a.select(a.cmp(CmpIPredicate::eq, exp, a.i32(0)), sub, normal);
  Value isNan = a.cmp(CmpIPredicate::eq, andI(a, byte, 0x7F), a.i32(0x7F));
  mag = a.select(isNan, a.i32(0x7FC00000), mag);
  return bitsToF32(b, a.bitOr(mag, a.shl(andI(a, byte, 0x80), a.i32(24))));
}

Value emitE8m0ToF32(ImplicitLocOpBuilder &b, Value e) {
  Arith a{b};
  Value bits = a.shl(e, a.i32(23));
  bits = a.select(a.cmp(CmpIPredicate::eq, e, a.i32(0)), a.i32(0x00400000), bits);
  bits = a.select(a.cmp(CmpIPredicate::eq, e, a.i32(255)), a.i32(0x7FC00000), bits);
  return bitsToF32(b, bits);
}

} // namespace moegen::sm90
