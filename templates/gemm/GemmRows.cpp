//===- GemmRows.cpp - Sorted rows and weight rows of the GEMM kernels -----===//

#include "templates/gemm/GemmRows.h"

using namespace mlir;
using arith::CmpIPredicate;

namespace moegen {

GemmRowInfo emitGemmRowInfo(Arith &a, Value sortedIds, Value sortedPos, Value tokens,
                            int64_t topk) {
  GemmRowInfo r;
  r.sortedPos = sortedPos;
  Value fused = a.toIndex(memref::LoadOp::create(a.b, sortedIds, ValueRange{sortedPos}));
  r.token = arith::AndIOp::create(a.b, fused, a.idx(0xFFFFFF));
  r.slot = arith::ShRUIOp::create(a.b, fused, a.idx(24));
  r.valid = arith::AndIOp::create(a.b, a.cmp(CmpIPredicate::ult, r.token, tokens),
                                  a.cmp(CmpIPredicate::ult, r.slot, a.idx(topk)));
  return r;
}

Value emitWeightRowOf(Arith &a, const MoeSpec &spec, bool stage1, Value n, int half) {
  if (!stage1)
    return n;
  int64_t I = spec.problem.interDim;
  if (spec.problem.gateUp == GateUpLayout::Separated)
    return half ? a.add(n, a.idx(I)) : n;
  Value group = a.mul(a.divu(n, a.idx(16)), a.idx(32));
  Value inGroup = arith::AndIOp::create(a.b, n, a.idx(15));
  return a.add(a.add(group, a.idx(16 * half)), inGroup);
}

} // namespace moegen
