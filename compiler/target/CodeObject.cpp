//===- CodeObject.cpp - LLVM dialect kernels to gfx950 code objects -------===//

#include "compiler/target/CodeObject.h"

#include "mlir/Target/LLVMIR/Export.h"

#include "lld/Common/Driver.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <mutex>

LLD_HAS_DRIVER(elf)

extern "C" {
void LLVMInitializeAMDGPUTargetInfo();
void LLVMInitializeAMDGPUTarget();
void LLVMInitializeAMDGPUTargetMC();
void LLVMInitializeAMDGPUAsmPrinter();
void LLVMInitializeAMDGPUAsmParser();
void LLVMInitializeAMDGPUDisassembler();
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace moegen {

void initializeAMDGPUTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    LLVMInitializeAMDGPUAsmParser();
    LLVMInitializeAMDGPUDisassembler();
  });
}

void initializeNVPTXTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

static std::string printModule(const llvm::Module &m) {
  std::string text;
  llvm::raw_string_ostream os(text);
  m.print(os, nullptr);
  return text;
}

static llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const CodeObjectOptions &options, const TargetInfo &info) {
  if (info.isNvptx())
    initializeNVPTXTarget();
  else
    initializeAMDGPUTarget();
  llvm::Triple triple(info.triple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return makeError(llvm::Twine(info.isNvptx() ? "NVPTX" : "AMDGPU") +
                     " target not available in this LLVM: " + error);
  llvm::TargetOptions to;
  auto level = options.optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
               : options.optLevel == 0 ? llvm::CodeGenOptLevel::None
                                       : llvm::CodeGenOptLevel::Default;
  llvm::StringRef features = info.llvmFeatures();
  std::optional<llvm::Reloc::Model> reloc;
  if (!info.isNvptx())
    reloc = llvm::Reloc::PIC_;
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(triple, options.chip, features, to, reloc, std::nullopt, level));
  if (!tm)
    return makeError("cannot create a target machine for " + options.chip);
  return tm;
}

/// gpu.dynamic_shared_memory lowers to an internal zero-length shared array,
/// which NVPTX emits as a one-byte static variable; the launch's dynamic
/// shared memory is the external one (CUDA's `extern __shared__`).
static void declareDynamicSharedMemory(llvm::Module &m) {
  for (llvm::GlobalVariable &g : m.globals()) {
    auto *array = llvm::dyn_cast<llvm::ArrayType>(g.getValueType());
    if (g.getAddressSpace() == 3 && array && array->getNumElements() == 0 && g.hasLocalLinkage()) {
      g.setLinkage(llvm::GlobalValue::ExternalLinkage);
      g.setInitializer(nullptr);
    }
  }
}

static void optimize(llvm::Module &m, llvm::TargetMachine &tm, int optLevel) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = optLevel >= 3   ? llvm::OptimizationLevel::O3
                                  : optLevel == 2 ? llvm::OptimizationLevel::O2
                                  : optLevel == 1 ? llvm::OptimizationLevel::O1
                                                  : llvm::OptimizationLevel::O0;
  llvm::ModulePassManager mpm = level == llvm::OptimizationLevel::O0
                                    ? pb.buildO0DefaultPipeline(level)
                                    : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(m, mam);
}

static llvm::Expected<std::string> emit(llvm::Module &m, llvm::TargetMachine &tm,
                                        llvm::CodeGenFileType type) {
  llvm::SmallString<0> out;
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, type))
    return makeError("the " + tm.getTargetTriple().str() + " target cannot emit this file type");
  pm.run(m);
  return std::string(out.str());
}

/// Links a relocatable object into a code object with liblld. lld keeps
/// global state, so links are serialized; its ELF driver reads and writes
/// files, so the object goes through a private temporary directory.
static llvm::Expected<std::vector<char>> linkCodeObject(llvm::StringRef object) {
  static std::mutex lldMutex;
  llvm::SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("moegen-link", dir))
    return makeError("cannot create a temporary directory for linking: " + ec.message());
  llvm::SmallString<128> objPath(dir), outPath(dir);
  llvm::sys::path::append(objPath, "kernel.o");
  llvm::sys::path::append(outPath, "kernel.hsaco");
  llvm::scope_exit cleanup([&] {
    llvm::sys::fs::remove(objPath);
    llvm::sys::fs::remove(outPath);
    llvm::sys::fs::remove(dir);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objPath, ec);
    if (ec)
      return makeError("cannot write " + objPath + ": " + ec.message());
    os << object;
  }
  std::string diagnostics;
  llvm::raw_string_ostream diag(diagnostics);
  const char *args[] = {"ld.lld",        "-shared", "--no-undefined",
                        objPath.c_str(), "-o",      outPath.c_str()};
  lld::Result result;
  {
    std::lock_guard<std::mutex> lock(lldMutex);
    result = lld::lldMain(args, diag, diag, {{lld::Gnu, &lld::elf::link}});
  }
  if (result.retCode != 0)
    return makeError("lld failed to link the code object: " + diagnostics);
  auto buffer = llvm::MemoryBuffer::getFile(outPath, /*IsText=*/false);
  if (!buffer)
    return makeError("cannot read the linked code object: " + buffer.getError().message());
  return std::vector<char>((*buffer)->getBufferStart(), (*buffer)->getBufferEnd());
}

llvm::Expected<CodeObject> emitCodeObject(mlir::gpu::GPUModuleOp module,
                                          const CodeObjectOptions &options,
                                          const StageDumper &dump) {
  llvm::LLVMContext llvmContext;
  // LLVM's warnings are collected for the caller instead of going to stderr.
  std::vector<std::string> warnings;
  llvmContext.setDiagnosticHandlerCallBack(
      [](const llvm::DiagnosticInfo *info, void *context) {
        if (info->getSeverity() == llvm::DS_Remark || info->getSeverity() == llvm::DS_Note)
          return;
        std::string text;
        llvm::raw_string_ostream os(text);
        llvm::DiagnosticPrinterRawOStream printer(os);
        info->print(printer);
        llvm::StringRef noLocation = "<unknown>:0:0: "; // LLVM's prefix without a source location
        if (llvm::StringRef(text).starts_with(noLocation))
          text.erase(0, noLocation.size());
        auto *out = static_cast<std::vector<std::string> *>(context);
        if (std::find(out->begin(), out->end(), text) == out->end())
          out->push_back(text);
      },
      &warnings);
  std::unique_ptr<llvm::Module> m =
      mlir::translateModuleToLLVMIR(module, llvmContext, module.getName());
  if (!m)
    return makeError("cannot translate gpu.module @" + module.getName() + " to LLVM IR");
  std::optional<TargetInfo> info = TargetInfo::forChip(options.chip, options.abi);
  if (!info)
    return makeError("unsupported target chip '" + options.chip + "'; moegen generates " +
                     TargetInfo::supportedChips());
  auto tm = createTargetMachine(options, *info);
  if (!tm)
    return tm.takeError();
  m->setTargetTriple(llvm::Triple(info->triple()));
  m->setDataLayout((*tm)->createDataLayout());
  if (info->isNvptx())
    declareDynamicSharedMemory(*m);
  if (!info->isNvptx())
    m->addModuleFlag(llvm::Module::Error, "amdhsa_code_object_version", options.abi * 100);
  if (dump)
    dump("llvm", printModule(*m));

  optimize(*m, **tm, options.optLevel);
  if (dump)
    dump("llvm-opt", printModule(*m));

  CodeObject result;
  {
    llvm::SmallVector<char, 0> bc;
    llvm::raw_svector_ostream os(bc);
    llvm::WriteBitcodeToFile(*m, os);
    result.bitcode.assign(bc.begin(), bc.end());
  }
  // Code generation mutates the module, so the assembly is printed from a copy.
  std::unique_ptr<llvm::Module> forAsm = llvm::CloneModule(*m);
  auto isa = emit(*forAsm, **tm, llvm::CodeGenFileType::AssemblyFile);
  if (!isa)
    return isa.takeError();
  result.isa = std::move(*isa);
  if (dump)
    dump("isa", result.isa);
  if (info->isNvptx()) {
    // The code object is the PTX text itself, NUL-terminated as
    // cuModuleLoadData expects; the driver compiles it for the device.
    result.hsaco.assign(result.isa.begin(), result.isa.end());
    result.hsaco.push_back('\0');
    result.warnings = std::move(warnings);
    return result;
  }
  auto object = emit(*m, **tm, llvm::CodeGenFileType::ObjectFile);
  if (!object)
    return object.takeError();
  auto hsaco = linkCodeObject(*object);
  if (!hsaco)
    return hsaco.takeError();
  result.hsaco = std::move(*hsaco);
  result.warnings = std::move(warnings);
  return result;
}

} // namespace moegen
