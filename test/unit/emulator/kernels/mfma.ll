; One-instruction MFMA kernels (hand-written): every lane loads its A, B, C
; (and scale) registers from arrays indexed by lane, runs one MFMA, stores D.
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @mfma_16x16x32_bf16(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %l to i64
  %pa = getelementptr inbounds <8 x bfloat>, ptr addrspace(1) %a, i64 %i
  %pb = getelementptr inbounds <8 x bfloat>, ptr addrspace(1) %b, i64 %i
  %pc = getelementptr inbounds <4 x float>, ptr addrspace(1) %c, i64 %i
  %va = load <8 x bfloat>, ptr addrspace(1) %pa, align 16
  %vb = load <8 x bfloat>, ptr addrspace(1) %pb, align 16
  %vc = load <4 x float>, ptr addrspace(1) %pc, align 16
  %r = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.bf16(<8 x bfloat> %va, <8 x bfloat> %vb, <4 x float> %vc, i32 0, i32 0, i32 0)
  %pd = getelementptr inbounds <4 x float>, ptr addrspace(1) %d, i64 %i
  store <4 x float> %r, ptr addrspace(1) %pd, align 16
  ret void
}

define amdgpu_kernel void @mfma_32x32x16_bf16(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %l to i64
  %pa = getelementptr inbounds <8 x bfloat>, ptr addrspace(1) %a, i64 %i
  %pb = getelementptr inbounds <8 x bfloat>, ptr addrspace(1) %b, i64 %i
  %pc = getelementptr inbounds <16 x float>, ptr addrspace(1) %c, i64 %i
  %va = load <8 x bfloat>, ptr addrspace(1) %pa, align 16
  %vb = load <8 x bfloat>, ptr addrspace(1) %pb, align 16
  %vc = load <16 x float>, ptr addrspace(1) %pc, align 16
  %r = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x16.bf16(<8 x bfloat> %va, <8 x bfloat> %vb, <16 x float> %vc, i32 0, i32 0, i32 0)
  %pd = getelementptr inbounds <16 x float>, ptr addrspace(1) %d, i64 %i
  store <16 x float> %r, ptr addrspace(1) %pd, align 16
  ret void
}

define amdgpu_kernel void @scale16_fp8_fp8(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %sap, ptr addrspace(1) %sbp, ptr addrspace(1) %d) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %l to i64
  %pa = getelementptr inbounds <8 x i32>, ptr addrspace(1) %a, i64 %i
  %pb = getelementptr inbounds <8 x i32>, ptr addrspace(1) %b, i64 %i
  %pc = getelementptr inbounds <4 x float>, ptr addrspace(1) %c, i64 %i
  %psa = getelementptr inbounds i32, ptr addrspace(1) %sap, i64 %i
  %psb = getelementptr inbounds i32, ptr addrspace(1) %sbp, i64 %i
  %va = load <8 x i32>, ptr addrspace(1) %pa, align 16
  %vb = load <8 x i32>, ptr addrspace(1) %pb, align 16
  %vc = load <4 x float>, ptr addrspace(1) %pc, align 16
  %sa = load i32, ptr addrspace(1) %psa, align 4
  %sb = load i32, ptr addrspace(1) %psb, align 4
  %r = call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v8i32.v8i32(<8 x i32> %va, <8 x i32> %vb, <4 x float> %vc, i32 0, i32 0, i32 1, i32 %sa, i32 2, i32 %sb)
  %pd = getelementptr inbounds <4 x float>, ptr addrspace(1) %d, i64 %i
  store <4 x float> %r, ptr addrspace(1) %pd, align 16
  ret void
}

define amdgpu_kernel void @scale16_fp4_fp4(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %sap, ptr addrspace(1) %sbp, ptr addrspace(1) %d) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %l to i64
  %pa = getelementptr inbounds <4 x i32>, ptr addrspace(1) %a, i64 %i
  %pb = getelementptr inbounds <4 x i32>, ptr addrspace(1) %b, i64 %i
  %pc = getelementptr inbounds <4 x float>, ptr addrspace(1) %c, i64 %i
  %psa = getelementptr inbounds i32, ptr addrspace(1) %sap, i64 %i
  %psb = getelementptr inbounds i32, ptr addrspace(1) %sbp, i64 %i
  %va = load <4 x i32>, ptr addrspace(1) %pa, align 16
  %vb = load <4 x i32>, ptr addrspace(1) %pb, align 16
  %vc = load <4 x float>, ptr addrspace(1) %pc, align 16
  %sa = load i32, ptr addrspace(1) %psa, align 4
  %sb = load i32, ptr addrspace(1) %psb, align 4
  %r = call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v4i32.v4i32(<4 x i32> %va, <4 x i32> %vb, <4 x float> %vc, i32 4, i32 4, i32 0, i32 %sa, i32 3, i32 %sb)
  %pd = getelementptr inbounds <4 x float>, ptr addrspace(1) %d, i64 %i
  store <4 x float> %r, ptr addrspace(1) %pd, align 16
  ret void
}

define amdgpu_kernel void @scale16_fp4_bf8(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %sap, ptr addrspace(1) %sbp, ptr addrspace(1) %d) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %l to i64
  %pa = getelementptr inbounds <4 x i32>, ptr addrspace(1) %a, i64 %i
  %pb = getelementptr inbounds <8 x i32>, ptr addrspace(1) %b, i64 %i
  %pc = getelementptr inbounds <4 x float>, ptr addrspace(1) %c, i64 %i
  %psa = getelementptr inbounds i32, ptr addrspace(1) %sap, i64 %i
  %psb = getelementptr inbounds i32, ptr addrspace(1) %sbp, i64 %i
  %va = load <4 x i32>, ptr addrspace(1) %pa, align 16
  %vb = load <8 x i32>, ptr addrspace(1) %pb, align 16
  %vc = load <4 x float>, ptr addrspace(1) %pc, align 16
  %sa = load i32, ptr addrspace(1) %psa, align 4
  %sb = load i32, ptr addrspace(1) %psb, align 4
  %r = call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v4i32.v8i32(<4 x i32> %va, <8 x i32> %vb, <4 x float> %vc, i32 4, i32 1, i32 3, i32 %sa, i32 1, i32 %sb)
  %pd = getelementptr inbounds <4 x float>, ptr addrspace(1) %d, i64 %i
  store <4 x float> %r, ptr addrspace(1) %pd, align 16
  ret void
}

define amdgpu_kernel void @scale16_fp8_lit0(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %sap, ptr addrspace(1) %sbp, ptr addrspace(1) %d) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %l to i64
  %pa = getelementptr inbounds <8 x i32>, ptr addrspace(1) %a, i64 %i
  %pb = getelementptr inbounds <8 x i32>, ptr addrspace(1) %b, i64 %i
  %pc = getelementptr inbounds <4 x float>, ptr addrspace(1) %c, i64 %i
  %psa = getelementptr inbounds i32, ptr addrspace(1) %sap, i64 %i
  %psb = getelementptr inbounds i32, ptr addrspace(1) %sbp, i64 %i
  %va = load <8 x i32>, ptr addrspace(1) %pa, align 16
  %vb = load <8 x i32>, ptr addrspace(1) %pb, align 16
  %vc = load <4 x float>, ptr addrspace(1) %pc, align 16
  %sa = load i32, ptr addrspace(1) %psa, align 4
  %sb = load i32, ptr addrspace(1) %psb, align 4
  %r = call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v8i32.v8i32(<8 x i32> %va, <8 x i32> %vb, <4 x float> %vc, i32 0, i32 0, i32 2, i32 0, i32 1, i32 0)
  %pd = getelementptr inbounds <4 x float>, ptr addrspace(1) %d, i64 %i
  store <4 x float> %r, ptr addrspace(1) %pd, align 16
  ret void
}

define amdgpu_kernel void @scale32_fp8_fp8(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %sap, ptr addrspace(1) %sbp, ptr addrspace(1) %d) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %l to i64
  %pa = getelementptr inbounds <8 x i32>, ptr addrspace(1) %a, i64 %i
  %pb = getelementptr inbounds <8 x i32>, ptr addrspace(1) %b, i64 %i
  %pc = getelementptr inbounds <16 x float>, ptr addrspace(1) %c, i64 %i
  %psa = getelementptr inbounds i32, ptr addrspace(1) %sap, i64 %i
  %psb = getelementptr inbounds i32, ptr addrspace(1) %sbp, i64 %i
  %va = load <8 x i32>, ptr addrspace(1) %pa, align 16
  %vb = load <8 x i32>, ptr addrspace(1) %pb, align 16
  %vc = load <16 x float>, ptr addrspace(1) %pc, align 16
  %sa = load i32, ptr addrspace(1) %psa, align 4
  %sb = load i32, ptr addrspace(1) %psb, align 4
  %r = call <16 x float> @llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v8i32.v8i32(<8 x i32> %va, <8 x i32> %vb, <16 x float> %vc, i32 0, i32 0, i32 3, i32 %sa, i32 0, i32 %sb)
  %pd = getelementptr inbounds <16 x float>, ptr addrspace(1) %d, i64 %i
  store <16 x float> %r, ptr addrspace(1) %pd, align 16
  ret void
}

define amdgpu_kernel void @scale32_fp4_fp4(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %sap, ptr addrspace(1) %sbp, ptr addrspace(1) %d) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %l to i64
  %pa = getelementptr inbounds <4 x i32>, ptr addrspace(1) %a, i64 %i
  %pb = getelementptr inbounds <4 x i32>, ptr addrspace(1) %b, i64 %i
  %pc = getelementptr inbounds <16 x float>, ptr addrspace(1) %c, i64 %i
  %psa = getelementptr inbounds i32, ptr addrspace(1) %sap, i64 %i
  %psb = getelementptr inbounds i32, ptr addrspace(1) %sbp, i64 %i
  %va = load <4 x i32>, ptr addrspace(1) %pa, align 16
  %vb = load <4 x i32>, ptr addrspace(1) %pb, align 16
  %vc = load <16 x float>, ptr addrspace(1) %pc, align 16
  %sa = load i32, ptr addrspace(1) %psa, align 4
  %sb = load i32, ptr addrspace(1) %psb, align 4
  %r = call <16 x float> @llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v4i32.v4i32(<4 x i32> %va, <4 x i32> %vb, <16 x float> %vc, i32 4, i32 4, i32 1, i32 %sa, i32 2, i32 %sb)
  %pd = getelementptr inbounds <16 x float>, ptr addrspace(1) %d, i64 %i
  store <16 x float> %r, ptr addrspace(1) %pd, align 16
  ret void
}

define amdgpu_kernel void @scale32_bf8_fp4(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %sap, ptr addrspace(1) %sbp, ptr addrspace(1) %d) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %l to i64
  %pa = getelementptr inbounds <8 x i32>, ptr addrspace(1) %a, i64 %i
  %pb = getelementptr inbounds <4 x i32>, ptr addrspace(1) %b, i64 %i
  %pc = getelementptr inbounds <16 x float>, ptr addrspace(1) %c, i64 %i
  %psa = getelementptr inbounds i32, ptr addrspace(1) %sap, i64 %i
  %psb = getelementptr inbounds i32, ptr addrspace(1) %sbp, i64 %i
  %va = load <8 x i32>, ptr addrspace(1) %pa, align 16
  %vb = load <4 x i32>, ptr addrspace(1) %pb, align 16
  %vc = load <16 x float>, ptr addrspace(1) %pc, align 16
  %sa = load i32, ptr addrspace(1) %psa, align 4
  %sb = load i32, ptr addrspace(1) %psb, align 4
  %r = call <16 x float> @llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v8i32.v4i32(<8 x i32> %va, <4 x i32> %vb, <16 x float> %vc, i32 1, i32 4, i32 2, i32 %sa, i32 3, i32 %sb)
  %pd = getelementptr inbounds <16 x float>, ptr addrspace(1) %d, i64 %i
  store <16 x float> %r, ptr addrspace(1) %pd, align 16
  ret void
}

define amdgpu_kernel void @mfma_16x16x32_f16(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %l to i64
  %pa = getelementptr inbounds <8 x half>, ptr addrspace(1) %a, i64 %i
  %pb = getelementptr inbounds <8 x half>, ptr addrspace(1) %b, i64 %i
  %pc = getelementptr inbounds <4 x float>, ptr addrspace(1) %c, i64 %i
  %va = load <8 x half>, ptr addrspace(1) %pa, align 8
  %vb = load <8 x half>, ptr addrspace(1) %pb, align 8
  %vc = load <4 x float>, ptr addrspace(1) %pc, align 16
  %r = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.f16(<8 x half> %va, <8 x half> %vb, <4 x float> %vc, i32 0, i32 0, i32 0)
  %pd = getelementptr inbounds <4 x float>, ptr addrspace(1) %d, i64 %i
  store <4 x float> %r, ptr addrspace(1) %pd, align 16
  ret void
}

define amdgpu_kernel void @mfma_32x32x16_f16(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %l to i64
  %pa = getelementptr inbounds <8 x half>, ptr addrspace(1) %a, i64 %i
  %pb = getelementptr inbounds <8 x half>, ptr addrspace(1) %b, i64 %i
  %pc = getelementptr inbounds <16 x float>, ptr addrspace(1) %c, i64 %i
  %va = load <8 x half>, ptr addrspace(1) %pa, align 8
  %vb = load <8 x half>, ptr addrspace(1) %pb, align 8
  %vc = load <16 x float>, ptr addrspace(1) %pc, align 16
  %r = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x16.f16(<8 x half> %va, <8 x half> %vb, <16 x float> %vc, i32 0, i32 0, i32 0)
  %pd = getelementptr inbounds <16 x float>, ptr addrspace(1) %d, i64 %i
  store <16 x float> %r, ptr addrspace(1) %pd, align 16
  ret void
}

define amdgpu_kernel void @mfma_16x16x16_bf16_1k(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %l to i64
  %pa = getelementptr inbounds <4 x i16>, ptr addrspace(1) %a, i64 %i
  %pb = getelementptr inbounds <4 x i16>, ptr addrspace(1) %b, i64 %i
  %pc = getelementptr inbounds <4 x float>, ptr addrspace(1) %c, i64 %i
  %va = load <4 x i16>, ptr addrspace(1) %pa, align 8
  %vb = load <4 x i16>, ptr addrspace(1) %pb, align 8
  %vc = load <4 x float>, ptr addrspace(1) %pc, align 16
  %r = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16bf16.1k(<4 x i16> %va, <4 x i16> %vb, <4 x float> %vc, i32 0, i32 0, i32 0)
  %pd = getelementptr inbounds <4 x float>, ptr addrspace(1) %d, i64 %i
  store <4 x float> %r, ptr addrspace(1) %pd, align 16
  ret void
}

define amdgpu_kernel void @mfma_32x32x8_bf16_1k(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %l to i64
  %pa = getelementptr inbounds <4 x i16>, ptr addrspace(1) %a, i64 %i
  %pb = getelementptr inbounds <4 x i16>, ptr addrspace(1) %b, i64 %i
  %pc = getelementptr inbounds <16 x float>, ptr addrspace(1) %c, i64 %i
  %va = load <4 x i16>, ptr addrspace(1) %pa, align 8
  %vb = load <4 x i16>, ptr addrspace(1) %pb, align 8
  %vc = load <16 x float>, ptr addrspace(1) %pc, align 16
  %r = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x8bf16.1k(<4 x i16> %va, <4 x i16> %vb, <16 x float> %vc, i32 0, i32 0, i32 0)
  %pd = getelementptr inbounds <16 x float>, ptr addrspace(1) %d, i64 %i
  store <16 x float> %r, ptr addrspace(1) %pd, align 16
  ret void
}

define amdgpu_kernel void @mfma_16x16x16_f16(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %l to i64
  %pa = getelementptr inbounds <4 x half>, ptr addrspace(1) %a, i64 %i
  %pb = getelementptr inbounds <4 x half>, ptr addrspace(1) %b, i64 %i
  %pc = getelementptr inbounds <4 x float>, ptr addrspace(1) %c, i64 %i
  %va = load <4 x half>, ptr addrspace(1) %pa, align 8
  %vb = load <4 x half>, ptr addrspace(1) %pb, align 8
  %vc = load <4 x float>, ptr addrspace(1) %pc, align 16
  %r = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half> %va, <4 x half> %vb, <4 x float> %vc, i32 0, i32 0, i32 0)
  %pd = getelementptr inbounds <4 x float>, ptr addrspace(1) %d, i64 %i
  store <4 x float> %r, ptr addrspace(1) %pd, align 16
  ret void
}

define amdgpu_kernel void @mfma_32x32x8_f16(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %l to i64
  %pa = getelementptr inbounds <4 x half>, ptr addrspace(1) %a, i64 %i
  %pb = getelementptr inbounds <4 x half>, ptr addrspace(1) %b, i64 %i
  %pc = getelementptr inbounds <16 x float>, ptr addrspace(1) %c, i64 %i
  %va = load <4 x half>, ptr addrspace(1) %pa, align 8
  %vb = load <4 x half>, ptr addrspace(1) %pb, align 8
  %vc = load <16 x float>, ptr addrspace(1) %pc, align 16
  %r = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x8f16(<4 x half> %va, <4 x half> %vb, <16 x float> %vc, i32 0, i32 0, i32 0)
  %pd = getelementptr inbounds <16 x float>, ptr addrspace(1) %d, i64 %i
  store <16 x float> %r, ptr addrspace(1) %pd, align 16
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
