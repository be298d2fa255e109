//===- TunedTableTest.cpp - aiter tuned tables ----------------------------===//

#include "runtime/dispatch/TunedTable.h"
#include "runtime/dispatch/Lookup.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace moegen::dispatch;

namespace {

std::string configDir() {
  const char *src = std::getenv("MOEGEN_SOURCE_DIR");
  llvm::SmallString<256> p(src ? src : ".");
  llvm::sys::path::append(p, "data", "aiter-configs");
  return std::string(p);
}

std::string config(llvm::StringRef name) {
  llvm::SmallString<256> p(configDir());
  llvm::sys::path::append(p, name);
  return std::string(p);
}

TunedKey kimiA4W4() {
  TunedKey k;
  k.gfx = "gfx950";
  k.cuNum = 256;
  k.modelDim = 3584;
  k.interDim = 384;
  k.expert = 896;
  k.topk = 16;
  k.actType = "ActivationType.Situv2";
  k.dtype = "torch.bfloat16";
  k.qDtypeA = "torch.float4_e2m1fn_x2";
  k.qDtypeW = "torch.float4_e2m1fn_x2";
  k.qType = "QuantType.per_1x32";
  k.useG1U1 = 1;
  k.doweightStage1 = 0;
  return k;
}

TEST(TunedTable, EveryShippedCsvLoads) {
  std::error_code ec;
  int files = 0;
  for (llvm::sys::fs::directory_iterator it(configDir(), ec), end; it != end && !ec;
       it.increment(ec)) {
    if (llvm::sys::path::extension(it->path()) != ".csv")
      continue;
    ++files;
    auto t = TunedTable::load(it->path());
    ASSERT_TRUE(!!t) << llvm::toString(t.takeError());
    EXPECT_FALSE(t->rows().empty()) << it->path();
    EXPECT_TRUE(t->duplicates().empty()) << it->path() << ": " << t->duplicates().front();
    for (const auto &row : t->rows())
      EXPECT_FALSE(row->key.gfx.empty() && !t->isUntuned()) << row->location();
  }
  EXPECT_FALSE(ec);
  EXPECT_EQ(files, 10);
}

TEST(TunedTable, KimiA4W4Lookups) {
  auto t = TunedTable::load(config("kimik3_a4w4_tuned_fmoe.csv"));
  ASSERT_TRUE(!!t) << llvm::toString(t.takeError());
  struct Case {
    int64_t tokens, tier;
    unsigned line;
    const char *kernel1, *kernel2;
  } cases[] = {
      {1, 1, 2, "flydsl_moe1_afp4_wfp4_bf16_t32x32x256_w4_kw2_fp4",
       "flydsl_moe2_layout_afp4_wfp4_bf16_t32x128x128_atomic_sbm32"},
      // get_padded_M(3) = 4: the token=3 row (line 4) is never reached.
      {3, 4, 5, "flydsl_moe1_afp4_wfp4_bf16_t32x32x256_w3_kw2_fp4",
       "flydsl_moe2_layout_afp4_wfp4_bf16_t32x128x128_atomic_sbm32"},
      {2048, 2048, 14, "flydsl_moe1_afp4_wfp4_bf16_t64x128x256_w3_fp4",
       "flydsl_moe2_layout_afp4_wfp4_bf16_t64x256x128_reduce_sbm64_sp801"},
      {20000, 32768, 18, "flydsl_moe1_afp4_wfp4_bf16_t64x128x256_w2_bnt0_xcd4_fp4",
       "flydsl_moe2_layout_afp4_wfp4_bf16_t64x256x128_reduce_sbm64_sp1601"},
      // 131072 has no row: the tier fallback retries 32768.
      {200000, 131072, 18, "flydsl_moe1_afp4_wfp4_bf16_t64x128x256_w2_bnt0_xcd4_fp4",
       "flydsl_moe2_layout_afp4_wfp4_bf16_t64x256x128_reduce_sbm64_sp1601"},
  };
  for (const Case &c : cases) {
    LookupResult r = t->lookup(kimiA4W4(), c.tokens);
    ASSERT_NE(r.row, nullptr) << c.tokens;
    EXPECT_EQ(r.paddedM, c.tier);
    EXPECT_EQ(r.row->line, c.line) << c.tokens;
    EXPECT_EQ(r.row->get("kernelName1"), c.kernel1);
    EXPECT_EQ(r.row->get("kernelName2"), c.kernel2);
    EXPECT_FALSE(r.viaActAgnostic());
  }
  LookupResult big = t->lookup(kimiA4W4(), 200000);
  ASSERT_EQ(big.steps.size(), 3u); // 131072 exact, 131072 any act, 32768 exact
  EXPECT_EQ(big.tokenKeyUsed(), 32768);
  // Without the tier fallback (key <= 32768) a missing row stays missing.
  TunedKey other = kimiA4W4();
  other.interDim = 512;
  LookupResult miss = t->lookup(other, 64);
  EXPECT_EQ(miss.row, nullptr);
  EXPECT_EQ(miss.steps.size(), 2u);
  auto h = aiterHeuristic(other, 64);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->kernelName1, "flydsl_moe1_afp4_wfp4_bf16_t32x128x256_w2");
  EXPECT_EQ(h->kernelName2, "flydsl_moe2_afp4_wfp4_bf16_t32x128x256_atomic_bnt2");
}

TEST(TunedTable, ActTypeAgnosticFallback) {
  auto t = TunedTable::load(config("kimik3_a4w4_tuned_fmoe.csv"));
  ASSERT_TRUE(!!t);
  TunedKey k = kimiA4W4();
  k.actType = "ActivationType.Silu";
  LookupResult r = t->lookup(k, 16);
  ASSERT_NE(r.row, nullptr);
  EXPECT_TRUE(r.viaActAgnostic());
  EXPECT_EQ(r.row->line, 7u);
  std::string report = formatLookupReport(k, r);
  EXPECT_NE(report.find("act_type-agnostic"), std::string::npos) << report;
  EXPECT_NE(report.find("tile=32x128x256"), std::string::npos) << report;
}

TEST(TunedTable, LegacyHeaderAndWriterOrder) {
  auto t = TunedTable::load(config("kimik2_fp4_tuned_fmoe.csv"));
  ASSERT_TRUE(!!t);
  EXPECT_EQ(t->rows().front()->key.gfx, "gfx950"); // backfilled from cu_num 256
  std::string csv = t->write();
  llvm::StringRef header = llvm::StringRef(csv).split('\n').first;
  EXPECT_EQ(header, "gfx,cu_num,token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,"
                    "q_dtype_w,q_type,use_g1u1,doweight_stage1,block_m,ksplit,us1,kernelName1,"
                    "err1,us2,kernelName2,err2,us,run_1stage,xbf16,flat,tflops,bw,_tag");
  auto back = TunedTable::parse(csv, "rewritten.csv");
  ASSERT_TRUE(!!back) << llvm::toString(back.takeError());
  ASSERT_EQ(back->rows().size(), t->rows().size());
  for (size_t i = 0; i < t->rows().size(); ++i) {
    EXPECT_EQ(back->rows()[i]->key.str(), t->rows()[i]->key.str());
    EXPECT_EQ(back->rows()[i]->get("kernelName2"), t->rows()[i]->get("kernelName2"));
    EXPECT_EQ(back->rows()[i]->get("us"), t->rows()[i]->get("us"));
    EXPECT_EQ(back->rows()[i]->get("xbf16"), "0");
  }
  // A modern table writes back byte for byte.
  auto k3 = TunedTable::load(config("kimik3_a8w4_tuned_fmoe.csv"));
  ASSERT_TRUE(!!k3);
  auto buf = llvm::MemoryBuffer::getFile(config("kimik3_a8w4_tuned_fmoe.csv"));
  ASSERT_TRUE(!!buf);
  EXPECT_EQ(k3->write(), (*buf)->getBuffer().str());
}

TEST(TunedTable, DuplicatesReportBothLines) {
  std::string csv = "token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,"
                    "q_type,use_g1u1,doweight_stage1\n"
                    "1,7168,256,8,2,ActivationType.Silu,torch.bfloat16,a,w,q,1,0\n"
                    "2,7168,256,8,2,ActivationType.Silu,torch.bfloat16,a,w,q,1,0\n"
                    "1,7168,256,8,2,ActivationType.Silu,torch.bfloat16,a,w,q,1,0\n";
  auto t = TunedTable::parse(csv, "u.csv");
  ASSERT_TRUE(!!t);
  EXPECT_TRUE(t->isUntuned());
  ASSERT_EQ(t->duplicates().size(), 1u);
  EXPECT_EQ(t->duplicates()[0], "u.csv:4: duplicate key of u.csv:2 (kept the first)");
  // Across files too.
  auto a = TunedTable::parse(csv.substr(0, csv.rfind("1,7168")), "a.csv");
  auto b = TunedTable::parse(csv.substr(0, csv.find('\n') + 1) +
                                 "2,7168,256,8,2,ActivationType.Silu,torch.bfloat16,a,w,q,1,0\n",
                             "b.csv");
  ASSERT_TRUE(a && b);
  a->append(std::move(*b));
  ASSERT_EQ(a->duplicates().size(), 1u);
  EXPECT_EQ(a->duplicates()[0], "b.csv:2: duplicate key of a.csv:3 (kept the first)");
  // A problem's duplicates at any token (what MoeLayer and `moegen cache prefill` warn
  // about); another problem has none.
  TunedKey key = a->rows()[0]->key;
  key.token = 1;
  EXPECT_EQ(a->duplicatesOf(key),
            std::vector<std::string>{"b.csv:2: duplicate key of a.csv:3 (kept the first)"});
  key.modelDim = 4096;
  EXPECT_TRUE(a->duplicatesOf(key).empty());
}

TEST(TunedTable, FallbackTaggedRowsAreNotIndexed) {
  auto t = TunedTable::load(config("kimik3_a4w4_tuned_fmoe.csv"));
  ASSERT_TRUE(!!t);
  // Re-tag the token=16 row (line 7) as aiter's dropped "flydsl_fallback".
  std::string csv = t->write();
  size_t line7 = 0;
  for (int i = 0; i < 6; ++i)
    line7 = csv.find('\n', line7) + 1;
  size_t end = csv.find('\n', line7);
  ASSERT_EQ(csv[end - 1], ',');
  csv.insert(end, "flydsl_fallback");
  auto tagged = TunedTable::parse(csv, "tagged.csv");
  ASSERT_TRUE(!!tagged) << llvm::toString(tagged.takeError());
  EXPECT_EQ(tagged->rows().size(), t->rows().size());
  EXPECT_EQ(tagged->lookup(kimiA4W4(), 16).row, nullptr);
  EXPECT_NE(tagged->lookup(kimiA4W4(), 8).row, nullptr);
  // The untuned table writes its own columns.
  auto u = TunedTable::load(config("kimik3_a4w4_untuned_fmoe.csv"));
  ASSERT_TRUE(!!u);
  EXPECT_TRUE(u->isUntuned());
  auto buf = llvm::MemoryBuffer::getFile(config("kimik3_a4w4_untuned_fmoe.csv"));
  ASSERT_TRUE(!!buf);
  EXPECT_EQ(u->write(), (*buf)->getBuffer().str());
}

TEST(TunedTable, ParseErrorsNameFileLineColumn) {
  std::string head = "token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,"
                     "q_type,use_g1u1,doweight_stage1\n";
  auto bad = TunedTable::parse(head + "1,71x68,256,8,2,A,d,a,w,q,1,0\n", "t.csv");
  ASSERT_FALSE(!!bad);
  EXPECT_EQ(llvm::toString(bad.takeError()),
            "t.csv:2:3: column 'model_dim' expects an integer, got '71x68'");
  auto wide = TunedTable::parse(head + "1,7168,256,8,2,A,d,a,w,q,1,0,extra\n", "t.csv");
  ASSERT_FALSE(!!wide);
  EXPECT_EQ(llvm::toString(wide.takeError()), "t.csv:2:30: row has 13 fields, the header has 12");
  auto noKey = TunedTable::parse("token,model_dim\n1,2\n", "k.csv");
  ASSERT_FALSE(!!noKey);
  EXPECT_EQ(llvm::toString(noKey.takeError()), "k.csv:1:1: header lacks the key column "
                                               "'inter_dim'");
  auto missing = TunedTable::load(config("no_such_table.csv"));
  ASSERT_FALSE(!!missing);
  EXPECT_NE(llvm::toString(missing.takeError()).find("no_such_table.csv': No such file"),
            std::string::npos);
}

TEST(TunedTable, ByteOrderMarkIsSkipped) {
  auto buf = llvm::MemoryBuffer::getFile(config("kimik3_a4w4_tuned_fmoe.csv"));
  ASSERT_TRUE(!!buf);
  auto plain = TunedTable::parse((*buf)->getBuffer(), "plain.csv");
  auto bom = TunedTable::parse("\xEF\xBB\xBF" + (*buf)->getBuffer().str(), "bom.csv");
  ASSERT_TRUE(plain && bom) << (bom ? "" : llvm::toString(bom.takeError()));
  ASSERT_NE(plain->lookup(kimiA4W4(), 16).row, nullptr);
  const TunedRow *hit = bom->lookup(kimiA4W4(), 16).row;
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->get("gfx"), "gfx950");
  EXPECT_EQ(bom->write(), plain->write());
}

TEST(TunedTable, TunedTableWithoutCuNumFailsToLoad) {
  auto buf = llvm::MemoryBuffer::getFile(config("kimik3_a4w4_tuned_fmoe.csv"));
  ASSERT_TRUE(!!buf);
  // Drop the cu_num column (the second) from every line.
  std::string csv;
  llvm::SmallVector<llvm::StringRef> lines;
  (*buf)->getBuffer().split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (line.empty())
      continue;
    auto [gfx, rest] = line.split(',');
    csv += gfx.str() + "," + rest.split(',').second.str() + "\n";
  }
  auto t = TunedTable::parse(csv, "nocu.csv");
  ASSERT_FALSE(!!t);
  EXPECT_EQ(llvm::toString(t.takeError()), "nocu.csv:1:1: header lacks the key column 'cu_num'");
  // A legacy table without gfx loads; a cu_num that names no chip is a warning.
  std::string legacy = "cu_num,token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,"
                       "q_dtype_w,q_type,use_g1u1,doweight_stage1,block_m,kernelName1\n"
                       "256,1,7168,256,8,2,A,d,a,w,q,1,0,32,k\n"
                       "12,1,7168,256,8,2,A,d,a,w,q,1,0,32,k\n";
  auto l = TunedTable::parse(legacy, "legacy.csv");
  ASSERT_TRUE(!!l) << llvm::toString(l.takeError());
  EXPECT_EQ(l->rows()[0]->key.gfx, "gfx950");
  ASSERT_EQ(l->warnings().size(), 1u);
  EXPECT_EQ(l->warnings()[0],
            "legacy.csv:3: no gfx, and cu_num 12 names no known chip; this row never matches a "
            "lookup");
}

TEST(TunedTable, WriteKeepsEveryColumnAndQuotesPerRfc4180) {
  // An untuned table with gfx and cu_num, an extra column, and values that
  // need quoting: ',', '"', CR and LF.
  std::string csv = "gfx,cu_num,token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,"
                    "q_dtype_w,q_type,use_g1u1,doweight_stage1,note\r\n"
                    "gfx950,256,1,7168,256,8,2,\"A,B\",d,a,w,q,1,0,\"say \"\"hi\"\"\"\r\n"
                    "gfx950,256,2,7168,256,8,2,A,d,a,w,q,1,0,\"two\r\nlines\"\r\n";
  auto t = TunedTable::parse(csv, "u.csv");
  ASSERT_TRUE(!!t) << llvm::toString(t.takeError());
  ASSERT_EQ(t->rows().size(), 2u);
  EXPECT_EQ(t->rows()[0]->get("act_type"), "A,B");
  EXPECT_EQ(t->rows()[0]->get("note"), "say \"hi\"");
  EXPECT_EQ(t->rows()[1]->get("note"), "two\r\nlines");
  EXPECT_EQ(t->rows()[1]->line, 3u);
  ASSERT_EQ(t->warnings().size(), 1u);
  EXPECT_EQ(t->warnings()[0],
            "u.csv: an untuned table (no kernelName1): it names no kernels, so lookups never "
            "match it");
  std::string written = t->write();
  EXPECT_EQ(llvm::StringRef(written).split('\n').first,
            "gfx,cu_num,token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,"
            "q_dtype_w,q_type,use_g1u1,doweight_stage1,note");
  EXPECT_NE(written.find("\"two\r\nlines\""), std::string::npos);
  auto back = TunedTable::parse(written, "back.csv");
  ASSERT_TRUE(!!back) << llvm::toString(back.takeError());
  ASSERT_EQ(back->rows().size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back->rows()[i]->values.size(), t->rows()[i]->values.size());
    for (const auto &kv : t->rows()[i]->values)
      EXPECT_EQ(back->rows()[i]->get(kv.getKey()), kv.getValue()) << kv.getKey().str();
    EXPECT_EQ(back->rows()[i]->key.str(), t->rows()[i]->key.str());
  }
  EXPECT_EQ(back->write(), written);
  // An unterminated quote names where it opened.
  auto bad = TunedTable::parse(csv.substr(0, csv.size() - 9), "bad.csv");
  ASSERT_FALSE(!!bad);
  EXPECT_EQ(llvm::toString(bad.takeError()), "bad.csv:3:41: unterminated quoted field");
}

} // namespace
