; Generated from scalar_loop.mlir with the pipeline in README.md.
source_filename = "LLVMDialectModule"
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @scalar_loop(ptr writeonly captures(none) %0, i64 %1) local_unnamed_addr #0 {
  %3 = addrspacecast ptr %0 to ptr addrspace(1)
  %4 = tail call i32 @llvm.amdgcn.workitem.id.x()
  %5 = zext nneg i32 %4 to i64
  %6 = tail call i32 @llvm.amdgcn.workgroup.id.x()
  %7 = sext i32 %6 to i64
  %8 = tail call i64 @__ockl_get_local_size(i32 0)
  %9 = mul i64 %8, %7
  %10 = add i64 %9, %5
  %11 = icmp sgt i64 %1, 0
  br i1 %11, label %.lr.ph, label %._crit_edge

.lr.ph:                                           ; preds = %2, %.lr.ph
  %12 = phi float [ %18, %.lr.ph ], [ 0.000000e+00, %2 ]
  %13 = phi i64 [ %19, %.lr.ph ], [ 0, %2 ]
  %14 = xor i64 %13, %10
  %15 = trunc i64 %14 to i32
  %16 = sitofp i32 %15 to float
  %17 = tail call float @llvm.fma.f32(float %16, float 5.000000e-01, float 1.000000e+00)
  %18 = fadd float %12, %17
  %19 = add nuw nsw i64 %13, 1
  %exitcond.not = icmp eq i64 %19, %1
  br i1 %exitcond.not, label %._crit_edge, label %.lr.ph

._crit_edge:                                      ; preds = %.lr.ph, %2
  %.lcssa = phi float [ 0.000000e+00, %2 ], [ %18, %.lr.ph ]
  %20 = getelementptr inbounds float, ptr addrspace(1) %3, i64 %10
  store float %.lcssa, ptr addrspace(1) %20, align 4
  ret void
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef range(i32 0, 1024) i32 @llvm.amdgcn.workitem.id.x() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.amdgcn.workgroup.id.x() #1

declare i64 @__ockl_get_local_size(i32) local_unnamed_addr #2

; Function Attrs: mustprogress nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.fma.f32(float, float, float) #3

attributes #0 = { "amdgpu-flat-work-group-size"="1,256" "target-cpu"="gfx950" "uniform-work-group-size"="true" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) "target-cpu"="gfx950" }
attributes #2 = { "target-cpu"="gfx950" "uniform-work-group-size"="false" }
attributes #3 = { mustprogress nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none) "target-cpu"="gfx950" }

!llvm.module.flags = !{!0}

!0 = !{i32 2, !"Debug Info Version", i32 3}
