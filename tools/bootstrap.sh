#!/usr/bin/env bash
# Installs what moegen needs (Debian 12 packages), builds it, and runs either
# the main job or the tests.
#
#   tools/bootstrap.sh run    build, then compile the Kimi-K3 TP8 a4w4 example for gfx950
#   tools/bootstrap.sh test   build, then run every test (lit suite and unit tests)
#   tools/bootstrap.sh build  build only
#   tools/bootstrap.sh sanitize
#                             Debug build with assertions and ASan/UBSan in build-asan, then
#                             the unit tests under it (see "Sanitizers and fuzzing" in README.md)
#
# Environment: BUILD_DIR (default: build, or build-asan for sanitize), JOBS (default: all
# cores), MOEGEN_SANITIZE_MLIR=ON to include the MLIR compiler in the sanitize build.
set -euo pipefail

mode=${1:-run}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
default_build=build
[ "$mode" = sanitize ] && default_build=build-asan
build=${BUILD_DIR:-$root/$default_build}
jobs=${JOBS:-$(nproc)}

packages=(
  cmake ninja-build ccache python3
  clang-22 lld-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools liblld-22-dev
  zlib1g-dev libzstd-dev libgtest-dev libbenchmark-dev
)
# The sanitizer and libFuzzer runtimes (sanitize mode, tools/fuzz.sh).
[ "$mode" = sanitize ] && packages+=(libclang-rt-22-dev)

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

# Extra arguments go to the first cmake configure of $build.
configure_and_build() {
  local llvm=/usr/lib/llvm-22
  if [ ! -f "$build/build.ninja" ]; then
    cmake -G Ninja -S "$root" -B "$build" \
      -DCMAKE_BUILD_TYPE=Release \
      "$@" \
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
  sanitize)
    # Debug (no NDEBUG: our assertions are on) at -O1 so the emulator tests stay fast enough,
    # AddressSanitizer (with leak checks) and UndefinedBehaviorSanitizer, any report fatal.
    # LLVM/MLIR are the uninstrumented Debian shared libraries. By default the MLIR compiler is
    # left out (MOEGEN_ENABLE_MLIR=OFF: hours of instrumented MLIR code on few cores), so the
    # spec, dispatch, numerics, cache and emulator tests and the fuzz corpus replays run; with
    # MOEGEN_SANITIZE_MLIR=ON everything is built and the slow kernel suites (layer matrix,
    # schedule properties, tuned schedules, full MoeLayer runs: over 10 minutes under ASan) and
    # the lit suite are skipped. The flags reach the link lines through CMAKE_CXX_FLAGS.
    install_missing
    san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
    configure_and_build -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" \
      -DCMAKE_C_FLAGS_DEBUG="-g -O1" -DCMAKE_CXX_FLAGS="$san" -DCMAKE_C_FLAGS="$san" \
      -DMOEGEN_ENABLE_MLIR="${MOEGEN_SANITIZE_MLIR:-OFF}"
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1 \
    LSAN_OPTIONS=suppressions=$root/test/sanitize/lsan.supp:print_suppressions=0 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir "$build" --output-on-failure -j "$jobs" \
        -E '(LayerMatrix|ScheduleProperty|TunedSchedules|MoeLayerFull)\.|^lit$'
    ;;
  *)
    echo "usage: $0 run|test|build|sanitize" >&2
    exit 2
    ;;
esac
