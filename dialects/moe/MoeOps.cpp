//===- MoeOps.cpp - Operations of the moe dialect -------------------------===//

#include "dialects/moe/MoeOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace moegen::moe;

#define GET_OP_CLASSES
#include "dialects/moe/MoeOps.cpp.inc"

void LayerOp::build(OpBuilder &builder, OperationState &state, StringRef name, ProblemAttr problem,
                    FormatsAttr formats, ActivationAttr activation) {
  state.addAttribute(getSymNameAttrName(state.name), builder.getStringAttr(name));
  state.addAttribute(getProblemAttrName(state.name), problem);
  state.addAttribute(getFormatsAttrName(state.name), formats);
  state.addAttribute(getActivationAttrName(state.name), activation);
  state.addRegion()->emplaceBlock();
}

LogicalResult LayerOp::verify() {
  int sorts = 0, stage1s = 0, stage2s = 0;
  for (Operation &op : getBody().front()) {
    sorts += isa<SortOp>(op);
    stage1s += isa<Stage1Op>(op);
    stage2s += isa<Stage2Op>(op);
  }
  if (sorts > 1 || stage1s > 1 || stage2s > 1)
    return emitOpError("holds at most one moe.sort, one moe.stage1 and one moe.stage2");
  // The sorting block size is stage 1's tile_m: one sorted block is one
  // stage-1 M tile.
  SortOp sort;
  Stage1Op stage1;
  for (Operation &op : getBody().front()) {
    if (auto s = dyn_cast<SortOp>(op))
      sort = s;
    if (auto s = dyn_cast<Stage1Op>(op))
      stage1 = s;
  }
  if (sort && stage1 && static_cast<int64_t>(sort.getBlockM()) != stage1.getSchedule().getTileM())
    return sort.emitOpError() << "block_m (" << sort.getBlockM() << ") must equal stage1 tile_m ("
                              << stage1.getSchedule().getTileM() << ")";
  return success();
}

LogicalResult SortOp::verify() {
  int64_t bm = getBlockM();
  // (SortPlan::kBlockMMultiple: the MMA M of every target.)
  if (bm <= 0 || bm % 16 != 0)
    return emitOpError() << "block_m must be a positive multiple of 16, got " << bm;
  return success();
}

LogicalResult Stage1Op::verify() {
  if (getSchedule().getReduce() != ReduceModeKind::atomic)
    return emitOpError("'reduce' is a stage2 parameter; stage1 must leave it atomic");
  if (getSchedule().getWait() != Stage2WaitKind::rows)
    return emitOpError("'wait' is a stage2 parameter; stage1 must leave it rows");
  return success();
}

LogicalResult Stage2Op::verify() {
  if (getSchedule().getFusedQuant() != FusedQuantKind::none)
    return emitOpError("'fused_quant' is a stage1 parameter; stage2 writes the bf16 output");
  return success();
}
