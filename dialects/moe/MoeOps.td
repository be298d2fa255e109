//===- MoeOps.td - Operations of the moe dialect ------------*- tablegen -*-===//
#ifndef MOEGEN_DIALECTS_MOE_MOEOPS_TD
#define MOEGEN_DIALECTS_MOE_MOEOPS_TD

include "dialects/moe/MoeAttrs.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"

def Moe_LayerOp : Moe_Op<"layer", [Symbol, SymbolTable, NoTerminator, SingleBlock,
                                   IsolatedFromAbove]> {
  let summary = "one MoE layer and the kernel families that implement it";
  let description = [{
    ```mlir
    moe.layer @kimi problem = #moe.problem<...> formats = #moe.formats<...>
        activation = #moe.activation<"silu"> {
      moe.sort @sort block_m = 32
      moe.stage1 @stage1 schedule = #moe.schedule<...>
      moe.stage2 @stage2 schedule = #moe.schedule<...>
    }
    ```
    The problem, formats and activation are shared by the kernels inside.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Moe_ProblemAttr:$problem,
                       Moe_FormatsAttr:$formats, Moe_ActivationAttr:$activation);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `problem` `=` $problem `formats` `=` $formats `activation` `=` $activation
    attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::llvm::StringRef":$name, "ProblemAttr":$problem,
                                 "FormatsAttr":$formats, "ActivationAttr":$activation)>];
}

def Moe_SortOp : Moe_Op<"sort", [Symbol, HasParent<"LayerOp">]> {
  let summary = "the MoE sorting kernel";
  let description = [{
    Groups the (token, slot) pairs of the router's top-k by expert, padding
    every expert's segment to a multiple of `block_m` (aiter's format):
    sorted_token_ids `(slot << 24) | token` with sentinel `(topk << 24) | M`,
    sorted_weights, sorted_expert_ids (empty experts skipped) and
    num_valid_ids[2].
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I64Attr:$block_m);
  let assemblyFormat = "$sym_name `block_m` `=` $block_m attr-dict";
  let hasVerifier = 1;
}

class Moe_StageOp<string mnemonic> : Moe_Op<mnemonic, [Symbol, HasParent<"LayerOp">]> {
  let arguments = (ins SymbolNameAttr:$sym_name, Moe_ScheduleAttr:$schedule);
  let assemblyFormat = "$sym_name `schedule` `=` $schedule attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    LayerOp getLayer() { return ::llvm::cast<LayerOp>((*this)->getParentOp()); }
  }];
}

def Moe_Stage1Op : Moe_StageOp<"stage1"> {
  let summary = "stage 1: gate+up GEMM of the routed rows, activation, optional quantization";
}

def Moe_Stage2Op : Moe_StageOp<"stage2"> {
  let summary = "stage 2: down GEMM and the weighted sum over top-k";
}

#endif // MOEGEN_DIALECTS_MOE_MOEOPS_TD
