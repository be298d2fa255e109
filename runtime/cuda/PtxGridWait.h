//===- PtxGridWait.h - Which PTX entries wait for their predecessors -*- C++ -*-===//
//
// The cuda backend launches with programmatic stream serialization only the
// kernels that are safe under it: those whose body executes
// `griddepcontrol.wait` (moegen's sm_90a kernels do, first thing:
// moe-attach-grid-dependencies). PTX from elsewhere, or from a moegen
// without that pass, is launched after its predecessors as before.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_CUDA_PTXGRIDWAIT_H
#define MOEGEN_RUNTIME_CUDA_PTXGRIDWAIT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"

namespace moegen::cuda {

/// The names of the `.entry` functions of `ptx` whose body (from the first
/// `{` after the parameter list to its matching `}`) contains the
/// instruction `griddepcontrol.wait`. Text outside a body, in a comment or
/// in an unterminated body counts for nothing.
llvm::StringSet<> ptxEntriesThatWait(llvm::StringRef ptx);

} // namespace moegen::cuda

#endif // MOEGEN_RUNTIME_CUDA_PTXGRIDWAIT_H
