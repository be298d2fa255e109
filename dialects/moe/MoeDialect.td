//===- MoeDialect.td - The moe dialect ---------------------*- tablegen -*-===//
#ifndef MOEGEN_DIALECTS_MOE_MOEDIALECT_TD
#define MOEGEN_DIALECTS_MOE_MOEDIALECT_TD

include "mlir/IR/OpBase.td"

def Moe_Dialect : Dialect {
  let name = "moe";
  let cppNamespace = "::moegen::moe";
  let summary = "Mixture-of-Experts layers and their kernel families";
  let description = [{
    The `moe` dialect describes one MoE layer at the level a kernel engineer
    thinks about it: the problem (dimensions, experts, top-k, gate/up layout),
    the number formats (bf16, MXFP8 e4m3 and MXFP4 e2m1 with e8m0 block scales
    of 32 along K), the activation as an expression over gate and up, and a
    schedule per stage. Kernel-family ops inside a `moe.layer` are expanded by
    the kernel templates into `gpu.module`s.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
    void registerTypes();
  }];
}

class Moe_Op<string mnemonic, list<Trait> traits = []>
    : Op<Moe_Dialect, mnemonic, traits>;

#endif // MOEGEN_DIALECTS_MOE_MOEDIALECT_TD
