//===- moegen-opt.cpp - mlir-opt with the moegen dialect and passes -------===//

#include "compiler/pipeline/Pipeline.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  moegen::registerMoegenDialects(registry);
  moegen::registerMoegenPassesAndPipelines();
  mlir::registerTransformsPasses();
  mlir::registerConversionPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "moegen optimizer driver\n", registry));
}
