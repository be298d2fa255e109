; LDS transpose reads and global->LDS loads (hand-written).
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

@lds = internal addrspace(3) global [2048 x i8] undef, align 16

; Lane l stores in[l] (8 bytes) at LDS byte 8*l, then reads with tr16/tr8/tr4
; from the same address.
define amdgpu_kernel void @tr_reads(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %l to i64
  %pin = getelementptr inbounds i64, ptr addrspace(1) %in, i64 %i
  %v = load i64, ptr addrspace(1) %pin, align 8
  %off = mul i32 %l, 8
  %p = getelementptr inbounds i8, ptr addrspace(3) @lds, i32 %off
  store i64 %v, ptr addrspace(3) %p, align 8
  %t16 = call <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3) %p)
  %t8 = call <2 x i32> @llvm.amdgcn.ds.read.tr8.b64.v2i32(ptr addrspace(3) %p)
  %t4 = call <2 x i32> @llvm.amdgcn.ds.read.tr4.b64.v2i32(ptr addrspace(3) %p)
  %po = getelementptr inbounds [3 x i64], ptr addrspace(1) %out, i64 %i
  store <4 x i16> %t16, ptr addrspace(1) %po, align 8
  %po1 = getelementptr inbounds i64, ptr addrspace(1) %po, i64 1
  store <2 x i32> %t8, ptr addrspace(1) %po1, align 8
  %po2 = getelementptr inbounds i64, ptr addrspace(1) %po, i64 2
  store <2 x i32> %t4, ptr addrspace(1) %po2, align 8
  ret void
}

; Only tr16, so the run needs no uncertain layout.
define amdgpu_kernel void @tr16_only(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %l to i64
  %pin = getelementptr inbounds i64, ptr addrspace(1) %in, i64 %i
  %v = load i64, ptr addrspace(1) %pin, align 8
  %off = mul i32 %l, 8
  %p = getelementptr inbounds i8, ptr addrspace(3) @lds, i32 %off
  store i64 %v, ptr addrspace(3) %p, align 8
  %t16 = call <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3) %p)
  %po = getelementptr inbounds i64, ptr addrspace(1) %out, i64 %i
  store <4 x i16> %t16, ptr addrspace(1) %po, align 8
  ret void
}

; Lane l loads 16 bytes from src + 16*(63 - l) + 16 into LDS slot l (lane
; order, base + imm_offset 16), then reads back slot l.
define amdgpu_kernel void @global_to_lds(ptr addrspace(1) %src, ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %r = sub i32 63, %l
  %ri = zext i32 %r to i64
  %ps = getelementptr inbounds <4 x i32>, ptr addrspace(1) %src, i64 %ri
  call void @llvm.amdgcn.global.load.lds(ptr addrspace(1) %ps, ptr addrspace(3) @lds, i32 16, i32 16, i32 0)
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %off = mul i32 %l, 16
  %off2 = add i32 %off, 16
  %p = getelementptr inbounds i8, ptr addrspace(3) @lds, i32 %off2
  %v = load <4 x i32>, ptr addrspace(3) %p, align 16
  %i = zext i32 %l to i64
  %po = getelementptr inbounds <4 x i32>, ptr addrspace(1) %out, i64 %i
  store <4 x i32> %v, ptr addrspace(1) %po, align 16
  ret void
}

; Buffer form: lane l loads 4 bytes at voffset 4*l from a resource of
; %records bytes into LDS slot l; out-of-range lanes write zeros.
define amdgpu_kernel void @buffer_to_lds(ptr addrspace(1) %src, ptr addrspace(1) %out, i32 %records) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %nr = zext i32 %records to i64
  %rs = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %src, i16 0, i64 %nr, i32 159744)
  %off = mul i32 %l, 4
  call void @llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8) %rs, ptr addrspace(3) @lds, i32 4, i32 %off, i32 0, i32 0, i32 0)
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %p = getelementptr inbounds i8, ptr addrspace(3) @lds, i32 %off
  %v = load i32, ptr addrspace(3) %p, align 4
  %i = zext i32 %l to i64
  %po = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %i
  store i32 %v, ptr addrspace(1) %po, align 4
  ret void
}

; ds_read_tr16 by lanes 0..47 only: the fourth 16-lane group is inactive.
define amdgpu_kernel void @tr16_partial(ptr addrspace(1) %in, ptr addrspace(1) %out) {
entry:
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %l to i64
  %off = mul i32 %l, 8
  %p = getelementptr inbounds i8, ptr addrspace(3) @lds, i32 %off
  store i64 0, ptr addrspace(3) %p, align 8
  %c = icmp ult i32 %l, 48
  br i1 %c, label %read, label %done
read:
  %t16 = call <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3) %p)
  %po = getelementptr inbounds i64, ptr addrspace(1) %out, i64 %i
  store <4 x i16> %t16, ptr addrspace(1) %po, align 8
  br label %done
done:
  ret void
}

; 12-byte global->LDS load: lane l first writes a marker in the fourth dword
; of its 16-byte slot, then loads 12 bytes from src + 12*l into the slot and
; reads the whole slot back.
define amdgpu_kernel void @global_to_lds_x3(ptr addrspace(1) %src, ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %slot = mul i32 %l, 16
  %m = add i32 %slot, 12
  %pm = getelementptr inbounds i8, ptr addrspace(3) @lds, i32 %m
  store i32 -559038737, ptr addrspace(3) %pm, align 4
  %sb = mul i32 %l, 12
  %ps = getelementptr inbounds i8, ptr addrspace(1) %src, i32 %sb
  call void @llvm.amdgcn.global.load.lds(ptr addrspace(1) %ps, ptr addrspace(3) @lds, i32 12, i32 0, i32 0)
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %p = getelementptr inbounds i8, ptr addrspace(3) @lds, i32 %slot
  %v = load <4 x i32>, ptr addrspace(3) %p, align 16
  %i = zext i32 %l to i64
  %po = getelementptr inbounds <4 x i32>, ptr addrspace(1) %out, i64 %i
  store <4 x i32> %v, ptr addrspace(1) %po, align 16
  ret void
}

declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1), i16, i64, i32)
declare void @llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8), ptr addrspace(3), i32 immarg, i32, i32, i32 immarg, i32 immarg)
declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()
declare <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3))
declare <2 x i32> @llvm.amdgcn.ds.read.tr8.b64.v2i32(ptr addrspace(3))
declare <2 x i32> @llvm.amdgcn.ds.read.tr4.b64.v2i32(ptr addrspace(3))
declare void @llvm.amdgcn.global.load.lds(ptr addrspace(1), ptr addrspace(3), i32 immarg, i32 immarg, i32 immarg)
