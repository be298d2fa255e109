//===- InputFile.h - Reading files moegen does not control ------*- C++ -*-===//
//
// Every file a user names (a .moe spec, a tuned table, .npy and .json inputs)
// is read through readInputFile: only regular files (a FIFO, a device such as
// /dev/zero or a directory is refused before anything is opened), up to a size
// bound. JSON goes through parseJsonInput, which bounds the nesting depth before
// llvm::json's recursive parser sees the text.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_COMPILER_SPEC_INPUTFILE_H
#define MOEGEN_COMPILER_SPEC_INPUTFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>

namespace moegen {

/// Reads the regular file `path` ("-": standard input when allowStdin) of at
/// most maxBytes bytes. Errors read "cannot read 'PATH': REASON".
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readInputFile(llvm::StringRef path, uint64_t maxBytes, bool isText, bool allowStdin = false);

/// The deepest JSON nesting parseJsonInput accepts.
constexpr unsigned kMaxJsonDepth = 64;

/// llvm::json::parse after checking that arrays and objects nest at most
/// kMaxJsonDepth deep; errors name `name`.
llvm::Expected<llvm::json::Value> parseJsonInput(llvm::StringRef text, llvm::StringRef name);

} // namespace moegen

#endif // MOEGEN_COMPILER_SPEC_INPUTFILE_H
