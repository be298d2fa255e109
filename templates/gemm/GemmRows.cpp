//===- GemmRows.cpp - Sorted rows and weight rows of the GEMM kernels -----===//

#include "templates/gemm/GemmRows.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using arith::CmpIPredicate;

namespace moegen {

namespace {

/// The workgroup's index in dispatch order, x + grid.x (y + grid.y z).
Value dispatchIndex(Arith &a, std::array<Value, 3> grid) {
  auto blockId = [&](gpu::Dimension d) { return gpu::BlockIdOp::create(a.b, d).getResult(); };
  return a.add(blockId(gpu::Dimension::x),
               a.mul(grid[0], a.add(blockId(gpu::Dimension::y),
                                    a.mul(grid[1], blockId(gpu::Dimension::z)))));
}

} // namespace

void GemmKernelArgs::bindArgs(gpu::GPUFuncOp func, bool stage1, bool clears, bool ready) {
  Block &entry = func.getBody().front();
  aBuf = entry.getArgument(0);
  aScale = entry.getArgument(1);
  wBuf = entry.getArgument(2);
  wScale = entry.getArgument(3);
  sortedIds = entry.getArgument(4);
  sortedExperts = entry.getArgument(5);
  sortedWeights = entry.getArgument(6);
  numValid = entry.getArgument(7);
  out = entry.getArgument(8);
  unsigned next = 9;
  outScale = stage1 ? entry.getArgument(next++) : Value();
  clearOut = stage1 && clears ? entry.getArgument(next++) : Value();
  stageReady = ready ? entry.getArgument(next++) : Value();
  tokensI32 = entry.getArgument(next);
}

void GemmKernelArgs::emitClearLayerOutput(Arith &a, int64_t modelDim, int64_t blockSize,
                                          std::array<Value, 3> grid) {
  if (!clearOut)
    return;
  ImplicitLocOpBuilder &b = a.b;
  Value block = dispatchIndex(a, grid);
  Value first =
      a.add(a.mul(block, a.idx(blockSize)), gpu::ThreadIdOp::create(b, gpu::Dimension::x));
  Value stride = a.mul(a.mul(a.idx(blockSize), grid[0]), a.mul(grid[1], grid[2]));
  // model_dim is a multiple of 32 (the MX block): whole 8-element groups.
  Value groups = a.mul(a.toIndex(tokensI32), a.idx(modelDim / 8));
  VectorType v8 = VectorType::get({8}, b.getBF16Type());
  Value zeros = arith::ConstantOp::create(
      b, DenseElementsAttr::get(v8, llvm::APFloat::getZero(llvm::APFloat::BFloat())));
  auto loop = scf::ForOp::create(b, first, groups, stride);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  vector::StoreOp::create(b, zeros, clearOut, ValueRange{a.mul(loop.getInductionVar(), a.idx(8))},
                          /*nontemporal=*/false, llvm::MaybeAlign(16));
}

SmallVector<Type> gemmArgElementTypes(Builder &b, const GemmPlan &plan) {
  const bool stage1 = plan.stage == StageId::Stage1;
  const bool mxA = plan.aFormat == DType::MXFP4 || plan.aFormat == DType::MXFP8;
  Type i8 = b.getI8Type(), i32 = b.getI32Type(), f32 = b.getF32Type(), bf16 = b.getBF16Type();
  Type outElem = stage1 && plan.schedule.kBatch > 1 ? f32
                 : stage1 && plan.schedule.fusedQuant != FusedQuant::None && !plan.decodedOut
                     ? i8
                     : bf16;
  SmallVector<Type> elems = {mxA ? i8 : bf16, i8, i8, i8, i32, i32, f32, i32, outElem};
  if (stage1)
    elems.push_back(i8);
  if (plan.clearsLayerOutput)
    elems.push_back(bf16);
  if (plan.stageReady)
    elems.push_back(i32);
  elems.push_back(i32);
  return elems;
}

std::array<Value, 3> emitWorkgroupTile(Arith &a, int64_t xcdSwizzle, std::array<Value, 3> grid) {
  ImplicitLocOpBuilder &b = a.b;
  auto blockId = [&](gpu::Dimension d) { return gpu::BlockIdOp::create(b, d).getResult(); };
  if (xcdSwizzle <= 1)
    return {blockId(gpu::Dimension::x), blockId(gpu::Dimension::y), blockId(gpu::Dimension::z)};
  // xcdSwizzledId in i32: one division each by the constant group count and
  // by the grid's sizes, once per workgroup.
  Type i32 = b.getI32Type();
  auto u32 = [&](Value v) { return arith::IndexCastUIOp::create(b, i32, v).getResult(); };
  auto c = [&](int64_t v) { return arith::ConstantIntOp::create(b, i32, v).getResult(); };
  auto add = [&](Value x, Value y) { return arith::AddIOp::create(b, x, y).getResult(); };
  auto mul = [&](Value x, Value y) { return arith::MulIOp::create(b, x, y).getResult(); };
  auto div = [&](Value x, Value y) { return arith::DivUIOp::create(b, x, y).getResult(); };
  auto rem = [&](Value x, Value y) { return arith::RemUIOp::create(b, x, y).getResult(); };
  Value gx = u32(grid[0]), gy = u32(grid[1]), gz = u32(grid[2]);
  Value id = u32(dispatchIndex(a, grid));
  Value count = mul(mul(gx, gy), gz), groups = c(xcdSwizzle);
  Value group = rem(id, groups);
  Value tile = add(add(mul(group, div(count, groups)),
                       arith::MinUIOp::create(b, group, rem(count, groups)).getResult()),
                   div(id, groups));
  Value rest = div(tile, gy);
  auto index = [&](Value v) { return a.toIndex(v); };
  return {index(rem(rest, gx)), index(rem(tile, gy)), index(div(rest, gx))};
}

void emitPersistentMTiles(
    Arith &a, const GemmPlan &p, int64_t experts, Value numValid, Value sortedExperts,
    Value firstRow, Value gridM, Value waveK,
    llvm::function_ref<SmallVector<Value>(Value bidM, Value expert)> accumulate,
    llvm::function_ref<void(ArrayRef<Value>)> epilogue) {
  emitPersistentMTilesCarrying(
      a, p, experts, emitUsedMTiles(a, p, numValid), sortedExperts, firstRow, gridM, waveK,
      ValueRange{},
      [&](Value bidM, Value expert, ValueRange, SmallVectorImpl<Value> &) {
        return accumulate(bidM, expert);
      },
      epilogue);
}

Value emitUsedMTiles(Arith &a, const GemmPlan &p, Value numValid) {
  Value used = a.toIndex(memref::LoadOp::create(a.b, numValid, ValueRange{a.idx(0)}));
  return a.divu(a.add(used, a.idx(p.schedule.tileM - 1)), a.idx(p.schedule.tileM));
}

void emitPersistentMTilesCarrying(
    Arith &a, const GemmPlan &p, int64_t experts, Value usedTiles, Value sortedExperts,
    Value firstRow, Value gridM, Value waveK, ValueRange init,
    llvm::function_ref<SmallVector<Value>(Value bidM, Value expert, ValueRange carried,
                                          SmallVectorImpl<Value> &next)>
        accumulate,
    llvm::function_ref<void(ArrayRef<Value>)> epilogue,
    llvm::function_ref<void(Value sortBlock)> beforeTile,
    llvm::function_ref<void(Value sortBlock)> afterTile) {
  ImplicitLocOpBuilder &b = a.b;
  bool carrying = !init.empty();
  // (Without carried values the builder adds the loop's and the if's
  // terminators; with them, they are yielded below.)
  auto tiles = scf::ForOp::create(b, firstRow, usedTiles, gridM, init);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(tiles.getBody());
  Value bidM = tiles.getInductionVar();
  ValueRange carried = tiles.getRegionIterArgs();
  Value sortBlock = p.mTilesPerSortBlock > 1 ? a.divu(bidM, a.idx(p.mTilesPerSortBlock)) : bidM;
  Value expert = a.toIndex(memref::LoadOp::create(b, sortedExperts, ValueRange{sortBlock}));
  Value hasExpert = a.cmp(CmpIPredicate::ult, expert, a.idx(experts));
  auto known = scf::IfOp::create(b, TypeRange(init), hasExpert, /*withElseRegion=*/carrying);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(known.thenBlock());
    if (beforeTile)
      beforeTile(sortBlock);
    SmallVector<Value> next;
    SmallVector<Value> acc = accumulate(bidM, expert, carried, next);
    if (p.schedule.kWave > 1) {
      auto first = scf::IfOp::create(b, a.cmp(CmpIPredicate::eq, waveK, a.idx(0)),
                                     /*withElseRegion=*/false);
      b.setInsertionPointToStart(first.thenBlock());
      epilogue(acc);
      b.setInsertionPointAfter(first);
    } else {
      epilogue(acc);
    }
    if (carrying) {
      scf::YieldOp::create(b, next);
      b.setInsertionPointToStart(known.elseBlock());
      scf::YieldOp::create(b, carried);
    }
  }
  gpu::BarrierOp::create(b);
  if (afterTile)
    ifThen(b, hasExpert, [&] { afterTile(sortBlock); });
  if (carrying)
    scf::YieldOp::create(b, known.getResults());
}

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

int64_t weightRowOf(const MoeSpec &spec, bool stage1, int64_t n, int half) {
  if (!stage1)
    return n;
  if (spec.problem.gateUp == GateUpLayout::Separated)
    return n + half * spec.problem.interDim;
  return n / 16 * 32 + 16 * half + n % 16;
}

} // namespace moegen
