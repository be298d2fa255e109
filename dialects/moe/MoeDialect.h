//===- MoeDialect.h - The moe dialect, its types and attributes -*- C++ -*-===//
#ifndef MOEGEN_DIALECTS_MOE_MOEDIALECT_H
#define MOEGEN_DIALECTS_MOE_MOEDIALECT_H

#include "compiler/spec/Expr.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"

#include "dialects/moe/MoeDialect.h.inc"
#include "dialects/moe/MoeEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/moe/MoeTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/moe/MoeAttrs.h.inc"

#endif // MOEGEN_DIALECTS_MOE_MOEDIALECT_H
