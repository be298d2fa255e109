//===- TunedRows.cpp - Writing a tuner's results as aiter's table ---------===//

#include "tune/TunedRows.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <cstdio>

namespace moegen::tune {
namespace {

llvm::StringMap<std::string> valuesOf(const TunedResult &r) {
  const dispatch::TunedKey &k = r.key;
  llvm::StringMap<std::string> v;
  auto i = [](int64_t x) { return std::to_string(x); };
  auto fixed = [](double x, int digits) {
    char buf[64];
    snprintf(buf, sizeof(buf), "%.*f", digits, x);
    return std::string(buf);
  };
  v["gfx"] = k.gfx;
  v["cu_num"] = i(k.cuNum);
  v["token"] = i(k.token);
  v["model_dim"] = i(k.modelDim);
  v["inter_dim"] = i(k.interDim);
  v["expert"] = i(k.expert);
  v["topk"] = i(k.topk);
  v["act_type"] = k.actType;
  v["dtype"] = k.dtype;
  v["q_dtype_a"] = k.qDtypeA;
  v["q_dtype_w"] = k.qDtypeW;
  v["q_type"] = k.qType;
  v["use_g1u1"] = i(k.useG1U1);
  v["doweight_stage1"] = i(k.doweightStage1);
  v["block_m"] = i(r.blockM);
  v["ksplit"] = i(r.ksplit);
  v["us1"] = fixed(r.us1, 4);
  v["kernelName1"] = r.kernelName1;
  v["err1"] = formatErr(r.err1);
  v["us2"] = fixed(r.us2, 4);
  v["kernelName2"] = r.kernelName2;
  v["err2"] = formatErr(r.err2);
  v["us"] = fixed(r.us1 + r.us2, 4);
  v["run_1stage"] = "0";
  v["xbf16"] = "0";
  v["flat"] = "0";
  v["tflops"] = fixed(r.tflops, 2);
  v["bw"] = fixed(r.bw, 2);
  v["_tag"] = r.tag;
  return v;
}

double usOf(const llvm::StringMap<std::string> &v) {
  double us;
  auto it = v.find("us");
  if (it == v.end() || llvm::StringRef(it->second).trim().getAsDouble(us))
    return 1e300; // a row without a time is beaten by any measured one
  return us;
}

} // namespace

std::string formatErr(double fraction) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.1f%%", fraction * 100);
  return buf;
}

std::string mergeTunedRows(const dispatch::TunedTable *existing,
                           const std::vector<TunedResult> &results, MergeReport &report) {
  std::vector<llvm::StringMap<std::string>> rows;
  std::vector<std::string> keys;
  if (existing)
    for (const auto &row : existing->rows()) {
      rows.push_back(row->values);
      rows.back()["gfx"] = row->key.gfx; // legacy tables without the column
      keys.push_back(row->key.str());
    }
  for (const TunedResult &r : results) {
    llvm::StringMap<std::string> v = valuesOf(r);
    std::string key = r.key.str();
    auto it = std::find(keys.begin(), keys.end(), key);
    if (it == keys.end()) {
      rows.push_back(std::move(v));
      keys.push_back(key);
      ++report.added;
    } else if (r.replacesRow || usOf(v) < usOf(rows[it - keys.begin()])) {
      rows[it - keys.begin()] = std::move(v);
      ++report.replaced;
    } else {
      ++report.keptFaster;
    }
  }
  std::vector<llvm::StringRef> cols(dispatch::tunedColumns().begin(),
                                    dispatch::tunedColumns().end());
  cols.push_back("_tag");
  std::string out;
  for (size_t c = 0; c < cols.size(); ++c)
    out += (c ? "," : "") + dispatch::csvQuote(cols[c]);
  out += "\n";
  for (const auto &row : rows) {
    for (size_t c = 0; c < cols.size(); ++c) {
      auto it = row.find(cols[c]);
      out += (c ? "," : "") + dispatch::csvQuote(it == row.end() ? "" : it->second);
    }
    out += "\n";
  }
  return out;
}

llvm::Error writeTunedCsv(llvm::StringRef path, llvm::StringRef csv) {
  std::string tmp = (path + ".tmp").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec);
    if (ec)
      return llvm::createStringError(ec, tmp + ": " + ec.message());
    os << csv;
    os.close();
    if (os.has_error()) {
      std::error_code werr = os.error();
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return llvm::createStringError(werr, tmp + ": " + werr.message());
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    return llvm::createStringError(ec, path + ": " + ec.message());
  }
  return llvm::Error::success();
}

} // namespace moegen::tune
