//===- DslFuzzer.cpp - Fuzz the .moe parser, printer and overrides --------===//
//
// The input is .moe text and, separately, a --set assignment applied to a
// fixed spec. Whatever parses must print to text that parses back to the same
// spec (the printer's contract); errors are fine, crashes and aborts are not.
//
//===----------------------------------------------------------------------===//

#include "compiler/spec/DslParser.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>

using namespace moegen;

namespace {

const char *const kFixedSpec = R"(moe fuzz_base {
  model_dim = 3584
  inter_dim = 384
  experts = 32
  topk = 8
  gate_up = separated
  doweight = stage2
  activation_dtype = mxfp4
  weight_dtype = mxfp4
  output_dtype = bf16
  activation = situv2(beta = 4.0, linear_beta = 25.0)
  stage1 { tile = 32x32x256; k_wave = 2; waves_per_eu = 4; fused_quant = fp4 }
  stage2 { tile = 32x128x128; reduce = reduce }
}
)";

// Printing a parsed spec and parsing the text again gives the same spec.
void checkRoundTrip(const MoeSpec &spec, llvm::StringRef what) {
  std::string text = printMoeSpec(spec);
  auto again = parseMoeSpec(text, "<printed>");
  if (!again) {
    llvm::errs() << what
                 << ": the printed spec does not parse: " << llvm::toString(again.takeError())
                 << "\n--- printed ---\n"
                 << text;
    std::abort();
  }
  if (!sameSpec(spec, *again)) {
    llvm::errs() << what << ": the printed spec parses to a different spec\n--- printed ---\n"
                 << text << "--- printed again ---\n"
                 << printMoeSpec(*again);
    std::abort();
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  if (auto spec = parseMoeSpec(input, "<fuzz>"))
    checkRoundTrip(*spec, "parse");
  else
    llvm::consumeError(spec.takeError());

  static const MoeSpec fixed = [] {
    auto spec = parseMoeSpec(kFixedSpec, "<fixed>");
    if (!spec) {
      llvm::errs() << llvm::toString(spec.takeError()) << "\n";
      std::abort();
    }
    return *spec;
  }();
  MoeSpec overridden = fixed;
  if (llvm::Error err = applySpecOverride(overridden, input))
    llvm::consumeError(std::move(err));
  else
    checkRoundTrip(overridden, "override");
  return 0;
}
