//===- Npy.cpp - .npy files and tensors on disk ---------------------------===//

#include "runtime/numerics/Npy.h"

#include "compiler/spec/InputFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

namespace moegen::num {

namespace {

// Bounds for files read back: a .npy payload (1 TiB is far past any layer)
// and its side JSON.
constexpr uint64_t kMaxNpyBytes = uint64_t(1) << 40;
constexpr uint64_t kMaxSideJsonBytes = 1 << 20;
constexpr size_t kMaxHeaderBytes = 1 << 16;
constexpr size_t kMaxRank = 8;

/// The element count of `shape` times `elemBytes`, or nullopt when a
/// dimension is negative or the product overflows.
std::optional<int64_t> shapeBytes(llvm::ArrayRef<int64_t> shape, int64_t elemBytes) {
  int64_t n = elemBytes;
  for (int64_t d : shape)
    if (d < 0 || llvm::MulOverflow(n, d, n))
      return std::nullopt;
  return n;
}

int64_t elemSize(llvm::StringRef descr) {
  if (descr.size() < 3)
    return -1;
  int64_t n = 0;
  if (descr.drop_front(2).getAsInteger(10, n))
    return -1;
  return n;
}

std::string joinPath(llvm::StringRef dir, llvm::StringRef file) {
  llvm::SmallString<256> p(dir);
  llvm::sys::path::append(p, file);
  return std::string(p);
}

llvm::Error writeFile(llvm::StringRef path, llvm::StringRef bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return llvm::createStringError(ec, "cannot write %s: %s", path.str().c_str(),
                                   ec.message().c_str());
  os << bytes;
  os.close();
  if (os.has_error())
    return llvm::createStringError(os.error(), "error writing %s", path.str().c_str());
  return llvm::Error::success();
}

} // namespace

std::string encodeNpy(llvm::StringRef descr, llvm::ArrayRef<int64_t> shape,
                      llvm::ArrayRef<uint8_t> data) {
  std::string dict = "{'descr': '" + descr.str() + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i)
    dict +=
        std::to_string(shape[i]) + (shape.size() == 1 ? "," : (i + 1 < shape.size() ? ", " : ""));
  dict += "), }";
  // Magic (6) + version (2) + length (2) + header, padded with spaces and a
  // newline to a multiple of 64 bytes.
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(dict.size() & 0xFF);
  out += static_cast<char>((dict.size() >> 8) & 0xFF);
  out += dict;
  out.append(reinterpret_cast<const char *>(data.data()), data.size());
  return out;
}

llvm::Expected<NpyArray> parseNpy(llvm::StringRef bytes, llvm::StringRef name) {
  auto fail = [&](const llvm::Twine &msg) {
    return llvm::createStringError("%s: %s", name.str().c_str(), msg.str().c_str());
  };
  if (bytes.size() < 10 || !bytes.starts_with("\x93NUMPY"))
    return fail("not a .npy file (bad magic)");
  unsigned major = static_cast<uint8_t>(bytes[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return fail("truncated header");
    headerLen = 0;
    for (int i = 0; i < 4; ++i)
      headerLen |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
    headerStart = 12;
  } else {
    return fail("unsupported .npy version " + llvm::Twine(major));
  }
  if (headerLen > kMaxHeaderBytes)
    return fail("header of " + llvm::Twine(headerLen) + " bytes, more than the limit of " +
                llvm::Twine(kMaxHeaderBytes));
  if (bytes.size() < headerStart + headerLen)
    return fail("truncated header");
  llvm::StringRef header = bytes.substr(headerStart, headerLen);
  NpyArray arr;
  auto field = [&](llvm::StringRef key) -> llvm::StringRef {
    size_t at = header.find("'" + key.str() + "'");
    if (at == llvm::StringRef::npos)
      return {};
    llvm::StringRef rest = header.substr(at + key.size() + 2).ltrim();
    if (!rest.consume_front(":"))
      return {};
    return rest.ltrim();
  };
  llvm::StringRef descr = field("descr");
  if (!descr.consume_front("'") || descr.find('\'') == llvm::StringRef::npos)
    return fail("header has no 'descr'");
  arr.descr = descr.substr(0, descr.find('\'')).str();
  if (field("fortran_order").starts_with("True"))
    return fail("fortran_order arrays are not supported");
  llvm::StringRef shape = field("shape");
  if (!shape.consume_front("(") || shape.find(')') == llvm::StringRef::npos)
    return fail("header has no 'shape'");
  shape = shape.substr(0, shape.find(')'));
  llvm::SmallVector<llvm::StringRef> dims;
  shape.split(dims, ',');
  for (llvm::StringRef d : dims) {
    d = d.trim();
    if (d.empty())
      continue;
    int64_t v;
    if (d.getAsInteger(10, v) || v < 0)
      return fail("bad shape entry '" + d + "'");
    if (arr.shape.size() == kMaxRank)
      return fail("more than " + llvm::Twine(kMaxRank) + " dimensions");
    arr.shape.push_back(v);
  }
  int64_t es = elemSize(arr.descr);
  if (es <= 0 || es > 16)
    return fail("unsupported descr '" + arr.descr + "'");
  std::optional<int64_t> need = shapeBytes(arr.shape, es);
  if (!need)
    return fail("shape (" + shape + ") overflows a 64-bit byte count");
  llvm::StringRef payload = bytes.substr(headerStart + headerLen);
  if (static_cast<int64_t>(payload.size()) != *need)
    return fail("payload has " + llvm::Twine(payload.size()) + " bytes, shape and descr need " +
                llvm::Twine(*need));
  arr.data.assign(payload.begin(), payload.end());
  return arr;
}

llvm::Error writeNpy(llvm::StringRef path, llvm::StringRef descr, llvm::ArrayRef<int64_t> shape,
                     llvm::ArrayRef<uint8_t> data) {
  return writeFile(path, encodeNpy(descr, shape, data));
}

llvm::Expected<NpyArray> readNpy(llvm::StringRef path) {
  auto buf = readInputFile(path, kMaxNpyBytes, /*isText=*/false);
  if (!buf)
    return buf.takeError();
  return parseNpy((*buf)->getBuffer(), path);
}

llvm::Error writeTensor(llvm::StringRef dir, llvm::StringRef name, const HostTensor &t,
                        std::vector<std::string> *written) {
  if (auto err = verifyTensor(t, name))
    return err;
  auto record = [&](const std::string &p) {
    if (written)
      written->push_back(p);
  };
  std::string npy = joinPath(dir, (name + ".npy").str());
  switch (t.format) {
  case ElemFormat::F32:
    record(npy);
    return writeNpy(npy, "<f4", t.shape, t.data);
  case ElemFormat::F64:
    record(npy);
    return writeNpy(npy, "<f8", t.shape, t.data);
  default:
    break;
  }
  llvm::json::Object meta;
  meta["format"] = toString(t.format);
  meta["logical_shape"] = llvm::json::Array(t.shape);
  if (t.format == ElemFormat::BF16) {
    meta["packing"] = "bf16 words stored as uint16";
    if (auto err = writeNpy(npy, "<u2", t.shape, t.data))
      return err;
  } else {
    std::vector<int64_t> bshape = {t.rows(), packedBytes(t.format, t.cols())};
    meta["packing"] = (t.format == ElemFormat::MXFP4 || t.format == ElemFormat::FP4)
                          ? "fp4x2: element 2j in the low nibble"
                          : "f8E4M3FN bytes";
    if (auto err = writeNpy(npy, "|u1", bshape, t.data))
      return err;
    if (isMx(t.format)) {
      std::string sc = (name + ".scales.npy").str();
      meta["scales"] = sc;
      meta["scale_block"] = kMxBlock;
      meta["scale_format"] = "e8m0 (2^(e-127), 0xFF = NaN), row-major [rows, cols/32]";
      std::string scPath = joinPath(dir, sc);
      if (auto err = writeNpy(scPath, "|u1", {t.rows(), t.scaleCols()}, t.scales))
        return err;
      record(scPath);
    }
  }
  record(npy);
  std::string json;
  llvm::raw_string_ostream os(json);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(meta))) << "\n";
  std::string jsonPath = joinPath(dir, (name + ".json").str());
  record(jsonPath);
  return writeFile(jsonPath, json);
}

llvm::Expected<HostTensor> readTensor(llvm::StringRef dir, llvm::StringRef name) {
  auto arr = readNpy(joinPath(dir, (name + ".npy").str()));
  if (!arr)
    return arr.takeError();
  HostTensor t;
  if (arr->descr == "<f4" || arr->descr == "<f8") {
    t.format = arr->descr == "<f4" ? ElemFormat::F32 : ElemFormat::F64;
    t.shape = arr->shape;
    t.data = std::move(arr->data);
    return t;
  }
  std::string jsonPath = joinPath(dir, (name + ".json").str());
  auto buf = readInputFile(jsonPath, kMaxSideJsonBytes, /*isText=*/true);
  if (!buf)
    return buf.takeError();
  auto json = parseJsonInput((*buf)->getBuffer(), jsonPath);
  if (!json)
    return json.takeError();
  const llvm::json::Object *obj = json->getAsObject();
  auto fmtName = obj ? obj->getString("format") : std::nullopt;
  auto fmt = fmtName ? parseElemFormat(*fmtName) : std::nullopt;
  const llvm::json::Array *shape = obj ? obj->getArray("logical_shape") : nullptr;
  if (!fmt || !shape)
    return llvm::createStringError("%s: needs a known \"format\" and a \"logical_shape\"",
                                   jsonPath.c_str());
  t.format = *fmt;
  for (const llvm::json::Value &d : *shape) {
    auto v = d.getAsInteger();
    if (!v)
      return llvm::createStringError("%s: logical_shape entries must be integers",
                                     jsonPath.c_str());
    t.shape.push_back(*v);
  }
  if (t.shape.size() > kMaxRank || !shapeBytes(t.shape, sizeof(double)))
    return llvm::createStringError("%s: logical_shape has more than %zu dimensions, a negative "
                                   "one or an element count that overflows",
                                   jsonPath.c_str(), kMaxRank);
  t.data = std::move(arr->data);
  if (isMx(t.format)) {
    auto sc = readNpy(joinPath(dir, (name + ".scales.npy").str()));
    if (!sc)
      return sc.takeError();
    t.scales = std::move(sc->data);
  }
  if (auto err = verifyTensor(t, jsonPath))
    return std::move(err);
  return t;
}

} // namespace moegen::num
