// A scalar integer/float loop per lane (no memory traffic in the loop body):
// out[gid] = sum_{i < n} (float(i ^ gid) * 0.5 + 1).
module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<chip = "gfx950">] {
    gpu.func @scalar_loop(%out: memref<1048576xf32>, %n: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %half = arith.constant 0.5 : f32
      %one = arith.constant 1.0 : f32
      %zero = arith.constant 0.0 : f32
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %base = arith.muli %bid, %bdim : index
      %gid = arith.addi %base, %tid : index
      %g32 = arith.index_cast %gid : index to i32
      %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
        %i32 = arith.index_cast %i : index to i32
        %x = arith.xori %i32, %g32 : i32
        %xf = arith.sitofp %x : i32 to f32
        %m = math.fma %xf, %half, %one : f32
        %a = arith.addf %acc, %m : f32
        scf.yield %a : f32
      }
      memref.store %s, %out[%gid] : memref<1048576xf32>
      gpu.return
    }
  }
}
