; Generated from mxfp4_loop.mlir with the pipeline in README.md.
source_filename = "LLVMDialectModule"
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

; Function Attrs: nofree norecurse nosync nounwind memory(argmem: readwrite)
define amdgpu_kernel void @mxfp4_loop(ptr readonly captures(none) %0, ptr readonly captures(none) %1, ptr readonly captures(none) %2, ptr readonly captures(none) %3, ptr writeonly captures(none) %4, ptr writeonly captures(none) %5, i64 %6) local_unnamed_addr #0 !reqd_work_group_size !1 {
  %8 = addrspacecast ptr %1 to ptr addrspace(1)
  %9 = addrspacecast ptr %0 to ptr addrspace(1)
  %10 = addrspacecast ptr %3 to ptr addrspace(1)
  %11 = addrspacecast ptr %2 to ptr addrspace(1)
  %12 = addrspacecast ptr %5 to ptr addrspace(1)
  %13 = addrspacecast ptr %4 to ptr addrspace(1)
  %14 = tail call range(i32 0, 64) i32 @llvm.amdgcn.workitem.id.x()
  %15 = zext nneg i32 %14 to i64
  %16 = shl nuw nsw i64 %15, 4
  %17 = shl nuw nsw i64 %15, 2
  %18 = icmp sgt i64 %6, 0
  br i1 %18, label %.lr.ph, label %._crit_edge

.lr.ph:                                           ; preds = %7
  %19 = tail call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %11, i16 0, i64 16384, i32 159744)
  %20 = tail call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %10, i16 0, i64 16384, i32 159744)
  br label %21

21:                                               ; preds = %.lr.ph, %21
  %22 = phi <4 x float> [ zeroinitializer, %.lr.ph ], [ %35, %21 ]
  %23 = phi i64 [ 0, %.lr.ph ], [ %36, %21 ]
  %24 = shl i64 %23, 10
  %25 = or disjoint i64 %24, %16
  %26 = getelementptr i8, ptr addrspace(1) %9, i64 %25
  %27 = load <4 x i32>, ptr addrspace(1) %26, align 1
  %28 = getelementptr i8, ptr addrspace(1) %8, i64 %25
  %29 = load <4 x i32>, ptr addrspace(1) %28, align 1
  %30 = shl i64 %23, 8
  %31 = or disjoint i64 %30, %17
  %32 = trunc i64 %31 to i32
  %33 = tail call i32 @llvm.amdgcn.raw.ptr.buffer.load.i32(ptr addrspace(8) %19, i32 %32, i32 0, i32 0)
  %34 = tail call i32 @llvm.amdgcn.raw.ptr.buffer.load.i32(ptr addrspace(8) %20, i32 %32, i32 0, i32 0)
  %35 = tail call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v4i32.v4i32(<4 x i32> %27, <4 x i32> %29, <4 x float> %22, i32 4, i32 4, i32 1, i32 %33, i32 2, i32 %34)
  %36 = add nuw nsw i64 %23, 1
  %exitcond.not = icmp eq i64 %36, %6
  br i1 %exitcond.not, label %._crit_edge, label %21

._crit_edge:                                      ; preds = %21, %7
  %.lcssa = phi <4 x float> [ zeroinitializer, %7 ], [ %35, %21 ]
  %37 = getelementptr float, ptr addrspace(1) %13, i64 %17
  store <4 x float> %.lcssa, ptr addrspace(1) %37, align 4
  %38 = extractelement <4 x float> %.lcssa, i64 0
  %39 = extractelement <4 x float> %.lcssa, i64 1
  %40 = tail call i32 @llvm.amdgcn.cvt.scalef32.pk.fp4.f32(i32 0, float %38, float %39, float 1.000000e+00, i32 0)
  %41 = extractelement <4 x float> %.lcssa, i64 2
  %42 = extractelement <4 x float> %.lcssa, i64 3
  %43 = tail call i32 @llvm.amdgcn.cvt.scalef32.pk.fp4.f32(i32 %40, float %41, float %42, float 1.000000e+00, i32 1)
  %44 = bitcast i32 %43 to <4 x i8>
  %45 = shufflevector <4 x i8> %44, <4 x i8> poison, <2 x i32> <i32 0, i32 1>
  %46 = shl nuw nsw i64 %15, 1
  %47 = getelementptr i8, ptr addrspace(1) %12, i64 %46
  store <2 x i8> %45, ptr addrspace(1) %47, align 1
  ret void
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef range(i32 0, 1024) i32 @llvm.amdgcn.workitem.id.x() #1

; Function Attrs: mustprogress nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare i32 @llvm.amdgcn.cvt.scalef32.pk.fp4.f32(i32, float, float, float, i32 immarg range(i32 0, 4)) #2

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(argmem: read)
declare i32 @llvm.amdgcn.raw.ptr.buffer.load.i32(ptr addrspace(8) readonly captures(none), i32, i32, i32 immarg) #3

; Function Attrs: convergent mustprogress nocallback nocreateundeforpoison nofree nosync nounwind willreturn memory(none)
declare <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v4i32.v4i32(<4 x i32>, <4 x i32>, <4 x float>, i32 immarg, i32 immarg, i32 immarg, i32, i32 immarg, i32) #4

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) readnone, i16, i64, i32) #5

attributes #0 = { nofree norecurse nosync nounwind memory(argmem: readwrite) "amdgpu-agpr-alloc"="0" "amdgpu-flat-work-group-size"="64,64" "amdgpu-no-cluster-id-x" "amdgpu-no-cluster-id-y" "amdgpu-no-cluster-id-z" "amdgpu-no-completion-action" "amdgpu-no-default-queue" "amdgpu-no-dispatch-id" "amdgpu-no-dispatch-ptr" "amdgpu-no-flat-scratch-init" "amdgpu-no-heap-ptr" "amdgpu-no-hostcall-ptr" "amdgpu-no-implicitarg-ptr" "amdgpu-no-lds-kernel-id" "amdgpu-no-multigrid-sync-arg" "amdgpu-no-queue-ptr" "amdgpu-no-workgroup-id-x" "amdgpu-no-workgroup-id-y" "amdgpu-no-workgroup-id-z" "amdgpu-no-workitem-id-x" "amdgpu-no-workitem-id-y" "amdgpu-no-workitem-id-z" "target-cpu"="gfx950" "uniform-work-group-size"="true" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) "target-cpu"="gfx950" }
attributes #2 = { mustprogress nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none) "target-cpu"="gfx950" }
attributes #3 = { mustprogress nocallback nofree nosync nounwind willreturn memory(argmem: read) "target-cpu"="gfx950" }
attributes #4 = { convergent mustprogress nocallback nocreateundeforpoison nofree nosync nounwind willreturn memory(none) "target-cpu"="gfx950" }
attributes #5 = { nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none) }

!llvm.module.flags = !{!0}

!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = !{i32 64, i32 1, i32 1}
