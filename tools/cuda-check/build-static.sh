#!/usr/bin/env bash
# Builds moegen-cuda-check linked against the static LLVM support libraries
# only (no libLLVM.so / libMLIR.so, which are large and need Debian's shared
# libraries on the GPU machine), for x86-64 Linux with
# glibc 2.36 or later.
#
#   tools/cuda-check/build-static.sh OUT_DIR
#
# Environment: MOEGEN_LLVM_ROOT (default /usr/lib/llvm-22), CXX (default clang++-22).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:?usage: build-static.sh OUT_DIR}
llvm=${MOEGEN_LLVM_ROOT:-/usr/lib/llvm-22}
cxx=${CXX:-clang++-22}
mkdir -p "$out/obj"

sources=(
  tools/cuda-check/CudaCheck.cpp tools/cuda-check/GemmCheck.cpp tools/cuda-check/SortCheck.cpp
  runtime/api/FamilyLaunchers.cpp
  runtime/cuda/CudaApi.cpp runtime/cuda/CudaBackend.cpp runtime/backend/Backend.cpp
  compiler/spec/Expr.cpp compiler/spec/Builtins.cpp compiler/spec/Spec.cpp
  compiler/spec/DslLexer.cpp compiler/spec/DslParser.cpp compiler/spec/DslPrinter.cpp
  compiler/spec/InputFile.cpp compiler/spec/TargetInfo.cpp compiler/spec/KernelFamily.cpp
  templates/quant/QuantPlan.cpp templates/reduce/ReducePlan.cpp templates/gemm/GemmPlan.cpp
  templates/gemm/Sm90GemmPlan.cpp templates/sort/SortPlan.cpp templates/finish/FinishPlan.cpp
  templates/LayerPlan.cpp templates/TargetSupport.cpp
  runtime/numerics/Formats.cpp runtime/numerics/Tensor.cpp runtime/numerics/MxQuant.cpp
  runtime/numerics/Preshuffle.cpp runtime/numerics/Sorting.cpp runtime/numerics/Compare.cpp
  runtime/numerics/StageTolerance.cpp runtime/numerics/Reference.cpp
  runtime/numerics/InputGen.cpp runtime/numerics/KernelLayouts.cpp
  runtime/numerics/ExpertSubset.cpp
)
objects=()
for s in "${sources[@]}"; do
  o="$out/obj/$(echo "$s" | tr / _).o"
  objects+=("$o")
  # The object takes the source's time from before the compile, so an edit made during
  # the compile still makes the source newer.
  if [ ! -f "$o" ] || [ "$root/$s" -nt "$o" ]; then
    t=$(stat -c %.9Y "$root/$s")
    "$cxx" -std=c++20 -O2 -DNDEBUG -I"$root" -I"$llvm/include" -c "$root/$s" -o "$o.tmp"
    touch -d "@$t" "$o.tmp"
    mv "$o.tmp" "$o"
  fi
done
"$cxx" -fuse-ld=lld -o "$out/moegen-cuda-check" "${objects[@]}" \
  "$llvm/lib/libLLVMSupport.a" "$llvm/lib/libLLVMDemangle.a" \
  -Wl,-Bstatic -lz -lzstd -Wl,-Bdynamic -static-libstdc++ -static-libgcc -ldl -lpthread -lm
echo "$out/moegen-cuda-check"
