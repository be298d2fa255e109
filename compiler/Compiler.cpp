//===- Compiler.cpp - The moegen compiler API -----------------------------===//

#include "compiler/Compiler.h"

#include "compiler/pipeline/Pipeline.h"
#include "compiler/spec/SpecLimits.h"
#include "compiler/transforms/Passes.h"
#include "dialects/moe/SpecConversion.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <mutex>
#include <optional>

namespace moegen {
namespace {

llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Writes text to dumpDir/name, creating the directory on first use.
llvm::Error writeDump(llvm::StringRef dir, llvm::StringRef name, llvm::StringRef text) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return makeError("cannot create --dump-ir directory '" + dir + "': " + ec.message());
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return makeError("cannot write '" + path + "': " + ec.message());
  os << text;
  return llvm::Error::success();
}

/// "file:line:col: " for source locations, "name: " for named ones.
void printLocation(llvm::raw_ostream &os, mlir::Location loc) {
  if (auto fl = llvm::dyn_cast<mlir::FileLineColLoc>(loc))
    os << fl.getFilename().getValue() << ":" << fl.getLine() << ":" << fl.getColumn() << ": ";
  else if (auto nl = llvm::dyn_cast<mlir::NameLoc>(loc))
    os << nl.getName().getValue() << ": ";
}

/// A context with everything the pipeline needs and a handler that collects
/// diagnostics as text.
struct CompileSession {
  mlir::MLIRContext ctx;
  std::mutex diagnosticsMutex; // diagnostics may come from the pool's threads
  std::string diagnostics;
  std::unique_ptr<mlir::ScopedDiagnosticHandler> handler;

  CompileSession() : ctx(mlir::MLIRContext::Threading::DISABLED) {
    mlir::DialectRegistry registry;
    registerMoegenDialects(registry);
    ctx.appendDialectRegistry(registry);
    ctx.loadAllAvailableDialects();
    ctx.printOpOnDiagnostic(false);
    handler = std::make_unique<mlir::ScopedDiagnosticHandler>(&ctx, [this](mlir::Diagnostic &d) {
      std::lock_guard<std::mutex> lock(diagnosticsMutex);
      llvm::raw_string_ostream os(diagnostics);
      printLocation(os, d.getLocation());
      os << (d.getSeverity() == mlir::DiagnosticSeverity::Error ? "error: " : "note: ") << d
         << "\n";
      for (mlir::Diagnostic &note : d.getNotes()) {
        printLocation(os, note.getLocation());
        os << "note: " << note << "\n";
      }
      return mlir::success();
    });
  }

  llvm::Error fail(llvm::StringRef what) {
    return makeError(diagnostics.empty() ? what.str() : llvm::StringRef(diagnostics).rtrim());
  }
};

/// Builds the moe-dialect module of a spec, with locations from its source.
mlir::OwningOpRef<mlir::ModuleOp> buildModule(CompileSession &s, const MoeSpec &spec,
                                              const CompileOptions &options) {
  auto target = moe::TargetAttr::get(&s.ctx, options.chip, options.codeObjectVersion);
  return moe::buildLayerModule(&s.ctx, spec, target);
}

llvm::Error checkTarget(const CompileOptions &options) {
  auto target = TargetInfo::get(options.chip, options.codeObjectVersion);
  return target ? llvm::Error::success() : target.takeError();
}

} // namespace

llvm::Error verifyLayer(const MoeSpec &spec, const CompileOptions &options) {
  if (llvm::Error e = checkTarget(options))
    return e;
  if (llvm::Error e = checkSpecLimits(spec))
    return e;
  CompileSession s;
  auto module = buildModule(s, spec, options);
  if (!module)
    return s.fail("invalid layer");
  mlir::PassManager pm(&s.ctx);
  MoeVerifyScheduleOptions verify;
  for (KernelFamily f : options.families)
    verify.families.push_back(toString(f).str());
  pm.addPass(createMoeVerifySchedule(verify));
  if (mlir::failed(pm.run(*module)))
    return s.fail("schedule verification failed");
  return llvm::Error::success();
}

/// Translates, optimizes, generates and links one kernel module.
static llvm::Expected<CompiledKernel> compileKernel(mlir::gpu::GPUModuleOp kernelModule,
                                                    const PlannedKernel &k,
                                                    const CompileOptions &options) {
  auto kernelStart = std::chrono::steady_clock::now();
  llvm::Error dumpError = llvm::Error::success();
  StageDumper dump;
  if (!options.dumpDir.empty())
    dump = [&](llvm::StringRef stage, llvm::StringRef text) {
      std::string ext = stage == "isa" ? ".s" : stage == "llvm" ? ".ll" : ".opt.ll";
      if (llvm::Error e = writeDump(options.dumpDir, k.signature.symbol + ext, text))
        dumpError = llvm::joinErrors(std::move(dumpError), std::move(e));
    };
  CodeObjectOptions coOptions{options.chip, options.codeObjectVersion, options.optLevel};
  auto code = emitCodeObject(kernelModule, coOptions, dump);
  if (dumpError) {
    if (!code)
      llvm::consumeError(code.takeError());
    return std::move(dumpError);
  }
  if (!code)
    return code.takeError();
  CompiledKernel ck;
  ck.family = k.family;
  ck.signature = k.signature;
  ck.code = std::move(*code);
  ck.compileMs = msSince(kernelStart);
  if (TargetInfo::forChip(options.chip, options.codeObjectVersion)->isNvptx()) {
    // Registers and spills are known only after ptxas (in the driver).
    ck.resources.symbol = k.signature.symbol;
    ck.resources.codeBytes = static_cast<int64_t>(ck.code.hsaco.size());
    ck.resources.wavefrontSize = 32;
    return ck;
  }
  auto resources = readCodeObjectInfo(ck.code.hsaco);
  if (!resources)
    return resources.takeError();
  for (KernelResources &r : resources->kernels)
    if (r.symbol == k.signature.symbol)
      ck.resources = r;
  return ck;
}

llvm::Expected<CompiledLayer> compileLayer(const MoeSpec &spec, const CompileOptions &options) {
  if (llvm::Error e = checkTarget(options))
    return std::move(e);
  if (llvm::Error e = checkSpecLimits(spec))
    return std::move(e);
  auto start = std::chrono::steady_clock::now();
  std::optional<TargetInfo> info = TargetInfo::forChip(options.chip, options.codeObjectVersion);
  ScheduleIssues issues;
  std::vector<PlannedKernel> planned = planLayerKernels(spec, *info, issues);
  if (!options.families.empty())
    llvm::erase_if(planned, [&](const PlannedKernel &k) {
      return !llvm::is_contained(options.families, k.family);
    });
  if (planned.empty())
    return makeError("the layer has none of the kernel families asked for");

  // The pool outlives the session whose context borrows it. With it, the
  // pass manager runs the nested kernel-module pipeline on its threads too;
  // every kernel module is isolated from above, so each thread only touches
  // its own kernel's IR (the context's uniquing is locked once the context
  // is multithreaded).
  unsigned threads = std::min<unsigned>(
      llvm::hardware_concurrency(options.threads).compute_thread_count(), planned.size());
  std::optional<llvm::DefaultThreadPool> pool;
  CompileSession s;
  if (threads > 1) {
    pool.emplace(llvm::hardware_concurrency(threads));
    s.ctx.setThreadPool(*pool);
  }
  auto module = buildModule(s, spec, options);
  if (!module)
    return s.fail("invalid layer");
  if (!options.dumpDir.empty()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    if (llvm::Error e = writeDump(options.dumpDir, "00-input.mlir", text))
      return std::move(e);
  }
  mlir::PassManager pm(&s.ctx);
  std::vector<std::string> familyNames;
  for (KernelFamily f : options.families)
    familyNames.push_back(toString(f).str());
  buildMoegenPipeline(pm, familyNames);
  if (!options.dumpDir.empty())
    pm.enableIRPrintingToFileTree(
        /*shouldPrintBeforePass=*/[](mlir::Pass *, mlir::Operation *) { return false; },
        /*shouldPrintAfterPass=*/[](mlir::Pass *, mlir::Operation *) { return true; },
        /*printModuleScope=*/false, /*printAfterOnlyOnChange=*/false,
        /*printAfterOnlyOnFailure=*/false, options.dumpDir);
  if (mlir::failed(pm.run(*module)))
    return s.fail("the moegen pipeline failed");

  CompiledLayer layer;
  layer.frontendMs = msSince(start);
  // Each kernel gets its own LLVMContext and TargetMachine inside
  // emitCodeObject (lld links stay serialized there); results keep the
  // planned order, and the first failure in that order is the one reported.
  std::vector<mlir::gpu::GPUModuleOp> kernelModules;
  for (const PlannedKernel &k : planned) {
    kernelModules.push_back(module->lookupSymbol<mlir::gpu::GPUModuleOp>(k.signature.symbol));
    if (!kernelModules.back())
      return makeError("internal error: kernel module @" + k.signature.symbol + " is missing");
  }
  std::vector<std::optional<llvm::Expected<CompiledKernel>>> results(planned.size());
  auto compileOne = [&](size_t i) {
    results[i].emplace(compileKernel(kernelModules[i], planned[i], options));
  };
  if (pool) {
    for (size_t i = 0; i < planned.size(); ++i)
      pool->async([&compileOne, i] { compileOne(i); });
    pool->wait();
  } else {
    for (size_t i = 0; i < planned.size(); ++i)
      compileOne(i);
  }
  llvm::Error firstError = llvm::Error::success();
  for (std::optional<llvm::Expected<CompiledKernel>> &r : results) {
    if (!*r) {
      if (firstError)
        llvm::consumeError(r->takeError());
      else
        firstError = r->takeError();
      continue;
    }
    layer.kernels.push_back(std::move(**r));
  }
  if (firstError)
    return std::move(firstError);
  return layer;
}

} // namespace moegen
