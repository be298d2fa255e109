//===- SortScanKernel.cpp - sort_scan: chunk bases and expert totals ------===//

#include "templates/sort/SortKernel.h"
#include "templates/sort/SortKernelCommon.h"

using namespace mlir;
using arith::CmpIPredicate;

namespace moegen {

gpu::GPUFuncOp buildSortScanKernel(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                                   StringRef symbol, const SortPlan &plan,
                                   const TargetInfo &target) {
  Type i32 = b.getI32Type();
  KernelSignature sig = sortScanKernelSignature(symbol, plan);
  // One wave: its scan needs no LDS.
  gpu::GPUFuncOp func = createKernel(b, module, sig, {i32, i32, i32}, {});
  Block &entry = func.getBody().front();
  Value counts = entry.getArgument(0), totals = entry.getArgument(1);

  Arith a{b};
  Value c0 = a.idx(0);
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value e = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value tokens = a.toIndex(entry.getArgument(2));
  // chunks(tokens) = max(1, ceil(tokens / chunkTokens)), as SortPlan::chunks.
  Value chunks = arith::MaxUIOp::create(
      b, a.divu(a.add(tokens, a.idx(plan.chunkTokens - 1)), a.idx(plan.chunkTokens)), a.idx(1));
  Value experts = a.idx(plan.experts);

  // The chunks in groups of scanThreads * scanPerLane, the running sum
  // carried over; a lane scans scanPerLane consecutive chunks (their loads
  // issue together), the wave its lanes' sums.
  const int64_t per = plan.scanPerLane;
  auto groups =
      scf::ForOp::create(b, c0, chunks, a.idx(plan.scanThreads * per), ValueRange{a.i32(0)});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(groups.getBody());
    Value carry = groups.getRegionIterArgs()[0];
    Value first = a.add(groups.getInductionVar(), a.mul(tid, a.idx(per)));
    std::vector<Value> inRange, at, count;
    for (int64_t j = 0; j < per; ++j) {
      Value c = a.add(first, a.idx(j));
      inRange.push_back(a.cmp(CmpIPredicate::ult, c, chunks));
      at.push_back(a.add(a.mul(c, experts), e));
      // Chunk 0 stands in for chunks past the last (always there).
      count.push_back(memref::LoadOp::create(b, counts, a.select(inRange[j], at[j], e)));
    }
    std::vector<Value> before; // the lane's chunks before chunk j
    Value laneSum = a.i32(0);
    for (int64_t j = 0; j < per; ++j) {
      before.push_back(laneSum);
      laneSum = a.add(laneSum, a.select(inRange[j], count[j], a.i32(0)));
    }
    auto [inclusive, total] =
        sort::workgroupInclusiveSum(b, a, Value(), tid, laneSum, plan.scanThreads, target);
    Value laneBase = a.add(carry, a.sub(inclusive, laneSum));
    for (int64_t j = 0; j < per; ++j) {
      auto store = scf::IfOp::create(b, inRange[j], /*withElse=*/false);
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(store.thenBlock());
      memref::StoreOp::create(b, a.add(laneBase, before[j]), counts, at[j]);
    }
    scf::YieldOp::create(b, ValueRange{a.add(carry, total)});
  }
  auto first = scf::IfOp::create(b, a.cmp(CmpIPredicate::eq, tid, c0), /*withElse=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(first.thenBlock());
    memref::StoreOp::create(b, groups.getResult(0), totals, e);
  }
  gpu::ReturnOp::create(b);
  return func;
}

} // namespace moegen
