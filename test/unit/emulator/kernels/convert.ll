; Scaled conversions (hand-written): each lane converts two f32 values with
; its own scale and widens the result back.
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @cvt_fp4(ptr addrspace(1) %in, ptr addrspace(1) %sc, ptr addrspace(1) %q, ptr addrspace(1) %back) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %l to i64
  %pin = getelementptr inbounds <2 x float>, ptr addrspace(1) %in, i64 %i
  %v = load <2 x float>, ptr addrspace(1) %pin, align 8
  %a = extractelement <2 x float> %v, i64 0
  %b = extractelement <2 x float> %v, i64 1
  %ps = getelementptr inbounds float, ptr addrspace(1) %sc, i64 %i
  %s = load float, ptr addrspace(1) %ps, align 4
  %r = call i32 @llvm.amdgcn.cvt.scalef32.pk.fp4.f32(i32 -1431655766, float %a, float %b, float %s, i32 2)
  %pq = getelementptr inbounds i32, ptr addrspace(1) %q, i64 %i
  store i32 %r, ptr addrspace(1) %pq, align 4
  %w = call <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.fp4(i32 %r, float %s, i32 2)
  %pb = getelementptr inbounds <2 x float>, ptr addrspace(1) %back, i64 %i
  store <2 x float> %w, ptr addrspace(1) %pb, align 8
  ret void
}

define amdgpu_kernel void @cvt_fp8(ptr addrspace(1) %in, ptr addrspace(1) %sc, ptr addrspace(1) %q, ptr addrspace(1) %back) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %l to i64
  %pin = getelementptr inbounds <2 x float>, ptr addrspace(1) %in, i64 %i
  %v = load <2 x float>, ptr addrspace(1) %pin, align 8
  %a = extractelement <2 x float> %v, i64 0
  %b = extractelement <2 x float> %v, i64 1
  %ps = getelementptr inbounds float, ptr addrspace(1) %sc, i64 %i
  %s = load float, ptr addrspace(1) %ps, align 4
  %r = call <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.fp8.f32(<2 x i16> <i16 4660, i16 22136>, float %a, float %b, float %s, i1 true)
  %ri = bitcast <2 x i16> %r to i32
  %pq = getelementptr inbounds i32, ptr addrspace(1) %q, i64 %i
  store i32 %ri, ptr addrspace(1) %pq, align 4
  %w = call <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.fp8(i32 %ri, float %s, i1 true)
  %pb = getelementptr inbounds <2 x float>, ptr addrspace(1) %back, i64 %i
  store <2 x float> %w, ptr addrspace(1) %pb, align 8
  ret void
}

define amdgpu_kernel void @cvt_bf8(ptr addrspace(1) %in, ptr addrspace(1) %sc, ptr addrspace(1) %q, ptr addrspace(1) %back) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %l to i64
  %pin = getelementptr inbounds <2 x float>, ptr addrspace(1) %in, i64 %i
  %v = load <2 x float>, ptr addrspace(1) %pin, align 8
  %a = extractelement <2 x float> %v, i64 0
  %b = extractelement <2 x float> %v, i64 1
  %ps = getelementptr inbounds float, ptr addrspace(1) %sc, i64 %i
  %s = load float, ptr addrspace(1) %ps, align 4
  %r = call <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.bf8.f32(<2 x i16> <i16 4660, i16 22136>, float %a, float %b, float %s, i1 false)
  %ri = bitcast <2 x i16> %r to i32
  %pq = getelementptr inbounds i32, ptr addrspace(1) %q, i64 %i
  store i32 %ri, ptr addrspace(1) %pq, align 4
  %w = call <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.bf8(i32 %ri, float %s, i1 false)
  %pb = getelementptr inbounds <2 x float>, ptr addrspace(1) %back, i64 %i
  store <2 x float> %w, ptr addrspace(1) %pb, align 8
  ret void
}

; Unscaled E4M3 pack (low word of the old value replaced) and unpack of byte 1.
define amdgpu_kernel void @cvt_fp8_unscaled(ptr addrspace(1) %in, ptr addrspace(1) %sc, ptr addrspace(1) %q, ptr addrspace(1) %back) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %l to i64
  %pin = getelementptr inbounds <2 x float>, ptr addrspace(1) %in, i64 %i
  %v = load <2 x float>, ptr addrspace(1) %pin, align 8
  %a = extractelement <2 x float> %v, i64 0
  %b = extractelement <2 x float> %v, i64 1
  %r = call i32 @llvm.amdgcn.cvt.pk.fp8.f32(float %a, float %b, i32 287454020, i1 false)
  %pq = getelementptr inbounds i32, ptr addrspace(1) %q, i64 %i
  store i32 %r, ptr addrspace(1) %pq, align 4
  %w = call float @llvm.amdgcn.cvt.f32.fp8(i32 %r, i32 1)
  %pb = getelementptr inbounds <2 x float>, ptr addrspace(1) %back, i64 %i
  store float %w, ptr addrspace(1) %pb, align 8
  ret void
}

declare i32 @llvm.amdgcn.cvt.pk.fp8.f32(float, float, i32, i1 immarg)
declare float @llvm.amdgcn.cvt.f32.fp8(i32, i32 immarg)
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.cvt.scalef32.pk.fp4.f32(i32, float, float, float, i32 immarg)
declare <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.fp4(i32, float, i32 immarg)
declare <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.fp8.f32(<2 x i16>, float, float, float, i1 immarg)
declare <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.bf8.f32(<2 x i16>, float, float, float, i1 immarg)
declare <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.fp8(i32, float, i1 immarg)
declare <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.bf8(i32, float, i1 immarg)
