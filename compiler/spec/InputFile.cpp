//===- InputFile.cpp - Reading files moegen does not control ---------------===//

#include "compiler/spec/InputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include <algorithm>

namespace moegen {

static llvm::Error cannotRead(llvm::StringRef path, const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "cannot read '" + path + "': " + why);
}

/// Standard input in chunks, stopping at maxBytes (it may be a device).
static llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readStdin(uint64_t maxBytes) {
  llvm::SmallString<0> data;
  char chunk[1 << 16];
  for (;;) {
    auto n = llvm::sys::fs::readNativeFile(llvm::sys::fs::getStdinHandle(), chunk);
    if (!n)
      return cannotRead("<stdin>", llvm::toString(n.takeError()));
    if (*n == 0)
      return llvm::MemoryBuffer::getMemBufferCopy(data, "<stdin>");
    if (data.size() + *n > maxBytes)
      return cannotRead("<stdin>", "more than the limit of " + llvm::Twine(maxBytes) + " bytes");
    data.append(chunk, chunk + *n);
  }
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readInputFile(llvm::StringRef path, uint64_t maxBytes, bool isText, bool allowStdin) {
  if (allowStdin && path == "-")
    return readStdin(maxBytes);
  // Status first: opening a FIFO blocks, and a device never ends.
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return cannotRead(path, ec.message());
  if (status.type() == llvm::sys::fs::file_type::directory_file)
    return cannotRead(path, "is a directory");
  if (status.type() != llvm::sys::fs::file_type::regular_file)
    return cannotRead(path, "not a regular file");
  if (status.getSize() > maxBytes)
    return cannotRead(path, llvm::Twine(status.getSize()) + " bytes, more than the limit of " +
                                llvm::Twine(maxBytes));
  auto buffer = llvm::MemoryBuffer::getFile(path, isText);
  if (!buffer)
    return cannotRead(path, buffer.getError().message());
  if ((*buffer)->getBufferSize() > maxBytes)
    return cannotRead(path, "the file grew past the limit while being read");
  return std::move(*buffer);
}

/// The deepest nesting of '[' and '{' outside strings (unbalanced text is
/// left to the parser's own error).
static unsigned jsonDepth(llvm::StringRef text) {
  unsigned depth = 0, deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

llvm::Expected<llvm::json::Value> parseJsonInput(llvm::StringRef text, llvm::StringRef name) {
  if (unsigned depth = jsonDepth(text); depth > kMaxJsonDepth)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   name + ": JSON nested " + llvm::Twine(depth) +
                                       " levels deep, more than the limit of " +
                                       llvm::Twine(kMaxJsonDepth));
  auto value = llvm::json::parse(text);
  if (!value)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   name + ": " + llvm::toString(value.takeError()));
  return value;
}

} // namespace moegen
