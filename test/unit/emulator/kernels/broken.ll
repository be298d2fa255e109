; Deliberately broken kernels, one per checker class (hand-written).
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

@lds = internal addrspace(3) global [256 x i32] undef, align 16

; Wave 1 reads the slots of wave 0 with no barrier in between.
define amdgpu_kernel void @missing_barrier(ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %l = getelementptr inbounds [256 x i32], ptr addrspace(3) @lds, i32 0, i32 %tid
  store i32 %tid, ptr addrspace(3) %l, align 4
  %r = and i32 %tid, 63
  %lr = getelementptr inbounds [256 x i32], ptr addrspace(3) @lds, i32 0, i32 %r
  %v = load i32, ptr addrspace(3) %lr, align 4
  %idx = zext i32 %tid to i64
  %p = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %idx
  store i32 %v, ptr addrspace(1) %p, align 4
  ret void
}

; Stores one element past the end of the output.
define amdgpu_kernel void @oob_store(ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %t1 = add i32 %tid, 1
  %idx = zext i32 %t1 to i64
  %p = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %idx
  store i32 %tid, ptr addrspace(1) %p, align 4
  ret void
}

; Reads LDS that nobody wrote (lane 63 reads slot 64).
define amdgpu_kernel void @uninit_lds(ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %l = getelementptr inbounds [256 x i32], ptr addrspace(3) @lds, i32 0, i32 %tid
  store i32 %tid, ptr addrspace(3) %l, align 4
  %r = add i32 %tid, 1
  %lr = getelementptr inbounds [256 x i32], ptr addrspace(3) @lds, i32 0, i32 %r
  %v = load i32, ptr addrspace(3) %lr, align 4
  %idx = zext i32 %tid to i64
  %p = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %idx
  store i32 %v, ptr addrspace(1) %p, align 4
  ret void
}

; A barrier reached by half of the lanes of a wave.
define amdgpu_kernel void @divergent_barrier(ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %c = icmp ult i32 %tid, 32
  br i1 %c, label %bar, label %exit
bar:
  call void @llvm.amdgcn.s.barrier()
  br label %exit
exit:
  ret void
}

; The second wave never reaches the barrier the first one waits at.
define amdgpu_kernel void @barrier_deadlock(ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %c = icmp ult i32 %tid, 64
  br i1 %c, label %bar, label %exit
bar:
  call void @llvm.amdgcn.s.barrier()
  br label %exit
exit:
  ret void
}

; Barrier-separated LDS exchange without the workgroup fences.
define amdgpu_kernel void @barrier_no_fence(ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %l = getelementptr inbounds [256 x i32], ptr addrspace(3) @lds, i32 0, i32 %tid
  store i32 %tid, ptr addrspace(3) %l, align 4
  call void @llvm.amdgcn.s.barrier()
  %r = xor i32 %tid, 64
  %lr = getelementptr inbounds [256 x i32], ptr addrspace(3) @lds, i32 0, i32 %r
  %v = load i32, ptr addrspace(3) %lr, align 4
  %idx = zext i32 %tid to i64
  %p = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %idx
  store i32 %v, ptr addrspace(1) %p, align 4
  ret void
}

; Release fence present, acquire fence missing.
define amdgpu_kernel void @barrier_no_acquire(ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %l = getelementptr inbounds [256 x i32], ptr addrspace(3) @lds, i32 0, i32 %tid
  store i32 %tid, ptr addrspace(3) %l, align 4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  %r = xor i32 %tid, 64
  %lr = getelementptr inbounds [256 x i32], ptr addrspace(3) @lds, i32 0, i32 %r
  %v = load i32, ptr addrspace(3) %lr, align 4
  %idx = zext i32 %tid to i64
  %p = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %idx
  store i32 %v, ptr addrspace(1) %p, align 4
  ret void
}

; LDS index past the 1 KiB array.
define amdgpu_kernel void @oob_lds(ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %r = add i32 %tid, 200
  %l = getelementptr inbounds [256 x i32], ptr addrspace(3) @lds, i32 0, i32 %r
  store i32 %tid, ptr addrspace(3) %l, align 4
  ret void
}

; Out-of-range buffer atomic: faults on gfx950.
define amdgpu_kernel void @oob_buffer_atomic(ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %rs = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %out, i16 0, i64 128, i32 159744)
  %off = mul i32 %tid, 4
  %o = call i32 @llvm.amdgcn.raw.ptr.buffer.atomic.add.i32(i32 1, ptr addrspace(8) %rs, i32 %off, i32 0, i32 0)
  ret void
}

; Lane 3 stores 16 bytes at a 4-byte offset its `align 16` does not allow.
define amdgpu_kernel void @misaligned_lds_vector(ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %i = mul i32 %tid, 4
  %is3 = icmp eq i32 %tid, 3
  %skew = zext i1 %is3 to i32
  %j = add i32 %i, %skew
  %l = getelementptr inbounds [256 x i32], ptr addrspace(3) @lds, i32 0, i32 %j
  store <4 x i32> zeroinitializer, ptr addrspace(3) %l, align 16
  ret void
}

; An i64 load 4 bytes into the output, which its `align 8` does not allow.
define amdgpu_kernel void @misaligned_global_load(ptr addrspace(1) %out) {
  %p = getelementptr inbounds i8, ptr addrspace(1) %out, i64 4
  %v = load i64, ptr addrspace(1) %p, align 8
  store i64 %v, ptr addrspace(1) %out, align 8
  ret void
}

; A global atomic 2 bytes into the output (atomics are naturally aligned).
define amdgpu_kernel void @misaligned_global_atomic(ptr addrspace(1) %out) {
  %p = getelementptr inbounds i8, ptr addrspace(1) %out, i64 2
  %o = atomicrmw add ptr addrspace(1) %p, i32 1 syncscope("agent") monotonic, align 4
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()
declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1), i16, i64, i32)
declare i32 @llvm.amdgcn.raw.ptr.buffer.atomic.add.i32(i32, ptr addrspace(8), i32, i32, i32 immarg)
