//===- JsonFuzzer.cpp - Fuzz the JSON side files of packed tensors --------===//
//
// readTensor reads NAME.npy and, for packed formats, NAME.json (format and
// logical shape, see Npy.h) and NAME.scales.npy. The input is the JSON; it is
// read next to two fixed arrays, |u1 [4, 16] and <u2 [4, 16], each with
// |u1 [4, 1] scales, so the shapes it names can match (bf16 [4, 16],
// fp8 [4, 16], mxfp4 [4, 32], mxfp8 [4, 32], ...). A tensor that reads is
// decoded. The reader only takes directories, so the files go to a temporary
// directory of the process.
//
//===----------------------------------------------------------------------===//

#include "runtime/numerics/Npy.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <vector>

using namespace moegen::num;

namespace {

std::string gDir;

void removeDir() {
  if (!gDir.empty())
    llvm::sys::fs::remove_directories(gDir);
}

void check(llvm::Error err) {
  if (err) {
    llvm::errs() << llvm::toString(std::move(err)) << "\n";
    std::abort();
  }
}

std::string path(llvm::StringRef file) {
  llvm::SmallString<256> p(gDir);
  llvm::sys::path::append(p, file);
  return std::string(p);
}

void writeText(llvm::StringRef file, llvm::StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path(file), ec, llvm::sys::fs::OF_None);
  if (ec) {
    llvm::errs() << path(file) << ": " << ec.message() << "\n";
    std::abort();
  }
  os << text;
}

void setUp() {
  llvm::SmallString<256> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("moegen-fuzz-json", dir)) {
    llvm::errs() << "cannot create a temporary directory: " << ec.message() << "\n";
    std::abort();
  }
  gDir = std::string(dir);
  std::atexit(removeDir);
  std::vector<uint8_t> bytes(128), scales = {0x7f, 0x80, 0xff, 0x00};
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<uint8_t>(i * 37 + 11);
  check(writeNpy(path("u1.npy"), "|u1", {4, 16}, llvm::ArrayRef(bytes).take_front(64)));
  check(writeNpy(path("u2.npy"), "<u2", {4, 16}, bytes));
  for (const char *name : {"u1.scales.npy", "u2.scales.npy"})
    check(writeNpy(path(name), "|u1", {4, 1}, scales));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static bool ready = (setUp(), true);
  (void)ready;
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  for (const char *name : {"u1", "u2"}) {
    writeText((llvm::Twine(name) + ".json").str(), input);
    auto t = readTensor(gDir, name);
    if (!t) {
      llvm::consumeError(t.takeError());
      continue;
    }
    (void)decode(*t);
  }
  return 0;
}
