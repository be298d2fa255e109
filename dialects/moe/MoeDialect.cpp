//===- MoeDialect.cpp - The moe dialect -----------------------------------===//

#include "dialects/moe/MoeDialect.h"

#include "dialects/moe/MoeOps.h"

using namespace mlir;
using namespace moegen::moe;

#include "dialects/moe/MoeDialect.cpp.inc"

void MoeDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/moe/MoeOps.cpp.inc"
      >();
  registerAttributes();
  registerTypes();
}
