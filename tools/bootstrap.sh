#!/usr/bin/env bash
# Installs what moegen needs (Debian 12 packages), builds it, and runs either
# the main job or the tests.
#
#   tools/bootstrap.sh run    build, then compile the Kimi-K3 TP8 a4w4 example for gfx950
#   tools/bootstrap.sh test   build, then run every test (lit suite and unit tests)
#   tools/bootstrap.sh build  build only
#
# Environment: BUILD_DIR (default: build), JOBS (default: all cores).
set -euo pipefail

mode=${1:-run}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
jobs=${JOBS:-$(nproc)}

packages=(
  cmake ninja-build ccache python3
  clang-22 lld-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools liblld-22-dev
  zlib1g-dev libzstd-dev libgtest-dev libbenchmark-dev
)

install_missing() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "bootstrap: installing ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -ne 0 ] && sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}"
}

configure_and_build() {
  local llvm=/usr/lib/llvm-22
  if [ ! -f "$build/build.ninja" ]; then
    cmake -G Ninja -S "$root" -B "$build" \
      -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
      -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld \
      -DMOEGEN_LLVM_ROOT="$llvm"
  fi
  ninja -C "$build" -j "$jobs"
}

case "$mode" in
  run)
    install_missing
    configure_and_build
    "$build/bin/moegen" compile "$root/examples/kimi_k3_tp8_a4w4.moe" -o "$build/kernels"
    ;;
  test)
    install_missing
    configure_and_build
    ctest --test-dir "$build" --output-on-failure -j "$jobs"
    ;;
  build)
    install_missing
    configure_and_build
    ;;
  *)
    echo "usage: $0 run|test|build" >&2
    exit 2
    ;;
esac
