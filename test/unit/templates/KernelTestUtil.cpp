//===- KernelTestUtil.cpp - Build one template kernel for gfx950 ----------===//

#include "KernelTestUtil.h"

#include "compiler/pipeline/Pipeline.h"

#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

namespace moegen::test {

llvm::Expected<BuiltKernel> compileKernel(llvm::StringRef symbol, KernelBodyBuilder build) {
  mlir::DialectRegistry registry;
  registerMoegenDialects(registry);
  mlir::MLIRContext ctx(registry, mlir::MLIRContext::Threading::DISABLED);
  ctx.loadAllAvailableDialects();
  std::string diags;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    llvm::raw_string_ostream(diags) << d << "\n";
    return mlir::success();
  });
  auto fail = [&](llvm::StringRef what) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), what + ": " + diags);
  };

  mlir::Location loc = mlir::UnknownLoc::get(&ctx);
  mlir::OwningOpRef<mlir::ModuleOp> top = mlir::ModuleOp::create(loc);
  mlir::ImplicitLocOpBuilder b(loc, &ctx);
  b.setInsertionPointToEnd(top->getBody());
  TargetInfo chip = TargetInfo::defaultTarget();
  auto target = mlir::ROCDL::ROCDLTargetAttr::get(&ctx, /*optLevel=*/3, "amdgcn-amd-amdhsa",
                                                  chip.chip, "", "600");
  auto module = mlir::gpu::GPUModuleOp::create(b, symbol, b.getArrayAttr({target}));
  build(b, module);
  if (mlir::failed(mlir::verify(*top)))
    return fail("the kernel does not verify");
  mlir::PassManager pm(&ctx);
  buildTargetLoweringPipeline(pm, chip);
  if (mlir::failed(pm.run(*top)))
    return fail("the " + chip.chip + " lowering failed");

  auto lowered = top->lookupSymbol<mlir::gpu::GPUModuleOp>(symbol);
  auto code = emitCodeObject(lowered, CodeObjectOptions{});
  if (!code)
    return fail(llvm::toString(code.takeError()));
  // MOEGEN_TEST_DUMP=dir keeps <symbol>.bc and <symbol>.s for inspection.
  if (const char *dir = std::getenv("MOEGEN_TEST_DUMP")) {
    std::error_code ec;
    llvm::raw_fd_ostream(std::string(dir) + "/" + symbol.str() + ".bc", ec)
        .write(code->bitcode.data(), code->bitcode.size());
    llvm::raw_fd_ostream(std::string(dir) + "/" + symbol.str() + ".s", ec) << code->isa;
  }
  auto info = readCodeObjectInfo(code->hsaco);
  if (!info)
    return info.takeError();
  BuiltKernel k{std::move(*code), std::move(*info), {}};
  for (const KernelResources &r : k.info.kernels)
    if (r.symbol == symbol)
      k.resources = r;
  if (k.resources.symbol.empty())
    return fail("no kernel @" + symbol.str() + " in the code object");
  return k;
}

int countInstructions(llvm::StringRef isa, llvm::StringRef mnemonic) {
  int n = 0;
  llvm::SmallVector<llvm::StringRef> lines;
  isa.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    line = line.ltrim();
    if (line.consume_front(mnemonic) && (line.empty() || line.front() == ' '))
      ++n;
  }
  return n;
}

std::unique_ptr<emu::Emulator> loadOnEmulator(const BuiltKernel &k) {
  auto e = std::make_unique<emu::Emulator>();
  llvm::StringRef bitcode(k.code.bitcode.data(), k.code.bitcode.size());
  if (llvm::Error err = e->loadIR(llvm::MemoryBufferRef(bitcode, k.resources.symbol))) {
    llvm::errs() << llvm::toString(std::move(err)) << "\n";
    return nullptr;
  }
  return e;
}

llvm::Error Launch::run(emu::Emulator &e, llvm::StringRef kernel, std::array<int64_t, 3> grid,
                        int64_t block) {
  auto info = e.getKernel(kernel);
  if (!info)
    return info.takeError();
  emu::KernargBuilder kb(**info);
  for (const auto &a : args)
    kb.add(a.data(), uint32_t(a.size()));
  if (!kb.complete())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "kernel arguments do not match the kernel");
  emu::Dim3 g{uint32_t(grid[0]), uint32_t(grid[1]), uint32_t(grid[2])};
  return e.launch(kernel, {g, {uint32_t(block), 1, 1}}, kb.bytes());
}

} // namespace moegen::test
