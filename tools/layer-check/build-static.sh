#!/usr/bin/env bash
# Builds moegen-layer-check, moegen-tune-device, moegen-bench-h200 and
# moegen-cuda-check for a GPU machine: the moegen CMake project in its static configuration
# (MOEGEN_STATIC_DEVICE_TOOLS=ON: the MLIR-free targets only, the same sources
# and build id as the regular build, LLVM's support library and libstdc++
# linked statically), then checks that each binary needs nothing but glibc.
# With MOEGEN_BIN (a moegen of the regular build) it also checks that they
# print the same build id: the tools read only caches that this moegen filled.
#
#   tools/layer-check/build-static.sh BUILD_DIR      # prints BUILD_DIR/bin/moegen-layer-check,
#                                                    # BUILD_DIR/bin/moegen-tune-device,
#                                                    # BUILD_DIR/bin/moegen-bench-h200 and
#                                                    # BUILD_DIR/bin/moegen-cuda-check
#
# Environment: MOEGEN_LLVM_ROOT (default /usr/lib/llvm-22), CXX / CC (default clang++-22 /
# clang-22), JOBS (default: all cores), MOEGEN_BIN.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:?usage: build-static.sh BUILD_DIR}
llvm=${MOEGEN_LLVM_ROOT:-/usr/lib/llvm-22}
if [ ! -f "$out/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$out" -DMOEGEN_STATIC_DEVICE_TOOLS=ON \
    -DCMAKE_BUILD_TYPE=Release -DMOEGEN_LLVM_ROOT="$llvm" \
    -DCMAKE_CXX_COMPILER="${CXX:-clang++-22}" -DCMAKE_C_COMPILER="${CC:-clang-22}" \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld >/dev/null
fi
ninja -C "$out" -j "${JOBS:-$(nproc)}" moegen-layer-check moegen-tune-device moegen-bench-h200 \
  moegen-cuda-check >&2

for tool in moegen-layer-check moegen-tune-device moegen-bench-h200 moegen-cuda-check; do
  bin=$out/bin/$tool
  # Only glibc's libraries (and its loader) may be needed at run time.
  needed=$("$llvm/bin/llvm-readelf" -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  for lib in $needed; do
    case "$lib" in
      libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | ld-linux*) ;;
      *) echo "build-static.sh: $bin needs $lib (only glibc is allowed)" >&2; exit 1 ;;
    esac
  done
  # moegen-cuda-check reads PTX, not a cache: it has no build id to agree on.
  if [ -n "${MOEGEN_BIN:-}" ] && [ "$tool" != moegen-cuda-check ]; then
    want=$("$MOEGEN_BIN" --version | sed -n 's/.*(build \(.*\)).*/\1/p')
    got=$("$bin" --version | sed -n 's/.*(build \(.*\)).*/\1/p')
    if [ -z "$want" ] || [ "$want" != "$got" ]; then
      echo "build-static.sh: build id '$got' differs from $MOEGEN_BIN's '$want'" >&2
      exit 1
    fi
  fi
  echo "$bin"
done
