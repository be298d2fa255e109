//===- Traffic.cpp - Bytes each kernel must move through HBM --------------===//

#include "bench/latency_model/Traffic.h"

#include "compiler/spec/TargetInfo.h"
#include "templates/sort/SortPlan.h"

namespace moegen::latency {
namespace {

double bytesPer(DType t) {
  switch (t) {
  case DType::MXFP4:
    return 0.5 + 1.0 / 32;
  case DType::MXFP8:
    return 1.0 + 1.0 / 32;
  case DType::BF16:
    return 2.0;
  case DType::F32:
    return 4.0;
  }
  return 4.0;
}

/// The sort's chunk counts region (templates/sort/SortPlan.h).
double sortCountsBytes(const MoeSpec &spec, int64_t tokens) {
  ScheduleIssues issues;
  return double(planSort(spec, TargetInfo::defaultTarget(), issues).countsBytes(tokens));
}

} // namespace

double kernelBytes(KernelFamily family, const MoeSpec &spec, int64_t tokens, const Routing &r) {
  const Problem &p = spec.problem;
  const double T = double(tokens), k = double(p.topk), K = double(p.modelDim),
               I = double(p.interDim);
  const double slots = T * k;
  const double rows = r.activeBlocks * double(spec.stage1.tileM); // padded sorted rows
  const double a = bytesPer(spec.formats.activation), w = bytesPer(spec.formats.weight);
  const bool fused = spec.stage1.fusedQuant != FusedQuant::None;
  const double interOut = fused ? a : 2.0; // stage 1's output element
  switch (family) {
  case KernelFamily::SortCount: // ids in, counts out
    return slots * 4 + sortCountsBytes(spec, tokens);
  case KernelFamily::SortScan: // counts in and out, totals out
    return 2 * sortCountsBytes(spec, tokens) + 4 * p.experts;
  case KernelFamily::Sort: // ids, weights, bases, totals in; sorted rows and blocks out
    return slots * 8 + sortCountsBytes(spec, tokens) + 4 * p.experts + rows * 8 +
           r.activeBlocks * 4;
  case KernelFamily::QuantInput:
    return T * K * 2 + T * K * a;
  case KernelFamily::Stage1: {
    double weights = r.activeExperts * 2 * I * K * w;
    double out = spec.stage1.kBatch > 1 ? slots * 2 * I * 4 : slots * I * interOut;
    return weights + rows * K * a + out;
  }
  case KernelFamily::Finish: {
    double splits = spec.stage1.kBatchMode == KBatchMode::Deterministic ? spec.stage1.kBatch : 1;
    return splits * slots * 2 * I * 4 + slots * I * interOut;
  }
  case KernelFamily::QuantInter:
    return slots * I * 2 + slots * I * a;
  case KernelFamily::Stage2: {
    double weights = r.activeExperts * K * I * w;
    bool perSlot = spec.stage2.reduce != ReduceMode::Atomic;
    return weights + rows * I * a + (perSlot ? slots * K * 2 : T * K * 2);
  }
  case KernelFamily::Reduce:
    return slots * K * 2 + T * K * 2;
  }
  return 0;
}

} // namespace moegen::latency
