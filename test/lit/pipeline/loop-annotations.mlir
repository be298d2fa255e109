// RUN: moegen fmt %inputs/small.moe --emit mlir | moegen-opt --moegen-pipeline | FileCheck %s

// The GEMM main loops are software-pipelined by the template, which asks LLVM
// not to unroll them (a short K loop fully unrolled hoists every step's loads
// and spills). moe-attach-loop-annotations turns the scf.for hint into the
// back edge's loop_annotation, which becomes !llvm.loop metadata; no plain
// llvm.loop_annotation attribute is left for translation to drop.

// CHECK: #[[UNROLL:.*]] = #llvm.loop_unroll<disable = true>
// CHECK: #[[HINT:.*]] = #llvm.loop_annotation<unroll = #[[UNROLL]]>
// CHECK-NOT: llvm.loop_annotation =
// CHECK: gpu.module @moe_stage1_
// CHECK-NOT: gpu.module
// CHECK: llvm.br ^bb{{[0-9]+}}({{.*}}) {loop_annotation = #[[HINT]]}
// CHECK: gpu.module @moe_stage2_
// CHECK-NOT: gpu.module
// CHECK: llvm.br ^bb{{[0-9]+}}({{.*}}) {loop_annotation = #[[HINT]]}
// CHECK-NOT: llvm.loop_annotation =
