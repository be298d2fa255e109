; Plain LLVM IR kernels for the core interpreter tests (hand-written).
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

@lds = internal addrspace(3) global [256 x float] undef, align 16

; out[gid] = a[gid] * s + b[gid] (fma), guarded by gid < n; loop-free.
define amdgpu_kernel void @saxpy(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %out, float %s, i32 %n) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %wg = call i32 @llvm.amdgcn.workgroup.id.x()
  %bs = call i64 @__ockl_get_local_size(i32 0)
  %bs32 = trunc i64 %bs to i32
  %base = mul i32 %wg, %bs32
  %gid = add i32 %base, %tid
  %in = icmp slt i32 %gid, %n
  br i1 %in, label %body, label %exit
body:
  %idx = sext i32 %gid to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %idx
  %pb = getelementptr inbounds float, ptr addrspace(1) %b, i64 %idx
  %va = load float, ptr addrspace(1) %pa, align 4
  %vb = load float, ptr addrspace(1) %pb, align 4
  %r = call float @llvm.fma.f32(float %va, float %s, float %vb)
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %idx
  store float %r, ptr addrspace(1) %po, align 4
  br label %exit
exit:
  ret void
}

; Per-lane loop with phis: out[tid] = sum_{i<tid} i, plus a swap of two phis.
define amdgpu_kernel void @loop(ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  br label %head
head:
  %i = phi i32 [ 0, %entry ], [ %i1, %head ]
  %acc = phi i32 [ 0, %entry ], [ %acc1, %head ]
  %x = phi i32 [ 1, %entry ], [ %y, %head ]
  %y = phi i32 [ 2, %entry ], [ %x, %head ]
  %acc1 = add i32 %acc, %i
  %i1 = add i32 %i, 1
  %done = icmp uge i32 %i1, %tid
  br i1 %done, label %exit, label %head
exit:
  %idx = zext i32 %tid to i64
  %p = getelementptr inbounds [2 x i32], ptr addrspace(1) %out, i64 %idx
  store i32 %acc1, ptr addrspace(1) %p, align 4
  %p2 = getelementptr inbounds i32, ptr addrspace(1) %p, i64 1
  %xy = sub i32 %x, %y
  store i32 %xy, ptr addrspace(1) %p2, align 4
  ret void
}

; Workgroup reduction through LDS with proper fences around the barrier.
define amdgpu_kernel void @lds_reverse(ptr addrspace(1) %in, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %idx = zext i32 %tid to i64
  %p = getelementptr inbounds float, ptr addrspace(1) %in, i64 %idx
  %v = load float, ptr addrspace(1) %p, align 4
  %l = getelementptr inbounds [256 x float], ptr addrspace(3) @lds, i32 0, i32 %tid
  store float %v, ptr addrspace(3) %l, align 4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %r = sub i32 255, %tid
  %lr = getelementptr inbounds [256 x float], ptr addrspace(3) @lds, i32 0, i32 %r
  %w = load float, ptr addrspace(3) %lr, align 4
  %q = getelementptr inbounds float, ptr addrspace(1) %out, i64 %idx
  store float %w, ptr addrspace(1) %q, align 4
  ret void
}

; Wave ops: ballot, readfirstlane, mbcnt; divergent lanes reach the ballot.
define amdgpu_kernel void @waveops(ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %odd = and i32 %tid, 1
  %c = icmp eq i32 %odd, 1
  br i1 %c, label %a, label %b
a:
  %t2 = mul i32 %tid, 3
  br label %m
b:
  %t3 = add i32 %tid, 100
  br label %m
m:
  %v = phi i32 [ %t2, %a ], [ %t3, %b ]
  %bal = call i64 @llvm.amdgcn.ballot.i64(i1 %c)
  %first = call i32 @llvm.amdgcn.readfirstlane.i32(i32 %v)
  %lo = call i32 @llvm.amdgcn.mbcnt.lo(i32 -1, i32 0)
  %mb = call i32 @llvm.amdgcn.mbcnt.hi(i32 -1, i32 %lo)
  %idx = zext i32 %tid to i64
  %p = getelementptr inbounds [4 x i32], ptr addrspace(1) %out, i64 %idx
  %b32 = trunc i64 %bal to i32
  store i32 %b32, ptr addrspace(1) %p, align 4
  %p1 = getelementptr inbounds i32, ptr addrspace(1) %p, i64 1
  store i32 %first, ptr addrspace(1) %p1, align 4
  %p2 = getelementptr inbounds i32, ptr addrspace(1) %p, i64 2
  store i32 %mb, ptr addrspace(1) %p2, align 4
  %p3 = getelementptr inbounds i32, ptr addrspace(1) %p, i64 3
  store i32 %v, ptr addrspace(1) %p3, align 4
  ret void
}

; Reconvergence. Each iteration, the odd lanes store to LDS and the even lanes
; skip it; the ballot at the loop head must still see the whole wave (the
; lanes meet at the latch before the next iteration). Then lane L leaves a
; second loop after L % 4 + 1 iterations: the ballot in it sees the lanes
; still iterating, and the ballot after it the whole wave again.
; out[4 tid + 0] = sum of popcount(ballot) over the first loop
; out[4 tid + 1] = sum of popcount(ballot) over lane L's iterations of the second
; out[4 tid + 2] = popcount(ballot) after the second loop
define amdgpu_kernel void @reconverge(ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %odd = trunc i32 %tid to i1
  %slot = getelementptr inbounds float, ptr addrspace(3) @lds, i32 %tid
  br label %head
head:
  %i = phi i32 [ 0, %entry ], [ %i1, %latch ]
  %acc = phi i64 [ 0, %entry ], [ %acc1, %latch ]
  %bal = call i64 @llvm.amdgcn.ballot.i64(i1 true)
  %n = call i64 @llvm.ctpop.i64(i64 %bal)
  %acc1 = add i64 %acc, %n
  br i1 %odd, label %body, label %latch
body:
  %f = sitofp i32 %i to float
  store float %f, ptr addrspace(3) %slot, align 4
  br label %latch
latch:
  %i1 = add i32 %i, 1
  %more = icmp ult i32 %i1, 4
  br i1 %more, label %head, label %second
second:
  %trips = and i32 %tid, 3
  br label %loop2
loop2:
  %j = phi i32 [ 0, %second ], [ %j1, %loop2 ]
  %acc2 = phi i64 [ 0, %second ], [ %acc3, %loop2 ]
  %bal2 = call i64 @llvm.amdgcn.ballot.i64(i1 true)
  %n2 = call i64 @llvm.ctpop.i64(i64 %bal2)
  %acc3 = add i64 %acc2, %n2
  %j1 = add i32 %j, 1
  %again = icmp ule i32 %j1, %trips
  br i1 %again, label %loop2, label %after
after:
  %bal3 = call i64 @llvm.amdgcn.ballot.i64(i1 true)
  %n3 = call i64 @llvm.ctpop.i64(i64 %bal3)
  %idx = zext i32 %tid to i64
  %p = getelementptr inbounds [4 x i64], ptr addrspace(1) %out, i64 %idx
  store i64 %acc1, ptr addrspace(1) %p, align 8
  %p1 = getelementptr inbounds i64, ptr addrspace(1) %p, i64 1
  store i64 %acc3, ptr addrspace(1) %p1, align 8
  %p2 = getelementptr inbounds i64, ptr addrspace(1) %p, i64 2
  store i64 %n3, ptr addrspace(1) %p2, align 8
  ret void
}

; Buffer resources: raw.ptr.buffer.load/store with the per-dword range rule,
; and a buffer fat pointer (addrspace 7) load.
define amdgpu_kernel void @buffers(ptr addrspace(1) %src, ptr addrspace(1) %dst, i32 %bytes32) {
entry:
  %bytes = zext i32 %bytes32 to i64
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %off = mul i32 %tid, 8
  %rs2 = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %src, i16 0, i64 %bytes, i32 159744)
  %rd = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %dst, i16 0, i64 %bytes, i32 159744)
  %v = call <2 x i32> @llvm.amdgcn.raw.ptr.buffer.load.v2i32(ptr addrspace(8) %rs2, i32 %off, i32 0, i32 0)
  %v1 = add <2 x i32> %v, <i32 1, i32 1>
  call void @llvm.amdgcn.raw.ptr.buffer.store.v2i32(<2 x i32> %v1, ptr addrspace(8) %rd, i32 %off, i32 0, i32 0)
  %fp = call ptr addrspace(7) @llvm.amdgcn.make.buffer.rsrc.p7.p1(ptr addrspace(1) %src, i16 0, i64 %bytes, i32 159744)
  %q = getelementptr i32, ptr addrspace(7) %fp, i32 %tid
  %w = load i32, ptr addrspace(7) %q, align 4
  %idx = zext i32 %tid to i64
  %pd = getelementptr inbounds i32, ptr addrspace(1) %dst, i64 512
  %pd2 = getelementptr inbounds i32, ptr addrspace(1) %pd, i64 %idx
  store i32 %w, ptr addrspace(1) %pd2, align 4
  ret void
}

; Atomics: f32 fadd, <2 x bfloat> fadd, i32 max on global memory.
define amdgpu_kernel void @atomics(ptr addrspace(1) %f, ptr addrspace(1) %bf, ptr addrspace(1) %m) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %x = uitofp i32 %tid to float
  %r0 = atomicrmw fadd ptr addrspace(1) %f, float %x syncscope("agent") monotonic, align 4
  %h = fptrunc float 0.5 to bfloat
  %v0 = insertelement <2 x bfloat> poison, bfloat %h, i32 0
  %v1 = insertelement <2 x bfloat> %v0, bfloat 1.0, i32 1
  %r1 = atomicrmw fadd ptr addrspace(1) %bf, <2 x bfloat> %v1 syncscope("agent") monotonic, align 4
  %r2 = atomicrmw max ptr addrspace(1) %m, i32 %tid syncscope("agent") monotonic, align 4
  ret void
}

; The transcendental unit: out[8*i + k] for in[i], i the global id.
define amdgpu_kernel void @transcendentals(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %wg = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %wg, 64
  %g = add i32 %base, %tid
  %gi = zext i32 %g to i64
  %px = getelementptr inbounds float, ptr addrspace(1) %in, i64 %gi
  %x = load float, ptr addrspace(1) %px, align 4
  %e = call float @llvm.amdgcn.exp2.f32(float %x)
  %lg = call float @llvm.amdgcn.log.f32(float %x)
  %r = call float @llvm.amdgcn.rcp.f32(float %x)
  %q = call float @llvm.amdgcn.rsq.f32(float %x)
  %s = call float @llvm.amdgcn.sqrt.f32(float %x)
  %d = fdiv afn float 3.0, %x
  %sa = call afn float @llvm.sqrt.f32(float %x)
  %si = call float @llvm.sqrt.f32(float %x)
  %o = mul i64 %gi, 8
  %p0 = getelementptr inbounds float, ptr addrspace(1) %out, i64 %o
  store float %e, ptr addrspace(1) %p0, align 4
  %p1 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 1
  store float %lg, ptr addrspace(1) %p1, align 4
  %p2 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 2
  store float %r, ptr addrspace(1) %p2, align 4
  %p3 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 3
  store float %q, ptr addrspace(1) %p3, align 4
  %p4 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 4
  store float %s, ptr addrspace(1) %p4, align 4
  %p5 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 5
  store float %d, ptr addrspace(1) %p5, align 4
  %p6 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 6
  store float %sa, ptr addrspace(1) %p6, align 4
  %p7 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 7
  store float %si, ptr addrspace(1) %p7, align 4
  ret void
}

declare float @llvm.amdgcn.exp2.f32(float)
declare float @llvm.amdgcn.log.f32(float)
declare float @llvm.amdgcn.rcp.f32(float)
declare float @llvm.amdgcn.rsq.f32(float)
declare float @llvm.amdgcn.sqrt.f32(float)
declare float @llvm.sqrt.f32(float)

; An intrinsic the emulator does not model.
define amdgpu_kernel void @unknown(ptr addrspace(1) %out) {
  %t = call i32 @llvm.amdgcn.s.getreg(i32 0)
  store i32 %t, ptr addrspace(1) %out
  ret void
}

; Intrinsics are matched by ID: rcp.legacy is not rcp, whatever its name
; starts with.
define amdgpu_kernel void @rcp_legacy(ptr addrspace(1) %out) {
  %r = call float @llvm.amdgcn.rcp.legacy(float 2.0)
  store float %r, ptr addrspace(1) %out
  ret void
}

; An external function that is neither an intrinsic nor a device-library query.
define amdgpu_kernel void @external_call(ptr addrspace(1) %out) {
  %r = call i64 @__ockl_get_work_dim_like(i32 0)
  store i64 %r, ptr addrspace(1) %out
  ret void
}

@dyn = external addrspace(3) global [0 x i32], align 16

; Dynamic LDS after the static LDS: out[tid] = dyn[63 - tid] (tid written).
define amdgpu_kernel void @dynamic_lds(ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr inbounds [0 x i32], ptr addrspace(3) @dyn, i32 0, i32 %tid
  store i32 %tid, ptr addrspace(3) %p, align 4
  %r = sub i32 63, %tid
  %q = getelementptr inbounds [0 x i32], ptr addrspace(3) @dyn, i32 0, i32 %r
  %v = load i32, ptr addrspace(3) %q, align 4
  %idx = zext i32 %tid to i64
  %o = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %idx
  store i32 %v, ptr addrspace(1) %o, align 4
  ret void
}

; Launch geometry through every route: hidden kernel arguments (code object
; v5), the HSA dispatch packet and the device-library queries.
define amdgpu_kernel void @geometry(ptr addrspace(1) %out) {
  %ia = call ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()
  %bcx = load i32, ptr addrspace(4) %ia, align 4
  %pgs = getelementptr inbounds i8, ptr addrspace(4) %ia, i64 12
  %gsx = load i16, ptr addrspace(4) %pgs, align 2
  %dp = call ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()
  %pwx = getelementptr inbounds i8, ptr addrspace(4) %dp, i64 4
  %wsx = load i16, ptr addrspace(4) %pwx, align 2
  %pgx = getelementptr inbounds i8, ptr addrspace(4) %dp, i64 12
  %grx = load i32, ptr addrspace(4) %pgx, align 4
  %ng = call i64 @__ockl_get_num_groups(i32 0)
  %gid = call i64 @__ockl_get_global_id(i32 0)
  %wy = call i32 @llvm.amdgcn.workgroup.id.y()
  %tid = trunc i64 %gid to i32
  %wx = call i32 @llvm.amdgcn.workgroup.id.x()
  %wl = mul i32 %wy, 1000
  %slot = add i32 %wl, %tid
  %idx = zext i32 %slot to i64
  %o = getelementptr inbounds [7 x i32], ptr addrspace(1) %out, i64 %idx
  store i32 %bcx, ptr addrspace(1) %o, align 4
  %o1 = getelementptr inbounds i32, ptr addrspace(1) %o, i64 1
  %gsx32 = zext i16 %gsx to i32
  store i32 %gsx32, ptr addrspace(1) %o1, align 4
  %o2 = getelementptr inbounds i32, ptr addrspace(1) %o, i64 2
  %wsx32 = zext i16 %wsx to i32
  store i32 %wsx32, ptr addrspace(1) %o2, align 4
  %o3 = getelementptr inbounds i32, ptr addrspace(1) %o, i64 3
  store i32 %grx, ptr addrspace(1) %o3, align 4
  %o4 = getelementptr inbounds i32, ptr addrspace(1) %o, i64 4
  %ng32 = trunc i64 %ng to i32
  store i32 %ng32, ptr addrspace(1) %o4, align 4
  %o5 = getelementptr inbounds i32, ptr addrspace(1) %o, i64 5
  store i32 %tid, ptr addrspace(1) %o5, align 4
  %o6 = getelementptr inbounds i32, ptr addrspace(1) %o, i64 6
  store i32 %wx, ptr addrspace(1) %o6, align 4
  ret void
}

declare ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()
declare ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()
declare i64 @__ockl_get_num_groups(i32)
declare i64 @__ockl_get_global_id(i32)
declare i32 @llvm.amdgcn.workgroup.id.y()

; Never terminates.
define amdgpu_kernel void @spin(ptr addrspace(1) %out) {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
  %i1 = add i32 %i, 1
  br label %loop
}

; Compiled for exactly 64 threads per workgroup.
define amdgpu_kernel void @fixed64(ptr addrspace(1) %out) "amdgpu-flat-work-group-size"="64,64" !reqd_work_group_size !0 {
  ret void
}

!0 = !{i32 64, i32 1, i32 1}

declare i32 @llvm.amdgcn.s.getreg(i32 immarg)
declare float @llvm.amdgcn.rcp.legacy(float)
declare i64 @__ockl_get_work_dim_like(i32)
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i64 @__ockl_get_local_size(i32)
declare float @llvm.fma.f32(float, float, float)
declare void @llvm.amdgcn.s.barrier()
declare i64 @llvm.amdgcn.ballot.i64(i1)
declare i64 @llvm.ctpop.i64(i64)
declare i32 @llvm.amdgcn.readfirstlane.i32(i32)
declare i32 @llvm.amdgcn.mbcnt.lo(i32, i32)
declare i32 @llvm.amdgcn.mbcnt.hi(i32, i32)
declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1), i16, i64, i32)
declare ptr addrspace(7) @llvm.amdgcn.make.buffer.rsrc.p7.p1(ptr addrspace(1), i16, i64, i32)
declare <2 x i32> @llvm.amdgcn.raw.ptr.buffer.load.v2i32(ptr addrspace(8), i32, i32, i32 immarg)
declare void @llvm.amdgcn.raw.ptr.buffer.store.v2i32(<2 x i32>, ptr addrspace(8), i32, i32, i32 immarg)
