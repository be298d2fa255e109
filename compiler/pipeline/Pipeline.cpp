//===- Pipeline.cpp - The moegen pass pipeline ----------------------------===//

#include "compiler/pipeline/Pipeline.h"

#include "compiler/transforms/Passes.h"

#include "mlir/Conversion/AMDGPUToROCDL/AMDGPUToROCDL.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/GPUToROCDL/GPUToROCDLPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

namespace moegen {

void buildMoegenFrontendPipeline(mlir::OpPassManager &pm, llvm::ArrayRef<std::string> families) {
  MoeVerifyScheduleOptions verify;
  verify.families.assign(families.begin(), families.end());
  pm.addPass(createMoeVerifySchedule(verify));
  MoeInstantiateTemplatesOptions instantiate;
  instantiate.families.assign(families.begin(), families.end());
  pm.addPass(createMoeInstantiateTemplates(instantiate));
}

void buildTargetLoweringPipeline(mlir::OpPassManager &pm, const TargetInfo &target) {
  mlir::OpPassManager &kernels = pm.nest<mlir::gpu::GPUModuleOp>();
  kernels.addPass(mlir::createSCFToControlFlowPass());
  if (target.isNvptx()) {
    kernels.addPass(createMoeAttachGridDependencies());
    // Bare pointers as on gfx950, so the runtime packs the same argument
    // lists for both; 64-bit index (pointers are 64-bit on NVPTX).
    mlir::ConvertGpuOpsToNVVMOpsOptions gpuOptions;
    gpuOptions.useBarePtrCallConv = true;
    gpuOptions.indexBitwidth = 64;
    kernels.addPass(mlir::createConvertGpuOpsToNVVMOps(gpuOptions));
    pm.addPass(mlir::createReconcileUnrealizedCastsPass());
    pm.addPass(mlir::createCanonicalizerPass());
    return;
  }
  mlir::ConvertAMDGPUToROCDLPassOptions amdgpuOptions;
  amdgpuOptions.chipset = target.chip;
  kernels.addPass(mlir::createConvertAMDGPUToROCDLPass(amdgpuOptions));
  mlir::ConvertGpuOpsToROCDLOpsOptions gpuOptions;
  gpuOptions.chipset = target.chip;
  gpuOptions.useBarePtrCallConv = true;
  gpuOptions.runtime = mlir::gpu::amd::Runtime::HIP;
  kernels.addPass(mlir::createConvertGpuOpsToROCDLOps(gpuOptions));
  kernels.addPass(createMoeAttachLoopAnnotations());
  pm.addPass(mlir::createReconcileUnrealizedCastsPass());
  pm.addPass(mlir::createCanonicalizerPass());
}

void buildMoegenPipeline(mlir::OpPassManager &pm, llvm::ArrayRef<std::string> families) {
  buildMoegenFrontendPipeline(pm, families);
  pm.addPass(createMoeLowerToTarget());
}

void registerMoegenDialects(mlir::DialectRegistry &registry) {
  registry
      .insert<moe::MoeDialect, mlir::gpu::GPUDialect, mlir::scf::SCFDialect,
              mlir::arith::ArithDialect, mlir::memref::MemRefDialect, mlir::amdgpu::AMDGPUDialect,
              mlir::vector::VectorDialect, mlir::LLVM::LLVMDialect, mlir::ROCDL::ROCDLDialect,
              mlir::NVVM::NVVMDialect, mlir::cf::ControlFlowDialect, mlir::math::MathDialect,
              mlir::func::FuncDialect, mlir::ub::UBDialect, mlir::index::IndexDialect>();
  // convert-gpu-to-rocdl and convert-gpu-to-nvvm gather the LLVM lowering patterns of every dialect
  // through these interfaces.
  mlir::arith::registerConvertArithToLLVMInterface(registry);
  mlir::cf::registerConvertControlFlowToLLVMInterface(registry);
  mlir::registerConvertFuncToLLVMInterface(registry);
  mlir::index::registerConvertIndexToLLVMInterface(registry);
  mlir::registerConvertMathToLLVMInterface(registry);
  mlir::registerConvertMemRefToLLVMInterface(registry);
  mlir::ub::registerConvertUBToLLVMInterface(registry);
  mlir::vector::registerConvertVectorToLLVMInterface(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::registerROCDLDialectTranslation(registry);
  mlir::registerNVVMDialectTranslation(registry);
  mlir::registerGPUDialectTranslation(registry);
}

void registerMoegenPassesAndPipelines() {
  registerMoegenPasses();
  mlir::PassPipelineRegistration<>("moegen-pipeline",
                                   "The whole moegen pipeline: verify, instantiate, lower",
                                   [](mlir::OpPassManager &pm) { buildMoegenPipeline(pm); });
  mlir::PassPipelineRegistration<>(
      "moegen-frontend", "moe-verify-schedule and moe-instantiate-templates",
      [](mlir::OpPassManager &pm) { buildMoegenFrontendPipeline(pm); });
  mlir::PassPipelineRegistration<>(
      "moegen-lower", "moe-lower-to-target: the lowering of the module's moe.target",
      [](mlir::OpPassManager &pm) { pm.addPass(createMoeLowerToTarget()); });
}

} // namespace moegen
