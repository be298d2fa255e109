//===- PtxGridWaitTest.cpp - Which PTX entries the backend launches early -===//

#include "runtime/cuda/PtxGridWait.h"

#include <gtest/gtest.h>

using moegen::cuda::ptxEntriesThatWait;

namespace {

std::vector<std::string> sorted(const llvm::StringSet<> &set) {
  std::vector<std::string> out;
  for (const auto &e : set)
    out.push_back(e.getKey().str());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(PtxGridWait, OnlyEntriesWhoseBodyWaits) {
  const char *ptx = R"(.version 8.1
.target sm_90a
.address_size 64
// griddepcontrol.wait in a comment outside any body
.visible .entry waits(
  .param .u64 p0)
.maxntid 256, 1, 1
{
  .reg .b32 %r<2>;
  // begin inline asm
  griddepcontrol.wait;
  // end inline asm
  { .reg .pred p; setp.ne.b32 p, %r1, 0; }
  ret;
}
.visible .entry plain(
  .param .u64 p0)
{
  // griddepcontrol.wait; only in a comment
  /* griddepcontrol.wait; nor here */
  ret;
}
.visible .entry moe_stage2_$x(.param .u32 n)
{
  { griddepcontrol.wait; }
  ret;
}
.visible .entry waits_at_exit(
  .param .u64 p0)
{
  mov.u32 %r4, %nctaid.x;
  setp.gt.u32 %p1, %r4, 16;
  @%p1 bra $L__BB0_2;
  griddepcontrol.launch_dependents;
$L__BB0_2:
  st.global.v4.b32 [%rd14], {%r1, %r2, %r3, %r4};
$L__BB0_4:
  // begin inline asm
  griddepcontrol.wait;
  // end inline asm
  ret;
}
)";
  // Where the wait is does not matter (the input quantization waits last).
  EXPECT_EQ(sorted(ptxEntriesThatWait(ptx)),
            (std::vector<std::string>{"moe_stage2_$x", "waits", "waits_at_exit"}));
}

TEST(PtxGridWait, DeclarationsAndBrokenTextCountForNothing) {
  // A declaration's next body is not its own; an unterminated body, a longer
  // identifier and no entry at all give nothing.
  EXPECT_TRUE(ptxEntriesThatWait(".extern .entry declared(.param .u64 p);\n"
                                 ".func helper() { griddepcontrol.wait; }\n")
                  .empty());
  EXPECT_TRUE(
      ptxEntriesThatWait(".visible .entry open(.param .u64 p) { griddepcontrol.wait;").empty());
  EXPECT_TRUE(ptxEntriesThatWait(".visible .entry k() { griddepcontrol.waitx; }").empty());
  EXPECT_TRUE(ptxEntriesThatWait("griddepcontrol.wait;").empty());
  EXPECT_TRUE(ptxEntriesThatWait("").empty());
  EXPECT_TRUE(ptxEntriesThatWait(".entry").empty());
  EXPECT_TRUE(ptxEntriesThatWait(".entry k(").empty());
}

} // namespace
