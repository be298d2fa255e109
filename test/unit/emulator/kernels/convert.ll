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

; Widening of every fp4 pair: lane l's word holds bytes 4l .. 4l+3, each
; widened with the lane's scale to bf16, f16 and f32 pairs (out: 8 bf16,
; 8 f16, 8 f32 per lane).
define amdgpu_kernel void @cvt_fp4_widen(ptr addrspace(1) %in, ptr addrspace(1) %sc, ptr addrspace(1) %bf, ptr addrspace(1) %hf, ptr addrspace(1) %fl) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %l to i64
  %pin = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %i
  %w = load i32, ptr addrspace(1) %pin, align 4
  %ps = getelementptr inbounds float, ptr addrspace(1) %sc, i64 %i
  %s = load float, ptr addrspace(1) %ps, align 4
  %o = mul i64 %i, 4
  %ob0 = add i64 %o, 0
  %b0 = call <2 x bfloat> @llvm.amdgcn.cvt.scalef32.pk.bf16.fp4(i32 %w, float %s, i32 0)
  %pb0 = getelementptr inbounds <2 x bfloat>, ptr addrspace(1) %bf, i64 %ob0
  store <2 x bfloat> %b0, ptr addrspace(1) %pb0, align 4
  %h0 = call <2 x half> @llvm.amdgcn.cvt.scalef32.pk.f16.fp4(i32 %w, float %s, i32 0)
  %ph0 = getelementptr inbounds <2 x half>, ptr addrspace(1) %hf, i64 %ob0
  store <2 x half> %h0, ptr addrspace(1) %ph0, align 4
  %f0 = call <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.fp4(i32 %w, float %s, i32 0)
  %pf0 = getelementptr inbounds <2 x float>, ptr addrspace(1) %fl, i64 %ob0
  store <2 x float> %f0, ptr addrspace(1) %pf0, align 8
  %ob1 = add i64 %o, 1
  %b1 = call <2 x bfloat> @llvm.amdgcn.cvt.scalef32.pk.bf16.fp4(i32 %w, float %s, i32 1)
  %pb1 = getelementptr inbounds <2 x bfloat>, ptr addrspace(1) %bf, i64 %ob1
  store <2 x bfloat> %b1, ptr addrspace(1) %pb1, align 4
  %h1 = call <2 x half> @llvm.amdgcn.cvt.scalef32.pk.f16.fp4(i32 %w, float %s, i32 1)
  %ph1 = getelementptr inbounds <2 x half>, ptr addrspace(1) %hf, i64 %ob1
  store <2 x half> %h1, ptr addrspace(1) %ph1, align 4
  %f1 = call <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.fp4(i32 %w, float %s, i32 1)
  %pf1 = getelementptr inbounds <2 x float>, ptr addrspace(1) %fl, i64 %ob1
  store <2 x float> %f1, ptr addrspace(1) %pf1, align 8
  %ob2 = add i64 %o, 2
  %b2 = call <2 x bfloat> @llvm.amdgcn.cvt.scalef32.pk.bf16.fp4(i32 %w, float %s, i32 2)
  %pb2 = getelementptr inbounds <2 x bfloat>, ptr addrspace(1) %bf, i64 %ob2
  store <2 x bfloat> %b2, ptr addrspace(1) %pb2, align 4
  %h2 = call <2 x half> @llvm.amdgcn.cvt.scalef32.pk.f16.fp4(i32 %w, float %s, i32 2)
  %ph2 = getelementptr inbounds <2 x half>, ptr addrspace(1) %hf, i64 %ob2
  store <2 x half> %h2, ptr addrspace(1) %ph2, align 4
  %f2 = call <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.fp4(i32 %w, float %s, i32 2)
  %pf2 = getelementptr inbounds <2 x float>, ptr addrspace(1) %fl, i64 %ob2
  store <2 x float> %f2, ptr addrspace(1) %pf2, align 8
  %ob3 = add i64 %o, 3
  %b3 = call <2 x bfloat> @llvm.amdgcn.cvt.scalef32.pk.bf16.fp4(i32 %w, float %s, i32 3)
  %pb3 = getelementptr inbounds <2 x bfloat>, ptr addrspace(1) %bf, i64 %ob3
  store <2 x bfloat> %b3, ptr addrspace(1) %pb3, align 4
  %h3 = call <2 x half> @llvm.amdgcn.cvt.scalef32.pk.f16.fp4(i32 %w, float %s, i32 3)
  %ph3 = getelementptr inbounds <2 x half>, ptr addrspace(1) %hf, i64 %ob3
  store <2 x half> %h3, ptr addrspace(1) %ph3, align 4
  %f3 = call <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.fp4(i32 %w, float %s, i32 3)
  %pf3 = getelementptr inbounds <2 x float>, ptr addrspace(1) %fl, i64 %ob3
  store <2 x float> %f3, ptr addrspace(1) %pf3, align 8
  ret void
}

declare float @llvm.amdgcn.cvt.f32.fp8(i32, i32 immarg)
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.cvt.scalef32.pk.fp4.f32(i32, float, float, float, i32 immarg)
declare <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.fp4(i32, float, i32 immarg)
declare <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.fp8.f32(<2 x i16>, float, float, float, i1 immarg)
declare <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.bf8.f32(<2 x i16>, float, float, float, i1 immarg)
declare <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.fp8(i32, float, i1 immarg)
declare <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.bf8(i32, float, i1 immarg)
declare <2 x bfloat> @llvm.amdgcn.cvt.scalef32.pk.bf16.fp4(i32, float, i32 immarg)
declare <2 x half> @llvm.amdgcn.cvt.scalef32.pk.f16.fp4(i32, float, i32 immarg)
