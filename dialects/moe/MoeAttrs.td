//===- MoeAttrs.td - Attributes and types of the moe dialect -*- tablegen -*-===//
#ifndef MOEGEN_DIALECTS_MOE_MOEATTRS_TD
#define MOEGEN_DIALECTS_MOE_MOEATTRS_TD

include "dialects/moe/MoeDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Moe_GateUpLayout : I32EnumAttr<"GateUpLayoutKind", "gate/up row layout of w1", [
    I32EnumAttrCase<"separated", 0>, I32EnumAttrCase<"interleaved", 1>]> {
  let cppNamespace = "::moegen::moe";
  let genSpecializedAttr = 0;
}
def Moe_FusedQuant : I32EnumAttr<"FusedQuantKind", "quantization fused into stage 1", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"fp4", 1>, I32EnumAttrCase<"fp8", 2>]> {
  let cppNamespace = "::moegen::moe";
  let genSpecializedAttr = 0;
}
def Moe_ReduceMode : I32EnumAttr<"ReduceModeKind", "stage-2 top-k reduction", [
    I32EnumAttrCase<"atomic", 0>, I32EnumAttrCase<"reduce", 1>]> {
  let cppNamespace = "::moegen::moe";
  let genSpecializedAttr = 0;
}
def Moe_KBatchMode : I32EnumAttr<"KBatchModeKind", "combination of split-K partials", [
    I32EnumAttrCase<"atomic", 0>, I32EnumAttrCase<"deterministic", 1>]> {
  let cppNamespace = "::moegen::moe";
  let genSpecializedAttr = 0;
}

def Moe_WeightDecode : I32EnumAttr<"WeightDecodeKind", "sm_90a MXFP4 weight decoding", [
    I32EnumAttrCase<"mixed", 0>, I32EnumAttrCase<"arithmetic", 1>]> {
  let cppNamespace = "::moegen::moe";
  let genSpecializedAttr = 0;
}
def Moe_Stage2Wait : I32EnumAttr<"Stage2WaitKind", "what stage 2 waits for of stage 1", [
    I32EnumAttrCase<"rows", 0>, I32EnumAttrCase<"grid", 1>]> {
  let cppNamespace = "::moegen::moe";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

class Moe_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Moe_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Moe_MXType : Moe_Type<"MX", "mx"> {
  let summary = "an OCP MX block-scaled element format";
  let description = [{
    Elements of `elementType` (f4E2M1FN or f8E4M3FN) sharing one `scaleType`
    (f8E8M0FNU) scale per `block` consecutive elements along K:
    `!moe.mx<f4E2M1FN>` is MXFP4, `!moe.mx<f8E4M3FN>` MXFP8. The scale and
    block default to e8m0 and 32, the only values gfx950 hardware takes.
  }];
  let parameters = (ins "::mlir::Type":$elementType,
                        DefaultValuedParameter<"::mlir::Type",
                            "::mlir::Float8E8M0FNUType::get($_ctxt)">:$scaleType,
                        DefaultValuedParameter<"unsigned", "32">:$block);
  let assemblyFormat = "`<` $elementType (`,` `scale` `=` $scaleType^)? (`,` `block` `=` $block^)? `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

/// An enum parameter that may be left out (then `default`) and is printed
/// only where it differs from it.
class Moe_DefaultedEnumParameter<EnumAttrInfo info, string default>
    : EnumParameter<info> {
  let defaultValue = default;
}

class Moe_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Moe_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Moe_ProblemAttr : Moe_Attr<"Problem", "problem"> {
  let summary = "the shape of a MoE layer";
  let parameters = (ins "int64_t":$model_dim, "int64_t":$inter_dim, "int64_t":$experts,
                        "int64_t":$topk,
                        EnumParameter<Moe_GateUpLayout>:$gate_up,
                        "bool":$doweight_stage1);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Moe_FormatsAttr : Moe_Attr<"Formats", "formats"> {
  let summary = "number formats of the activations, weights and output";
  let parameters = (ins "::mlir::Type":$activation, "::mlir::Type":$weight,
                        "::mlir::Type":$output);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Moe_ActivationAttr : Moe_Attr<"Activation", "activation"> {
  let summary = "the activation as an expression over gate g and up u";
  let description = [{
    Holds the activation in the .moe syntax, e.g.
    `#moe.activation<"situv2(beta = 4.0, linear_beta = 25.0)">` or
    `#moe.activation<"act(g, u; b = 2.0) = g * sigmoid(b * g) * u">`.
    The text is parsed (and rejected if invalid) when the attribute is built,
    and kept in canonical form; `getExpr()` gives the expression tree shared by
    the kernel epilogue and the reference.
  }];
  let parameters = (ins StringRefParameter<"activation in .moe syntax">:$text);
  let assemblyFormat = "`<` $text `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The parsed expression (the text was verified at construction).
    ::moegen::ActivationExpr getExpr() const;
  }];
}

def Moe_ScheduleAttr : Moe_Attr<"Schedule", "schedule"> {
  let summary = "the schedule of one stage";
  let parameters = (ins "int64_t":$tile_m, "int64_t":$tile_n, "int64_t":$tile_k,
                        "int64_t":$k_batch, "int64_t":$k_wave, "int64_t":$waves_per_eu,
                        EnumParameter<Moe_KBatchMode>:$k_batch_mode,
                        EnumParameter<Moe_FusedQuant>:$fused_quant,
                        EnumParameter<Moe_ReduceMode>:$reduce,
                        Moe_DefaultedEnumParameter<Moe_WeightDecode,
                            "::moegen::moe::WeightDecodeKind::mixed">:$weight_decode,
                        DefaultValuedParameter<"int64_t", "0">:$prefetch,
                        DefaultValuedParameter<"int64_t", "1">:$xcd_swizzle,
                        Moe_DefaultedEnumParameter<Moe_Stage2Wait,
                            "::moegen::moe::Stage2WaitKind::rows">:$wait);
  // weight_decode is printed only where it is not `mixed` and prefetch where
  // it is not 0 (sm_90a only), xcd_swizzle only where it is not 1 (gfx950
  // only), wait only where it is not `rows` (stage 2 on sm_90a).
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Moe_TargetAttr : Moe_Attr<"Target", "target"> {
  let summary = "the target a module is compiled for";
  let description = [{
    Attached to the module as `moe.target`; every pass that depends on the
    target reads it from here (no global state). `abi` is the AMDHSA code
    object version (5 or 6).
  }];
  let parameters = (ins StringRefParameter<"chip name">:$chip,
                        DefaultValuedParameter<"int64_t", "6">:$abi);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // MOEGEN_DIALECTS_MOE_MOEATTRS_TD
