// One-wave bf16 GEMM main loop: C(16x16) += A(16xK) * B(Kx16), K step 32.
// A fragments come straight from global memory; B tiles go global -> LDS
// (gather_to_lds), then ds_read_b64_tr_b16 transposes them into the MFMA
// B layout.
#lds = #gpu.address_space<workgroup>
#fat = #amdgpu.address_space<fat_raw_buffer>
module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<chip = "gfx950">] {
    gpu.func @bf16_gemm(%a: memref<16x4096xbf16>, %b: memref<4096x16xbf16>,
                        %c: memref<16x16xf32>, %kIters: index)
        workgroup(%lb: memref<32x16xbf16, #lds>)
        kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c16 = arith.constant 16 : index
      %c32 = arith.constant 32 : index
      %tid = gpu.thread_id x
      %row = arith.remui %tid, %c16 : index
      %grp = arith.divui %tid, %c16 : index
      %kofs = arith.muli %grp, %c8 : index
      %brow = arith.divui %tid, %c2 : index
      %bpar = arith.remui %tid, %c2 : index
      %bcol = arith.muli %bpar, %c8 : index
      %sq = arith.divui %row, %c4 : index
      %trow0 = arith.addi %kofs, %sq : index
      %trow1 = arith.addi %trow0, %c4 : index
      %sr = arith.remui %row, %c4 : index
      %tcol = arith.muli %sr, %c4 : index
      %fb = amdgpu.fat_raw_buffer_cast %b resetOffset : memref<4096x16xbf16> to memref<4096x16xbf16, #fat>
      %acc0 = arith.constant dense<0.0> : vector<4xf32>
      %res = scf.for %kk = %c0 to %kIters step %c1 iter_args(%acc = %acc0) -> (vector<4xf32>) {
        %kb = arith.muli %kk, %c32 : index
        %ka = arith.addi %kb, %kofs : index
        %av = vector.load %a[%row, %ka] : memref<16x4096xbf16>, vector<8xbf16>
        %gr = arith.addi %kb, %brow : index
        amdgpu.gather_to_lds %fb[%gr, %bcol], %lb[%c0, %c0] : vector<8xbf16>, memref<4096x16xbf16, #fat>, memref<32x16xbf16, #lds>
        amdgpu.memory_counter_wait load(0)
        amdgpu.lds_barrier
        %b0 = amdgpu.transpose_load %lb[%trow0, %tcol] : memref<32x16xbf16, #lds> -> vector<4xbf16>
        %b1 = amdgpu.transpose_load %lb[%trow1, %tcol] : memref<32x16xbf16, #lds> -> vector<4xbf16>
        %bv = vector.shuffle %b0, %b1 [0, 1, 2, 3, 4, 5, 6, 7] : vector<4xbf16>, vector<4xbf16>
        %d = amdgpu.mfma 16x16x32 %av * %bv + %acc blgp = none : vector<8xbf16>, vector<8xbf16>, vector<4xf32>
        amdgpu.lds_barrier
        scf.yield %d : vector<4xf32>
      }
      %r0 = arith.muli %grp, %c4 : index
      %r1 = arith.addi %r0, %c1 : index
      %r2 = arith.addi %r0, %c2 : index
      %r3 = arith.addi %r0, %c3 : index
      %e0 = vector.extract %res[0] : f32 from vector<4xf32>
      %e1 = vector.extract %res[1] : f32 from vector<4xf32>
      %e2 = vector.extract %res[2] : f32 from vector<4xf32>
      %e3 = vector.extract %res[3] : f32 from vector<4xf32>
      memref.store %e0, %c[%r0, %row] : memref<16x16xf32>
      memref.store %e1, %c[%r1, %row] : memref<16x16xf32>
      memref.store %e2, %c[%r2, %row] : memref<16x16xf32>
      memref.store %e3, %c[%r3, %row] : memref<16x16xf32>
      gpu.return
    }
  }
}
