//===- MoeOps.h - Operations of the moe dialect -----------------*- C++ -*-===//
#ifndef MOEGEN_DIALECTS_MOE_MOEOPS_H
#define MOEGEN_DIALECTS_MOE_MOEOPS_H

#include "dialects/moe/MoeDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/moe/MoeOps.h.inc"

#endif // MOEGEN_DIALECTS_MOE_MOEOPS_H
