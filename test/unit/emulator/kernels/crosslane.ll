; Cross-lane operations (hand-written): DPP, ds_swizzle, permlane32.swap,
; ds_bpermute, readlane; plus a switch and vector selects on i1 vectors.
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @crosslane(ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %v = mul i32 %l, 10
  ; row_shr:1 with bound_ctrl: lane 16r gets 0, others lane-1.
  %shr = call i32 @llvm.amdgcn.update.dpp.i32(i32 -1, i32 %v, i32 273, i32 15, i32 15, i1 true)
  ; ds_swizzle SWAP(1): and 0x1f, xor 1.
  %sw = call i32 @llvm.amdgcn.ds.swizzle(i32 %v, i32 1055)
  %ps = call { i32, i32 } @llvm.amdgcn.permlane32.swap(i32 %v, i32 %l, i1 false, i1 false)
  %ps0 = extractvalue { i32, i32 } %ps, 0
  %ps1 = extractvalue { i32, i32 } %ps, 1
  ; bpermute: read lane 63 - l (byte index).
  %r = sub i32 63, %l
  %ri = shl i32 %r, 2
  %bp = call i32 @llvm.amdgcn.ds.bpermute(i32 %ri, i32 %v)
  %rl = call i32 @llvm.amdgcn.readlane.i32(i32 %v, i32 5)
  %wr = call i32 @llvm.amdgcn.wave.reduce.umax.i32(i32 %v, i32 0)
  %m = and i32 %l, 3
  switch i32 %m, label %d [ i32 0, label %s0
                            i32 1, label %s1 ]
s0:
  br label %j
s1:
  br label %j
d:
  br label %j
j:
  %sv = phi i32 [ 100, %s0 ], [ 200, %s1 ], [ 300, %d ]
  %vl = insertelement <4 x i32> poison, i32 %l, i32 0
  %vs = shufflevector <4 x i32> %vl, <4 x i32> poison, <4 x i32> zeroinitializer
  %vadd = add <4 x i32> %vs, <i32 0, i32 1, i32 2, i32 3>
  %vc = icmp ult <4 x i32> %vadd, <i32 2, i32 2, i32 40, i32 40>
  %vsel = select <4 x i1> %vc, <4 x i32> %vadd, <4 x i32> zeroinitializer
  %red = call i32 @llvm.vector.reduce.add.v4i32(<4 x i32> %vsel)
  %bits = bitcast <4 x i1> %vc to i4
  %bz = zext i4 %bits to i32
  %i = zext i32 %l to i64
  %p = getelementptr inbounds [10 x i32], ptr addrspace(1) %out, i64 %i
  store i32 %shr, ptr addrspace(1) %p, align 4
  %p1 = getelementptr inbounds i32, ptr addrspace(1) %p, i64 1
  store i32 %sw, ptr addrspace(1) %p1, align 4
  %p2 = getelementptr inbounds i32, ptr addrspace(1) %p, i64 2
  store i32 %ps0, ptr addrspace(1) %p2, align 4
  %p3 = getelementptr inbounds i32, ptr addrspace(1) %p, i64 3
  store i32 %ps1, ptr addrspace(1) %p3, align 4
  %p4 = getelementptr inbounds i32, ptr addrspace(1) %p, i64 4
  store i32 %bp, ptr addrspace(1) %p4, align 4
  %p5 = getelementptr inbounds i32, ptr addrspace(1) %p, i64 5
  store i32 %rl, ptr addrspace(1) %p5, align 4
  %p6 = getelementptr inbounds i32, ptr addrspace(1) %p, i64 6
  store i32 %sv, ptr addrspace(1) %p6, align 4
  %p7 = getelementptr inbounds i32, ptr addrspace(1) %p, i64 7
  store i32 %red, ptr addrspace(1) %p7, align 4
  %p8 = getelementptr inbounds i32, ptr addrspace(1) %p, i64 8
  store i32 %bz, ptr addrspace(1) %p8, align 4
  %p9 = getelementptr inbounds i32, ptr addrspace(1) %p, i64 9
  store i32 %wr, ptr addrspace(1) %p9, align 4
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.update.dpp.i32(i32, i32, i32 immarg, i32 immarg, i32 immarg, i1 immarg)
declare i32 @llvm.amdgcn.ds.swizzle(i32, i32 immarg)
declare { i32, i32 } @llvm.amdgcn.permlane32.swap(i32, i32, i1 immarg, i1 immarg)
declare i32 @llvm.amdgcn.ds.bpermute(i32, i32)
declare i32 @llvm.amdgcn.readlane.i32(i32, i32)
declare i32 @llvm.amdgcn.wave.reduce.umax.i32(i32, i32 immarg)
declare i32 @llvm.vector.reduce.add.v4i32(<4 x i32>)
