//===- TargetSupport.cpp - Which kernel families each target has ----------===//

#include "templates/TargetSupport.h"

namespace moegen {

bool hasTemplateFor(KernelFamily family, const TargetInfo &target) {
  if (!target.isNvptx())
    return true; // gfx950 has every family
  // sm_90a, as its templates land (docs/sm90a.md).
  switch (family) {
  case KernelFamily::QuantInput:
  case KernelFamily::QuantInter:
  case KernelFamily::Reduce: // target-neutral: vector loads, f32 adds, one RNE to bf16
  case KernelFamily::SortCount:
  case KernelFamily::SortScan:
  case KernelFamily::Sort: // warp32 plan, vote.sync ballot and warp barriers (SortPlan, SortKernel)
  case KernelFamily::Stage1: // mma.sync on bf16-dequantized operands (Sm90GemmKernel.h)
  case KernelFamily::Stage2:
  case KernelFamily::Finish: // f32 loads, the activation and MX encoding in NVVM forms
    return true;
  default:
    return false;
  }
}

bool carriesDecodedMx(const MoeSpec &spec, const TargetInfo &target) {
  DType a = spec.formats.activation;
  return (a == DType::MXFP4 || a == DType::MXFP8) && !target.hasMxMatrixOps;
}

bool stagesOverlap(const MoeSpec &spec, const TargetInfo &target) {
  return target.isNvptx() && spec.stage1.kBatch == 1 && spec.stage2.wait == Stage2Wait::Rows;
}

bool interQuantCountsDown(const MoeSpec &spec, const TargetInfo &target) {
  DType a = spec.formats.activation;
  return stagesOverlap(spec, target) && (a == DType::MXFP4 || a == DType::MXFP8) &&
         spec.stage1.fusedQuant == FusedQuant::None;
}

int64_t stageReadyCount(const MoeSpec &spec, const TargetInfo &target) {
  if (!stagesOverlap(spec, target) || spec.stage1.tileN <= 0)
    return 0;
  return spec.stageN(StageId::Stage1) / spec.stage1.tileN +
         (interQuantCountsDown(spec, target) ? 1 : 0);
}

std::string familiesWithTemplates(const TargetInfo &target) {
  std::string out;
  for (KernelFamily f : allKernelFamilies())
    if (hasTemplateFor(f, target))
      out += (out.empty() ? "" : ", ") + toString(f).str();
  return out.empty() ? "none" : out;
}

} // namespace moegen
