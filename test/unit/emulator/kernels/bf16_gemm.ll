; Generated from bf16_gemm.mlir with the pipeline in README.md.
source_filename = "LLVMDialectModule"
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

@__wg_bf16_gemm_0 = internal addrspace(3) global [512 x bfloat] undef

; Function Attrs: nofree norecurse nounwind
define amdgpu_kernel void @bf16_gemm(ptr readonly captures(none) %0, ptr readonly captures(none) %1, ptr writeonly captures(none) %2, i64 %3) local_unnamed_addr #0 !reqd_work_group_size !1 {
  %5 = addrspacecast ptr %1 to ptr addrspace(1)
  %6 = addrspacecast ptr %0 to ptr addrspace(1)
  %7 = addrspacecast ptr %2 to ptr addrspace(1)
  %8 = tail call range(i32 0, 64) i32 @llvm.amdgcn.workitem.id.x()
  %9 = zext nneg i32 %8 to i64
  %10 = and i64 %9, 15
  %11 = lshr i64 %9, 4
  %12 = lshr i64 %9, 1
  %13 = shl nuw nsw i64 %9, 3
  %14 = and i64 %13, 8
  %15 = tail call ptr addrspace(7) @llvm.amdgcn.make.buffer.rsrc.p7.p1(ptr addrspace(1) %5, i16 0, i64 131072, i32 159744)
  %16 = icmp sgt i64 %3, 0
  br i1 %16, label %.lr.ph, label %._crit_edge

.lr.ph:                                           ; preds = %4
  %17 = shl nuw nsw i64 %9, 2
  %18 = and i64 %17, 12
  %19 = shl nuw nsw i64 %11, 3
  %20 = lshr i64 %10, 2
  %21 = or disjoint i64 %19, %20
  %.idx3 = shl nuw nsw i64 %10, 13
  %22 = getelementptr i8, ptr addrspace(1) %6, i64 %.idx3
  %invariant.gep = getelementptr bfloat, ptr addrspace(1) %22, i64 %19
  %23 = shl nuw nsw i64 %21, 4
  %24 = or disjoint i64 %23, %18
  %25 = trunc nuw nsw i64 %24 to i32
  %26 = getelementptr bfloat, ptr addrspace(3) @__wg_bf16_gemm_0, i32 %25
  %27 = or i32 %25, 64
  %28 = getelementptr bfloat, ptr addrspace(3) @__wg_bf16_gemm_0, i32 %27
  br label %29

29:                                               ; preds = %.lr.ph, %29
  %30 = phi <4 x float> [ zeroinitializer, %.lr.ph ], [ %42, %29 ]
  %31 = phi i64 [ 0, %.lr.ph ], [ %43, %29 ]
  %32 = shl i64 %31, 5
  %gep = getelementptr bfloat, ptr addrspace(1) %invariant.gep, i64 %32
  %33 = load <8 x bfloat>, ptr addrspace(1) %gep, align 2
  %34 = or disjoint i64 %32, %12
  %35 = shl i64 %34, 4
  %36 = or disjoint i64 %35, %14
  %37 = trunc i64 %36 to i32
  %38 = getelementptr bfloat, ptr addrspace(7) %15, i32 %37
  tail call void @llvm.amdgcn.load.to.lds.p7(ptr addrspace(7) %38, ptr addrspace(3) @__wg_bf16_gemm_0, i32 16, i32 0, i32 0)
  tail call void @llvm.amdgcn.s.waitcnt(i32 3952)
  fence syncscope("workgroup") release, !mmra !2
  tail call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire, !mmra !2
  %39 = tail call <4 x bfloat> @llvm.amdgcn.ds.read.tr16.b64.v4bf16(ptr addrspace(3) %26)
  %40 = tail call <4 x bfloat> @llvm.amdgcn.ds.read.tr16.b64.v4bf16(ptr addrspace(3) %28)
  %41 = shufflevector <4 x bfloat> %39, <4 x bfloat> %40, <8 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7>
  %42 = tail call <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.bf16(<8 x bfloat> %33, <8 x bfloat> %41, <4 x float> %30, i32 0, i32 0, i32 0)
  fence syncscope("workgroup") release, !mmra !2
  tail call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire, !mmra !2
  %43 = add nuw nsw i64 %31, 1
  %exitcond.not = icmp eq i64 %43, %3
  br i1 %exitcond.not, label %._crit_edge, label %29

._crit_edge:                                      ; preds = %29, %4
  %.lcssa = phi <4 x float> [ zeroinitializer, %4 ], [ %42, %29 ]
  %44 = shl nuw nsw i64 %11, 6
  %45 = extractelement <4 x float> %.lcssa, i64 0
  %46 = extractelement <4 x float> %.lcssa, i64 1
  %47 = extractelement <4 x float> %.lcssa, i64 2
  %48 = extractelement <4 x float> %.lcssa, i64 3
  %.idx = shl nuw nsw i64 %11, 8
  %49 = getelementptr inbounds nuw i8, ptr addrspace(1) %7, i64 %.idx
  %50 = getelementptr inbounds nuw float, ptr addrspace(1) %49, i64 %10
  store float %45, ptr addrspace(1) %50, align 4
  %51 = getelementptr inbounds nuw i8, ptr addrspace(1) %50, i64 64
  store float %46, ptr addrspace(1) %51, align 4
  %52 = getelementptr inbounds nuw i8, ptr addrspace(1) %50, i64 128
  store float %47, ptr addrspace(1) %52, align 4
  %53 = or disjoint i64 %44, %9
  %54 = or i64 %53, 48
  %55 = getelementptr inbounds nuw float, ptr addrspace(1) %7, i64 %54
  store float %48, ptr addrspace(1) %55, align 4
  ret void
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef range(i32 0, 1024) i32 @llvm.amdgcn.workitem.id.x() #1

; Function Attrs: mustprogress nocallback nofree nounwind willreturn memory(argmem: readwrite)
declare void @llvm.amdgcn.load.to.lds.p7(ptr addrspace(7) readonly captures(none), ptr addrspace(3) writeonly captures(none), i32 immarg, i32 immarg, i32 immarg) #2

; Function Attrs: mustprogress nocallback nofree nounwind willreturn
declare void @llvm.amdgcn.s.waitcnt(i32 immarg) #3

; Function Attrs: convergent mustprogress nocallback nofree nounwind willreturn
declare void @llvm.amdgcn.s.barrier() #4

; Function Attrs: convergent mustprogress nocallback nofree nounwind willreturn memory(argmem: read)
declare <4 x bfloat> @llvm.amdgcn.ds.read.tr16.b64.v4bf16(ptr addrspace(3) captures(none)) #5

; Function Attrs: convergent mustprogress nocallback nocreateundeforpoison nofree nosync nounwind willreturn memory(none)
declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.bf16(<8 x bfloat>, <8 x bfloat>, <4 x float>, i32 immarg, i32 immarg, i32 immarg) #6

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare ptr addrspace(7) @llvm.amdgcn.make.buffer.rsrc.p7.p1(ptr addrspace(1) readnone, i16, i64, i32) #7

attributes #0 = { nofree norecurse nounwind "amdgpu-agpr-alloc"="0" "amdgpu-flat-work-group-size"="64,64" "amdgpu-no-cluster-id-x" "amdgpu-no-cluster-id-y" "amdgpu-no-cluster-id-z" "amdgpu-no-completion-action" "amdgpu-no-default-queue" "amdgpu-no-dispatch-id" "amdgpu-no-dispatch-ptr" "amdgpu-no-flat-scratch-init" "amdgpu-no-heap-ptr" "amdgpu-no-hostcall-ptr" "amdgpu-no-implicitarg-ptr" "amdgpu-no-lds-kernel-id" "amdgpu-no-multigrid-sync-arg" "amdgpu-no-queue-ptr" "amdgpu-no-workgroup-id-x" "amdgpu-no-workgroup-id-y" "amdgpu-no-workgroup-id-z" "amdgpu-no-workitem-id-x" "amdgpu-no-workitem-id-y" "amdgpu-no-workitem-id-z" "target-cpu"="gfx950" "uniform-work-group-size"="true" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) "target-cpu"="gfx950" }
attributes #2 = { mustprogress nocallback nofree nounwind willreturn memory(argmem: readwrite) "target-cpu"="gfx950" }
attributes #3 = { mustprogress nocallback nofree nounwind willreturn "target-cpu"="gfx950" }
attributes #4 = { convergent mustprogress nocallback nofree nounwind willreturn "target-cpu"="gfx950" }
attributes #5 = { convergent mustprogress nocallback nofree nounwind willreturn memory(argmem: read) "target-cpu"="gfx950" }
attributes #6 = { convergent mustprogress nocallback nocreateundeforpoison nofree nosync nounwind willreturn memory(none) "target-cpu"="gfx950" }
attributes #7 = { nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none) }

!llvm.module.flags = !{!0}

!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = !{i32 64, i32 1, i32 1}
!2 = !{!"amdgpu-synchronize-as", !"local"}
