//===- QuantPlan.cpp - The activation quantization kernel's plan ----------===//

#include "templates/quant/QuantPlan.h"

#include "templates/TargetSupport.h"

#include <algorithm>

namespace moegen {

std::array<int64_t, 3> QuantPlan::grid(int64_t tokens, int64_t cuNum) const {
  if (stageReady) {
    int64_t blocks = std::max<int64_t>(sortedBlocks(tokens), 1);
    if (cuNum > 0)
      blocks = std::min(blocks, cuNum * kStageReadyWorkgroupsPerSM);
    return {blocks, 1, 1};
  }
  int64_t items = scaleRows(tokens) * blocksPerRow();
  int64_t groups = std::max<int64_t>((items + threads - 1) / threads, 1);
  return {groups, 1, 1};
}

std::string quantKernelSymbol(const QuantPlan &plan) {
  std::string s = plan.format == DType::MXFP4 ? "moe_quant_mxfp4" : "moe_quant_mxfp8";
  s += "_c" + std::to_string(plan.cols);
  if (plan.order == QuantScaleOrder::Sorted) {
    s += "_sorted";
    if (plan.source == QuantSourceRows::Tokens)
      s += "_tok";
    s += "_k" + std::to_string(plan.topk);
  }
  if (plan.decoded)
    s += "_bf16";
  if (plan.stageReady)
    s += "_ready_bm" + std::to_string(plan.blockM);
  return s;
}

void checkQuantPlan(const QuantPlan &plan, KernelFamily family, const TargetInfo &target,
                    ScheduleIssues &issues) {
  auto issue = [&](const char *param, const std::string &msg) {
    issues.push_back({family, param, msg});
  };
  if (plan.format != DType::MXFP4 && plan.format != DType::MXFP8)
    issue("formats",
          "activation quantization targets mxfp4 or mxfp8, not " + toString(plan.format).str());
  if (plan.cols <= 0 || plan.cols % QuantPlan::kBlock != 0)
    issue("formats", "quantized width " + std::to_string(plan.cols) +
                         " is not a multiple of the 32-element MX block");
  if (plan.threads <= 0 || plan.threads % target.waveSize != 0 ||
      plan.threads > target.maxThreadsPerWorkgroup)
    issue("threads", "quantization workgroup of " + std::to_string(plan.threads) +
                         " threads is not a whole number of waves within " +
                         std::to_string(target.maxThreadsPerWorkgroup));
  if (plan.order == QuantScaleOrder::Sorted && (plan.topk < 1 || plan.topk > 255))
    issue("topk", "topk=" + std::to_string(plan.topk) + " does not fit the 8-bit slot field");
}

namespace {

QuantPlan basePlan(const MoeSpec &spec, const TargetInfo &target, int64_t cols) {
  QuantPlan p;
  p.format = spec.formats.activation;
  p.decoded = carriesDecodedMx(spec, target);
  p.cols = cols;
  p.topk = spec.problem.topk;
  p.experts = spec.problem.experts;
  p.blockM = spec.stage1.tileM; // the sorted ids' block (see planSort)
  return p;
}

} // namespace

std::optional<QuantPlan> planInputQuant(const MoeSpec &spec, const TargetInfo &target,
                                        ScheduleIssues &issues) {
  if (spec.formats.activation != DType::MXFP4 && spec.formats.activation != DType::MXFP8)
    return std::nullopt;
  QuantPlan p = basePlan(spec, target, spec.problem.modelDim);
  p.order = QuantScaleOrder::Rows;
  checkQuantPlan(p, KernelFamily::Stage1, target, issues);
  return p;
}

std::optional<QuantPlan> planInterQuant(const MoeSpec &spec, const TargetInfo &target,
                                        ScheduleIssues &issues) {
  if (spec.formats.activation != DType::MXFP4 && spec.formats.activation != DType::MXFP8)
    return std::nullopt;
  if (spec.stage1.fusedQuant != FusedQuant::None)
    return std::nullopt;
  QuantPlan p = basePlan(spec, target, spec.problem.interDim);
  p.order = QuantScaleOrder::Sorted;
  p.source = QuantSourceRows::Slots;
  p.stageReady = interQuantCountsDown(spec, target);
  checkQuantPlan(p, KernelFamily::Stage2, target, issues);
  return p;
}

KernelSignature quantKernelSignature(llvm::StringRef symbol, const QuantPlan &plan) {
  using K = KernelArgKind;
  KernelSignature sig{symbol.str(), {{"x", K::Pointer}, {"q", K::Pointer}}, plan.threads};
  if (!plan.decoded)
    sig.args.push_back({"scales", K::Pointer});
  if (plan.order == QuantScaleOrder::Rows) {
    sig.args.push_back({"rows", K::I32});
  } else {
    sig.args.push_back({"sorted_ids", K::Pointer});
    sig.args.push_back({"num_valid_ids", K::Pointer});
    if (plan.stageReady)
      sig.args.push_back({"stage_ready", K::Pointer});
    sig.args.push_back({"tokens", K::I32});
  }
  return sig;
}

} // namespace moegen
