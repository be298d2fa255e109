// One-wave MXFP4 K loop: D(16x16) = sum over K steps of scaled_mfma 16x16x128
// fp4 x fp4. A and B come as per-lane register images (pre-shuffled in
// global memory), E8M0 scales through raw_buffer_load (byte 1 for A, byte 2
// for B). The epilogue also packs D to fp4 with packed_scaled_trunc.
module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<chip = "gfx950">] {
    gpu.func @mxfp4_loop(%a: memref<65536xi8>, %b: memref<65536xi8>,
                         %sa: memref<16384xi8>, %sb: memref<16384xi8>,
                         %d: memref<256xf32>, %dq: memref<128xi8>, %kIters: index)
        kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c16 = arith.constant 16 : index
      %c256 = arith.constant 256 : index
      %c1024 = arith.constant 1024 : index
      %tid = gpu.thread_id x
      %lane16 = arith.muli %tid, %c16 : index
      %lane4 = arith.muli %tid, %c4 : index
      %acc0 = arith.constant dense<0.0> : vector<4xf32>
      %res = scf.for %kk = %c0 to %kIters step %c1 iter_args(%acc = %acc0) -> (vector<4xf32>) {
        %base = arith.muli %kk, %c1024 : index
        %off = arith.addi %base, %lane16 : index
        %ra = vector.load %a[%off] : memref<65536xi8>, vector<16xi8>
        %rb = vector.load %b[%off] : memref<65536xi8>, vector<16xi8>
        %va = vector.bitcast %ra : vector<16xi8> to vector<32xf4E2M1FN>
        %vb = vector.bitcast %rb : vector<16xi8> to vector<32xf4E2M1FN>
        %sbase = arith.muli %kk, %c256 : index
        %soff = arith.addi %sbase, %lane4 : index
        %si = arith.index_cast %soff : index to i32
        %rsa = amdgpu.raw_buffer_load %sa[%si] : memref<16384xi8>, i32 -> vector<4xi8>
        %rsb = amdgpu.raw_buffer_load %sb[%si] : memref<16384xi8>, i32 -> vector<4xi8>
        %vsa = vector.bitcast %rsa : vector<4xi8> to vector<4xf8E8M0FNU>
        %vsb = vector.bitcast %rsb : vector<4xi8> to vector<4xf8E8M0FNU>
        %r = amdgpu.scaled_mfma 16x16x128 (%vsa[1] * %va) * (%vsb[2] * %vb) + %acc
          : vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf32>
        scf.yield %r : vector<4xf32>
      }
      vector.store %res, %d[%lane4] : memref<256xf32>, vector<4xf32>
      %one = arith.constant 1.0 : f32
      %lo = vector.shuffle %res, %res [0, 1] : vector<4xf32>, vector<4xf32>
      %hi = vector.shuffle %res, %res [2, 3] : vector<4xf32>, vector<4xf32>
      %p0 = amdgpu.packed_scaled_trunc %lo into undef[0], %one : vector<2xf32> to vector<8xf4E2M1FN>
      %p1 = amdgpu.packed_scaled_trunc %hi into %p0[1], %one : vector<2xf32> to vector<8xf4E2M1FN> into vector<8xf4E2M1FN>
      %pb = vector.bitcast %p1 : vector<8xf4E2M1FN> to vector<4xi8>
      %q = vector.shuffle %pb, %pb [0, 1] : vector<4xi8>, vector<4xi8>
      %qoff = arith.muli %tid, %c2 : index
      vector.store %q, %dq[%qoff] : memref<128xi8>, vector<2xi8>
      gpu.return
    }
  }
}
