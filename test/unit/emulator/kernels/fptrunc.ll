; fptrunc of f32 to bfloat and half (hand-written): out16[tid] and outh[tid].
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @trunc(ptr addrspace(1) %in, ptr addrspace(1) %outbf, ptr addrspace(1) %outh) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %idx = zext i32 %tid to i64
  %pi = getelementptr inbounds float, ptr addrspace(1) %in, i64 %idx
  %v = load float, ptr addrspace(1) %pi, align 4
  %bf = fptrunc float %v to bfloat
  %h = fptrunc float %v to half
  %pb = getelementptr inbounds bfloat, ptr addrspace(1) %outbf, i64 %idx
  store bfloat %bf, ptr addrspace(1) %pb, align 2
  %ph = getelementptr inbounds half, ptr addrspace(1) %outh, i64 %idx
  store half %h, ptr addrspace(1) %ph, align 2
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
