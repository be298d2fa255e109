; NVPTX (sm_90a) operations (hand-written): warps of 32 lanes, shfl.sync,
; vote.sync, prmt, mma.sync m16n8k16 bf16, wgmma m64n16k16 bf16, cp.async
; groups, CTA barriers with ids, thread counts and an OR reduction, barrier
; arrivals (warp specialization), setmaxnreg, and the inline PTX moegen
; emits (wgmma with A in registers or in shared memory).
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@smem = internal addrspace(3) global [256 x i32] undef, align 16

; out[t * 8 + i]: warp-local lane queries and shuffles of v = 100 * tid.
define ptx_kernel void @warps(ptr addrspace(1) %out) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %lane = call i32 @llvm.nvvm.read.ptx.sreg.laneid()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %v = mul i32 %t, 100
  ; idx: each lane reads lane (31 - lane) of its own warp.
  %src = sub i32 31, %lane
  %idx = call i32 @llvm.nvvm.shfl.sync.idx.i32(i32 -1, i32 %v, i32 %src, i32 31)
  ; up by 3 with the predicate: lanes 0..2 keep their own value.
  %upp = call { i32, i1 } @llvm.nvvm.shfl.sync.up.i32p(i32 -1, i32 %v, i32 3, i32 0)
  %up = extractvalue { i32, i1 } %upp, 0
  %upin = extractvalue { i32, i1 } %upp, 1
  %upz = zext i1 %upin to i32
  ; bfly by 5 (f32), down by 4 within segments of 8 lanes (c = (32 - 8) << 8 | 7).
  %vf = uitofp i32 %v to float
  %bf = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %vf, i32 5, i32 31)
  %bfi = fptoui float %bf to i32
  %down = call i32 @llvm.nvvm.shfl.sync.down.i32(i32 -1, i32 %v, i32 4, i32 6151)
  %m4 = and i32 %t, 3
  %p = icmp eq i32 %m4, 0
  %ballot = call i32 @llvm.nvvm.vote.ballot.sync(i32 -1, i1 %p)
  %base = mul i32 %t, 8
  %o0 = getelementptr i32, ptr addrspace(1) %out, i32 %base
  store i32 %lane, ptr addrspace(1) %o0
  %b1 = add i32 %base, 1
  %o1 = getelementptr i32, ptr addrspace(1) %out, i32 %b1
  store i32 %idx, ptr addrspace(1) %o1
  %b2 = add i32 %base, 2
  %o2 = getelementptr i32, ptr addrspace(1) %out, i32 %b2
  store i32 %up, ptr addrspace(1) %o2
  %b3 = add i32 %base, 3
  %o3 = getelementptr i32, ptr addrspace(1) %out, i32 %b3
  store i32 %upz, ptr addrspace(1) %o3
  %b4 = add i32 %base, 4
  %o4 = getelementptr i32, ptr addrspace(1) %out, i32 %b4
  store i32 %bfi, ptr addrspace(1) %o4
  %b5 = add i32 %base, 5
  %o5 = getelementptr i32, ptr addrspace(1) %out, i32 %b5
  store i32 %down, ptr addrspace(1) %o5
  %b6 = add i32 %base, 6
  %o6 = getelementptr i32, ptr addrspace(1) %out, i32 %b6
  store i32 %ballot, ptr addrspace(1) %o6
  %b7 = add i32 %base, 7
  %o7 = getelementptr i32, ptr addrspace(1) %out, i32 %b7
  store i32 %ntid, ptr addrspace(1) %o7
  ret void
}

; out[i] = prmt(in[3i], in[3i + 1], in[3i + 2]) for lane i.
define ptx_kernel void @prmt(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %i0 = mul i32 %t, 3
  %i1 = add i32 %i0, 1
  %i2 = add i32 %i0, 2
  %pa = getelementptr i32, ptr addrspace(1) %in, i32 %i0
  %pb = getelementptr i32, ptr addrspace(1) %in, i32 %i1
  %pc = getelementptr i32, ptr addrspace(1) %in, i32 %i2
  %a = load i32, ptr addrspace(1) %pa
  %b = load i32, ptr addrspace(1) %pb
  %c = load i32, ptr addrspace(1) %pc
  %r = call i32 @llvm.nvvm.prmt(i32 %a, i32 %b, i32 %c)
  %po = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %r, ptr addrspace(1) %po
  ret void
}

; One warp: frag[lane * 10 + r] holds lane's a0..a3, b0, b1 (i32) and
; c0..c3 (f32 bits); d[lane * 4 + e] receives the D fragment.
define ptx_kernel void @mma(ptr addrspace(1) %frag, ptr addrspace(1) %d) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %base = mul i32 %t, 10
  %p0 = getelementptr i32, ptr addrspace(1) %frag, i32 %base
  %w = load <10 x i32>, ptr addrspace(1) %p0, align 4
  %a0 = extractelement <10 x i32> %w, i32 0
  %a1 = extractelement <10 x i32> %w, i32 1
  %a2 = extractelement <10 x i32> %w, i32 2
  %a3 = extractelement <10 x i32> %w, i32 3
  %b0 = extractelement <10 x i32> %w, i32 4
  %b1 = extractelement <10 x i32> %w, i32 5
  %c0i = extractelement <10 x i32> %w, i32 6
  %c1i = extractelement <10 x i32> %w, i32 7
  %c2i = extractelement <10 x i32> %w, i32 8
  %c3i = extractelement <10 x i32> %w, i32 9
  %c0 = bitcast i32 %c0i to float
  %c1 = bitcast i32 %c1i to float
  %c2 = bitcast i32 %c2i to float
  %c3 = bitcast i32 %c3i to float
  %r = call { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.bf16(i32 %a0, i32 %a1, i32 %a2, i32 %a3, i32 %b0, i32 %b1, float %c0, float %c1, float %c2, float %c3)
  %d0 = extractvalue { float, float, float, float } %r, 0
  %d1 = extractvalue { float, float, float, float } %r, 1
  %d2 = extractvalue { float, float, float, float } %r, 2
  %d3 = extractvalue { float, float, float, float } %r, 3
  %ob = mul i32 %t, 4
  %q0 = getelementptr float, ptr addrspace(1) %d, i32 %ob
  store float %d0, ptr addrspace(1) %q0
  %ob1 = add i32 %ob, 1
  %q1 = getelementptr float, ptr addrspace(1) %d, i32 %ob1
  store float %d1, ptr addrspace(1) %q1
  %ob2 = add i32 %ob, 2
  %q2 = getelementptr float, ptr addrspace(1) %d, i32 %ob2
  store float %d2, ptr addrspace(1) %q2
  %ob3 = add i32 %ob, 3
  %q3 = getelementptr float, ptr addrspace(1) %d, i32 %ob3
  store float %d3, ptr addrspace(1) %q3
  ret void
}

; Lane l copies 16 bytes of src row l into shared row l in two groups: words
; 0..1 (group 0) and 2..3 with a source size of 4 (group 1, the rest zero).
; After wait_group %keep, out[4l..4l+3] = shared row l; with %keep = 1 the
; second group is still in flight and its bytes are never written.
define ptx_kernel void @cpasync(ptr addrspace(1) %src, ptr addrspace(1) %out, i32 %keep) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %row = mul i32 %t, 4
  %s0 = getelementptr i32, ptr addrspace(1) %src, i32 %row
  %d0 = getelementptr [256 x i32], ptr addrspace(3) @smem, i32 0, i32 %row
  %row2 = add i32 %row, 2
  %s2 = getelementptr i32, ptr addrspace(1) %src, i32 %row2
  %d2 = getelementptr [256 x i32], ptr addrspace(3) @smem, i32 0, i32 %row2
  call void @llvm.nvvm.cp.async.ca.shared.global.8(ptr addrspace(3) %d0, ptr addrspace(1) %s0)
  call void @llvm.nvvm.cp.async.commit.group()
  call void @llvm.nvvm.cp.async.ca.shared.global.8.s(ptr addrspace(3) %d2, ptr addrspace(1) %s2, i32 4)
  call void @llvm.nvvm.cp.async.commit.group()
  %k = icmp eq i32 %keep, 0
  br i1 %k, label %all, label %one
all:
  call void @llvm.nvvm.cp.async.wait.group(i32 0)
  br label %read
one:
  call void @llvm.nvvm.cp.async.wait.group(i32 1)
  br label %read
read:
  %n = select i1 %k, i32 4, i32 2
  br label %loop
loop:
  %i = phi i32 [ 0, %read ], [ %i1, %loop ]
  %ri = add i32 %row, %i
  %ps = getelementptr [256 x i32], ptr addrspace(3) @smem, i32 0, i32 %ri
  %v = load i32, ptr addrspace(3) %ps
  %po = getelementptr i32, ptr addrspace(1) %out, i32 %ri
  store i32 %v, ptr addrspace(1) %po
  %i1 = add i32 %i, 1
  %more = icmp ult i32 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}

; As @cpasync with %keep = 1, but reading the whole row: the bytes of the
; group still in flight are read before anything wrote them.
define ptx_kernel void @cpasync_early(ptr addrspace(1) %src, ptr addrspace(1) %out) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %row = mul i32 %t, 4
  %s0 = getelementptr i32, ptr addrspace(1) %src, i32 %row
  %d0 = getelementptr [256 x i32], ptr addrspace(3) @smem, i32 0, i32 %row
  call void @llvm.nvvm.cp.async.cg.shared.global.16(ptr addrspace(3) %d0, ptr addrspace(1) %s0)
  call void @llvm.nvvm.cp.async.commit.group()
  %v = load i32, ptr addrspace(3) %d0
  %po = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %v, ptr addrspace(1) %po
  ret void
}

; Four warps: warps 0-1 and 2-3 each exchange a word through shared memory
; across a named barrier of 64 threads (ids 1 and 2), then the CTA ORs
; "tid == %hot" in a reduction barrier. out[t] = partner's word + 1000 * OR.
; With %count = 96 the pairs' barriers never release.
define ptx_kernel void @barriers(ptr addrspace(1) %out, i32 %hot, i32 %count) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %warp = lshr i32 %t, 5
  %pair = lshr i32 %warp, 1
  %id = add i32 %pair, 1
  %ps = getelementptr [256 x i32], ptr addrspace(3) @smem, i32 0, i32 %t
  %v = mul i32 %t, 3
  store i32 %v, ptr addrspace(3) %ps
  call void @llvm.nvvm.barrier.cta.sync.aligned.count(i32 %id, i32 %count)
  %other = xor i32 %t, 32
  %po = getelementptr [256 x i32], ptr addrspace(3) @smem, i32 0, i32 %other
  %w = load i32, ptr addrspace(3) %po
  %h = icmp eq i32 %t, %hot
  %any = call i1 @llvm.nvvm.barrier.cta.red.or.aligned.all(i32 0, i1 %h)
  %anyz = zext i1 %any to i32
  %k = mul i32 %anyz, 1000
  %r = add i32 %w, %k
  %q = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %r, ptr addrspace(1) %q
  ret void
}

; Every lane adds <2 x bf16> %val to word 0 of %acc by the inline PTX
; reduction; griddepcontrol.wait runs first.
define ptx_kernel void @red_bf16x2(ptr addrspace(1) %acc, i32 %val) {
  call void asm sideeffect "griddepcontrol.wait;", "~{memory}"()
  call void asm sideeffect "red.relaxed.gpu.global.add.noftz.bf16x2 [$0], $1;", "l,r"(ptr addrspace(1) %acc, i32 %val)
  ret void
}

; Every lane adds 8 bf16 (%v0..%v3, <2 x bf16> each) to the 16 bytes at
; %acc + %offset by the inline 16-byte PTX reduction.
define ptx_kernel void @red_v4_bf16x2(ptr addrspace(1) %acc, i32 %offset, i32 %v0, i32 %v1, i32 %v2, i32 %v3) {
  %p = getelementptr i8, ptr addrspace(1) %acc, i32 %offset
  call void asm sideeffect "red.relaxed.gpu.global.add.noftz.v4.bf16x2 [$0], {$1, $2, $3, $4};", "l,r,r,r,r"(ptr addrspace(1) %p, i32 %v0, i32 %v1, i32 %v2, i32 %v3)
  ret void
}

; Lane l transposes word l of %in (row l / 4, columns 2 (l % 4) and
; 2 (l % 4) + 1 of an 8x8 b16 matrix) with movmatrix into word l of %out.
define ptx_kernel void @movmatrix(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %s = getelementptr i32, ptr addrspace(1) %in, i32 %t
  %w = load i32, ptr addrspace(1) %s
  %r = call i32 asm sideeffect "movmatrix.sync.aligned.m8n8.trans.b16 $0, $1;", "=r,r"(i32 %w)
  %d = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %r, ptr addrspace(1) %d
  ret void
}

; Lane 3 runs a shuffle whose membermask leaves it out.
define ptx_kernel void @bad_mask(ptr addrspace(1) %out) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %r = call i32 @llvm.nvvm.shfl.sync.idx.i32(i32 -9, i32 %t, i32 0, i32 31)
  %q = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %r, ptr addrspace(1) %q
  ret void
}

; setmaxnreg in a kernel launched without a register count (.maxnreg).
define ptx_kernel void @setmaxnreg_unbounded() {
  call void @llvm.nvvm.setmaxnreg.dec.sync.aligned.u32(i32 40)
  ret void
}

; Inline PTX the emulator does not know.
define ptx_kernel void @unknown_asm() {
  call void asm sideeffect "membar.sys;", ""()
  ret void
}

; A warpgroup (128 threads): wgmma m64n16k16 with A from registers and B from
; shared memory. Thread t copies word t of %b (512 bytes: B's four core
; matrices) to shared byte 512 + 4t; frag[12t..12t + 11] holds its a0..a3
; and its 8 accumulators (f32 bits); d[8t + e] receives D element e. The
; descriptor: start at shared byte 512, leading byte offset (K) 256, stride
; byte offset (N) 128. %mode 1: thread 0 overwrites B before the wait;
; %mode 2: D read with no wait; %mode 3: B not fenced to the async proxy;
; %mode 4: fenced only after the barrier, and warp 0 then leaves (so that
; warp 1 reads what warp 0 fenced with no barrier since); %mode 5: neither
; a wait nor a read of D.
define ptx_kernel void @wgmma(ptr addrspace(1) %frag, ptr addrspace(1) %b, ptr addrspace(1) %d, i32 %scaled, i32 %mode) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bp = getelementptr i32, ptr addrspace(1) %b, i32 %t
  %bw = load i32, ptr addrspace(1) %bp
  %si = add i32 %t, 128
  %sp = getelementptr i32, ptr addrspace(3) @smem, i32 %si
  store i32 %bw, ptr addrspace(3) %sp
  %m3 = icmp eq i32 %mode, 3
  %m4 = icmp eq i32 %mode, 4
  %unfenced = or i1 %m3, %m4
  br i1 %unfenced, label %sync, label %fence

fence:
  call void @llvm.nvvm.fence.proxy.async.shared_cta()
  br label %sync

sync:
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %late = icmp eq i32 %mode, 4
  br i1 %late, label %latefence, label %issue

latefence:
  call void @llvm.nvvm.fence.proxy.async.shared_cta()
  %warp0 = icmp ult i32 %t, 32
  br i1 %warp0, label %leave, label %issue

leave:
  ret void

issue:
  %fb = mul i32 %t, 12
  %fp = getelementptr i32, ptr addrspace(1) %frag, i32 %fb
  %w = load <12 x i32>, ptr addrspace(1) %fp, align 4
  %a0 = extractelement <12 x i32> %w, i32 0
  %a1 = extractelement <12 x i32> %w, i32 1
  %a2 = extractelement <12 x i32> %w, i32 2
  %a3 = extractelement <12 x i32> %w, i32 3
  %cv = shufflevector <12 x i32> %w, <12 x i32> poison, <8 x i32> <i32 4, i32 5, i32 6, i32 7, i32 8, i32 9, i32 10, i32 11>
  %cf = bitcast <8 x i32> %cv to <8 x float>
  %c0 = extractelement <8 x float> %cf, i32 0
  %c1 = extractelement <8 x float> %cf, i32 1
  %c2 = extractelement <8 x float> %cf, i32 2
  %c3 = extractelement <8 x float> %cf, i32 3
  %c4 = extractelement <8 x float> %cf, i32 4
  %c5 = extractelement <8 x float> %cf, i32 5
  %c6 = extractelement <8 x float> %cf, i32 6
  %c7 = extractelement <8 x float> %cf, i32 7
  %bstart = getelementptr i32, ptr addrspace(3) @smem, i32 128
  %addr = ptrtoint ptr addrspace(3) %bstart to i64
  %a4 = lshr i64 %addr, 4
  %start = and i64 %a4, 16383
  %desc = or i64 %start, 34360786944
  call void @llvm.nvvm.wgmma.fence.sync.aligned()
  %r = call { float, float, float, float, float, float, float, float } asm sideeffect "{\0A.reg .pred p;\0Asetp.ne.b32 p, $21, 0;\0Awgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {$0, $1, $2, $3, $4, $5, $6, $7}, {$16, $17, $18, $19}, $20, p, 1, 1, 0;\0A}", "=f,=f,=f,=f,=f,=f,=f,=f,0,1,2,3,4,5,6,7,r,r,r,r,l,r"(float %c0, float %c1, float %c2, float %c3, float %c4, float %c5, float %c6, float %c7, i32 %a0, i32 %a1, i32 %a2, i32 %a3, i64 %desc, i32 %scaled)
  call void @llvm.nvvm.wgmma.commit_group.sync.aligned()
  %early = icmp eq i32 %mode, 1
  %first = icmp eq i32 %t, 0
  %hit = and i1 %early, %first
  br i1 %hit, label %overwrite, label %wait

overwrite:
  store i32 0, ptr addrspace(3) %sp
  br label %wait

wait:
  %noread = icmp eq i32 %mode, 5
  br i1 %noread, label %leave, label %readers

readers:
  %skip = icmp eq i32 %mode, 2
  br i1 %skip, label %out, label %dowait

dowait:
  call void @llvm.nvvm.wgmma.wait_group.sync.aligned(i64 0)
  br label %out

out:
  %ob = mul i32 %t, 8
  %op = getelementptr float, ptr addrspace(1) %d, i32 %ob
  %d0 = extractvalue { float, float, float, float, float, float, float, float } %r, 0
  %d1 = extractvalue { float, float, float, float, float, float, float, float } %r, 1
  %d2 = extractvalue { float, float, float, float, float, float, float, float } %r, 2
  %d3 = extractvalue { float, float, float, float, float, float, float, float } %r, 3
  %d4 = extractvalue { float, float, float, float, float, float, float, float } %r, 4
  %d5 = extractvalue { float, float, float, float, float, float, float, float } %r, 5
  %d6 = extractvalue { float, float, float, float, float, float, float, float } %r, 6
  %d7 = extractvalue { float, float, float, float, float, float, float, float } %r, 7
  %v0 = insertelement <8 x float> poison, float %d0, i32 0
  %v1 = insertelement <8 x float> %v0, float %d1, i32 1
  %v2 = insertelement <8 x float> %v1, float %d2, i32 2
  %v3 = insertelement <8 x float> %v2, float %d3, i32 3
  %v4 = insertelement <8 x float> %v3, float %d4, i32 4
  %v5 = insertelement <8 x float> %v4, float %d5, i32 5
  %v6 = insertelement <8 x float> %v5, float %d6, i32 6
  %v7 = insertelement <8 x float> %v6, float %d7, i32 7
  store <8 x float> %v7, ptr addrspace(1) %op, align 4
  ret void
}

; Warp specialization over two stages of shared memory: warp 2 produces
; (step i: stage i % 2 gets i * 100 + lane, then it arrives at the stage's
; "full" barrier, 1 + stage, with %pcount threads), warps 0-1 consume (wait
; at "full", add the stage's word of their lane, arrive at its "empty"
; barrier, 3 + stage, which the producer waits at before refilling the
; stage from step 2 on; %mode 1: it never waits). out[t] = a consumer's
; sum. Launched with 168 registers a thread, the producer gives 128 up
; (setmaxnreg.dec 40) and the consumers take 32 each (.inc 200; %mode 2:
; 80 each, .inc 248, more than were released).
@stages = internal addrspace(3) global [64 x i32] undef, align 16
define ptx_kernel void @producer_consumer(ptr addrspace(1) %out, i32 %steps, i32 %pcount, i32 %mode) #0 {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %lane = and i32 %t, 31
  %producer = icmp uge i32 %t, 64
  br i1 %producer, label %pstart, label %cstart

pstart:
  call void @llvm.nvvm.setmaxnreg.dec.sync.aligned.u32(i32 40)
  br label %ploop

ploop:
  %pi = phi i32 [ 0, %pstart ], [ %pnext, %pfill ]
  %ps = and i32 %pi, 1
  %first2 = icmp ult i32 %pi, 2
  %nowait = icmp eq i32 %mode, 1
  %skip = or i1 %nowait, %first2
  br i1 %skip, label %pfill, label %pwait

pwait:
  %empty = add i32 %ps, 3
  call void @llvm.nvvm.barrier.cta.sync.aligned.count(i32 %empty, i32 96)
  br label %pfill

pfill:
  %pv0 = mul i32 %pi, 100
  %pv = add i32 %pv0, %lane
  %pslot0 = mul i32 %ps, 32
  %pslot = add i32 %pslot0, %lane
  %pp = getelementptr [64 x i32], ptr addrspace(3) @stages, i32 0, i32 %pslot
  store i32 %pv, ptr addrspace(3) %pp
  %full = add i32 %ps, 1
  call void @llvm.nvvm.barrier.cta.arrive.aligned.count(i32 %full, i32 %pcount)
  %pnext = add i32 %pi, 1
  %pmore = icmp ult i32 %pnext, %steps
  br i1 %pmore, label %ploop, label %done

cstart:
  %greedy = icmp eq i32 %mode, 2
  br i1 %greedy, label %cgreedy, label %cmodest

cgreedy:
  call void @llvm.nvvm.setmaxnreg.inc.sync.aligned.u32(i32 248)
  br label %cloop

cmodest:
  call void @llvm.nvvm.setmaxnreg.inc.sync.aligned.u32(i32 200)
  br label %cloop

cloop:
  %ci = phi i32 [ 0, %cgreedy ], [ 0, %cmodest ], [ %cnext, %cloop ]
  %sum = phi i32 [ 0, %cgreedy ], [ 0, %cmodest ], [ %sum2, %cloop ]
  %cs = and i32 %ci, 1
  %cfull = add i32 %cs, 1
  call void @llvm.nvvm.barrier.cta.sync.aligned.count(i32 %cfull, i32 96)
  %cslot0 = mul i32 %cs, 32
  %cslot = add i32 %cslot0, %lane
  %cp = getelementptr [64 x i32], ptr addrspace(3) @stages, i32 0, i32 %cslot
  %cv = load i32, ptr addrspace(3) %cp
  %sum2 = add i32 %sum, %cv
  %cempty = add i32 %cs, 3
  call void @llvm.nvvm.barrier.cta.arrive.aligned.count(i32 %cempty, i32 96)
  %cnext = add i32 %ci, 1
  %cmore = icmp ult i32 %cnext, %steps
  br i1 %cmore, label %cloop, label %cout

cout:
  %q = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %sum2, ptr addrspace(1) %q
  br label %done

done:
  ret void
}

; wgmma m64n16k16 with both operands in shared memory. Thread t copies words
; 4t..4t + 3 of %a (A, 64 x 16 bf16: 8-row groups 256 bytes apart, its two
; K-adjacent core matrices 128 apart) to shared byte 16t, and word t of %b
; (B as @wgmma's) to shared byte 2048 + 4t; d[8t + e] receives D element e
; of A x B. %mode 1: A's last row group is never written.
@operands = internal addrspace(3) global [640 x i32] undef, align 16
define ptx_kernel void @wgmma_shared_a(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %d, i32 %mode) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %lastgroup = icmp uge i32 %t, 112
  %m1 = icmp eq i32 %mode, 1
  %hole = and i1 %lastgroup, %m1
  br i1 %hole, label %copyb, label %copya

copya:
  %aw = mul i32 %t, 4
  %ap = getelementptr i32, ptr addrspace(1) %a, i32 %aw
  %av = load <4 x i32>, ptr addrspace(1) %ap, align 16
  %sa = getelementptr [640 x i32], ptr addrspace(3) @operands, i32 0, i32 %aw
  store <4 x i32> %av, ptr addrspace(3) %sa, align 16
  br label %copyb

copyb:
  %bp = getelementptr i32, ptr addrspace(1) %b, i32 %t
  %bw = load i32, ptr addrspace(1) %bp
  %bi = add i32 %t, 512
  %sb = getelementptr [640 x i32], ptr addrspace(3) @operands, i32 0, i32 %bi
  store i32 %bw, ptr addrspace(3) %sb
  call void @llvm.nvvm.fence.proxy.async.shared_cta()
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %base = ptrtoint ptr addrspace(3) @operands to i64
  %base4 = lshr i64 %base, 4
  %astart = and i64 %base4, 16383
  %desca = or i64 %astart, 68720001024
  %bstart = add i64 %astart, 128
  %descb = or i64 %bstart, 34360786944
  call void @llvm.nvvm.wgmma.fence.sync.aligned()
  %r = call { float, float, float, float, float, float, float, float } asm sideeffect "{\0A.reg .pred p;\0Asetp.ne.b32 p, $18, 0;\0Awgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {$0, $1, $2, $3, $4, $5, $6, $7}, $16, $17, p, 1, 1, 0, 0;\0A}", "=f,=f,=f,=f,=f,=f,=f,=f,0,1,2,3,4,5,6,7,l,l,r"(float 0.0, float 0.0, float 0.0, float 0.0, float 0.0, float 0.0, float 0.0, float 0.0, i64 %desca, i64 %descb, i32 0)
  call void @llvm.nvvm.wgmma.commit_group.sync.aligned()
  call void @llvm.nvvm.wgmma.wait_group.sync.aligned(i64 0)
  %ob = mul i32 %t, 8
  %op = getelementptr float, ptr addrspace(1) %d, i32 %ob
  %d0 = extractvalue { float, float, float, float, float, float, float, float } %r, 0
  %d1 = extractvalue { float, float, float, float, float, float, float, float } %r, 1
  %d2 = extractvalue { float, float, float, float, float, float, float, float } %r, 2
  %d3 = extractvalue { float, float, float, float, float, float, float, float } %r, 3
  %d4 = extractvalue { float, float, float, float, float, float, float, float } %r, 4
  %d5 = extractvalue { float, float, float, float, float, float, float, float } %r, 5
  %d6 = extractvalue { float, float, float, float, float, float, float, float } %r, 6
  %d7 = extractvalue { float, float, float, float, float, float, float, float } %r, 7
  %v0 = insertelement <8 x float> poison, float %d0, i32 0
  %v1 = insertelement <8 x float> %v0, float %d1, i32 1
  %v2 = insertelement <8 x float> %v1, float %d2, i32 2
  %v3 = insertelement <8 x float> %v2, float %d3, i32 3
  %v4 = insertelement <8 x float> %v3, float %d4, i32 4
  %v5 = insertelement <8 x float> %v4, float %d5, i32 5
  %v6 = insertelement <8 x float> %v5, float %d6, i32 6
  %v7 = insertelement <8 x float> %v6, float %d7, i32 7
  store <8 x float> %v7, ptr addrspace(1) %op, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.laneid()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.shfl.sync.idx.i32(i32, i32, i32, i32)
declare { i32, i1 } @llvm.nvvm.shfl.sync.up.i32p(i32, i32, i32, i32)
declare float @llvm.nvvm.shfl.sync.bfly.f32(i32, float, i32, i32)
declare i32 @llvm.nvvm.shfl.sync.down.i32(i32, i32, i32, i32)
declare i32 @llvm.nvvm.vote.ballot.sync(i32, i1)
declare i32 @llvm.nvvm.prmt(i32, i32, i32)
declare { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.bf16(i32, i32, i32, i32, i32, i32, float, float, float, float)
declare void @llvm.nvvm.cp.async.ca.shared.global.8(ptr addrspace(3), ptr addrspace(1))
declare void @llvm.nvvm.cp.async.ca.shared.global.8.s(ptr addrspace(3), ptr addrspace(1), i32)
declare void @llvm.nvvm.cp.async.cg.shared.global.16(ptr addrspace(3), ptr addrspace(1))
declare void @llvm.nvvm.cp.async.commit.group()
declare void @llvm.nvvm.cp.async.wait.group(i32 immarg)
declare void @llvm.nvvm.barrier.cta.sync.aligned.count(i32, i32)
declare i1 @llvm.nvvm.barrier.cta.red.or.aligned.all(i32, i1)
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)
declare void @llvm.nvvm.fence.proxy.async.shared_cta()
declare void @llvm.nvvm.wgmma.fence.sync.aligned()
declare void @llvm.nvvm.wgmma.commit_group.sync.aligned()
declare void @llvm.nvvm.wgmma.wait_group.sync.aligned(i64 immarg)
declare void @llvm.nvvm.barrier.cta.arrive.aligned.count(i32, i32)
declare void @llvm.nvvm.setmaxnreg.inc.sync.aligned.u32(i32 immarg)
declare void @llvm.nvvm.setmaxnreg.dec.sync.aligned.u32(i32 immarg)

attributes #0 = { "nvvm.maxnreg"="168" }
