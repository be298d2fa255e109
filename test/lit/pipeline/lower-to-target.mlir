// RUN: not moegen-opt %s --split-input-file --moe-lower-to-target 2>&1 | FileCheck %s
// The lowering takes its chip from the module's moe.target, never from an option.

// CHECK: lower-to-target.mlir:5:1: error: missing the moe.target attribute
module {
}

// -----

// CHECK: error: unsupported target chip 'gfx942'; moegen generates gfx950, sm_90a
module attributes {moe.target = #moe.target<chip = "gfx942">} {
}
