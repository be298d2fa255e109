//===- Disassembler.h - In-process ISA listing of a code object -*- C++ -*-===//
#ifndef MOEGEN_COMPILER_TARGET_DISASSEMBLER_H
#define MOEGEN_COMPILER_TARGET_DISASSEMBLER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace moegen {

/// Disassembles the .text section of an AMDGPU code object with LLVM MC,
/// labelling each function symbol: "kernel:" followed by one instruction per
/// line ("  s_load_dwordx2 s[0:1], s[4:5], 0x0  // 000000001000").
llvm::Expected<std::string> disassembleCodeObject(llvm::ArrayRef<char> hsaco, llvm::StringRef chip);

} // namespace moegen

#endif // MOEGEN_COMPILER_TARGET_DISASSEMBLER_H
