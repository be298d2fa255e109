// RUN: moegen fmt %inputs/small.moe --emit mlir | moegen-opt --moegen-frontend | moegen-opt --moegen-lower | FileCheck %s
// RUN: moegen fmt %inputs/small.moe --emit mlir | moegen-opt --moegen-pipeline | FileCheck %s

// The target lowering leaves only the LLVM and ROCDL dialects: LDS buffers
// become addrspace(3) globals, kernel arguments bare pointers, the block size
// the flat/required work-group size attributes.

// CHECK: gpu.module @moe_sort_count_e8_k2
// CHECK: llvm.mlir.global internal @__wg_moe_sort_count_e8_k2_0() {addr_space = 3 : i32} : !llvm.array<9 x i32>
// CHECK: llvm.func @moe_sort_count_e8_k2(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32)
// CHECK: gpu.module @moe_sort_scan_e8
// CHECK: llvm.func @moe_sort_scan_e8(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32)
// CHECK-SAME: rocdl.flat_work_group_size = "64,64", rocdl.kernel, rocdl.reqd_work_group_size = array<i32: 64, 1, 1>
// CHECK: gpu.module @moe_sort_e8_k2_bm32
// CHECK-DAG: llvm.mlir.global internal @__wg_moe_sort_e8_k2_bm32_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<8 x i32>
// CHECK-DAG: llvm.mlir.global internal @__wg_moe_sort_e8_k2_bm32_1() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<72 x i32>
// CHECK-DAG: llvm.mlir.global internal @__wg_moe_sort_e8_k2_bm32_2() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<72 x i32>
// CHECK-DAG: llvm.mlir.global internal @__wg_moe_sort_e8_k2_bm32_3() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<8 x i32>
// CHECK: llvm.func @moe_sort_e8_k2_bm32(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32)
// CHECK-SAME: rocdl.flat_work_group_size = "512,512", rocdl.kernel, rocdl.reqd_work_group_size = array<i32: 512, 1, 1>
// CHECK: rocdl.workitem.id.x range <i32, 0, 512> : i32
// CHECK: rocdl.barrier
// CHECK: rocdl.barrier
// CHECK: rocdl.ballot
// CHECK-NOT: scf.
// CHECK-NOT: memref.
// CHECK-NOT: gpu.barrier
