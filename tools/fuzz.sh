#!/usr/bin/env bash
# Builds the libFuzzer targets (test/fuzz) with clang-22 in build-fuzz and runs
# each for N seconds on a copy of its corpus (test/fuzz/corpus/<target>).
#
#   tools/fuzz.sh [seconds-per-target] [target...]     (default: 60 s, every target)
#
# A crash, abort, sanitizer report, leak or timeout is saved into the target's
# corpus directory as crash-<sha1> (crash-leak-<sha1>, crash-timeout-...) (commit it with the fix: ctest
# replays the corpus) and makes the script exit non-zero. New coverage-adding
# inputs stay in the scratch copy (build-fuzz/corpus-run) and are not kept.
#
# Environment: BUILD_DIR (default: build-fuzz), JOBS (default: all cores),
# FUZZ_ARGS (extra libFuzzer flags, e.g. "-jobs=2 -workers=2").
set -uo pipefail

seconds=${1:-60}
shift $(( $# > 0 ? 1 : 0 ))
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build-fuzz}
jobs=${JOBS:-$(nproc)}
corpus=$root/test/fuzz/corpus
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(moegen-fuzz-dsl moegen-fuzz-tuned-csv moegen-fuzz-npy
                                     moegen-fuzz-json moegen-fuzz-code-object
                                     moegen-fuzz-tune-journal moegen-fuzz-tune-manifest
                                     moegen-fuzz-ptx-grid-wait)

if [ ! -d /usr/lib/llvm-22/lib/clang/22/lib ]; then
  echo "fuzz.sh: the libFuzzer/ASan runtimes are missing: apt-get install libclang-rt-22-dev" \
       "(tools/bootstrap.sh sanitize installs it)" >&2
  exit 1
fi
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld \
    -DMOEGEN_ENABLE_FUZZ=ON -DMOEGEN_ENABLE_MLIR=OFF -DMOEGEN_ENABLE_TESTS=OFF \
    -DMOEGEN_LLVM_ROOT=/usr/lib/llvm-22 || exit 1
fi
ninja -C "$build" -j "$jobs" "${targets[@]}" || exit 1

failed=()
for t in "${targets[@]}"; do
  work=$build/corpus-run/$t
  artifacts=$build/artifacts/$t
  rm -rf "$artifacts"
  mkdir -p "$work" "$artifacts"
  cp -f "$corpus/$t"/* "$work"/ 2>/dev/null
  echo "fuzz.sh: $t for ${seconds}s"
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$build/bin/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
      -max_len=65536 -print_final_stats=1 -artifact_prefix="$artifacts/" ${FUZZ_ARGS:-} \
      "$work" > "$build/artifacts/$t.log" 2>&1
  rc=$?
  grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::new_units_added)' \
    "$build/artifacts/$t.log" | sed "s|^|  |"
  found=0
  for a in "$artifacts"/*; do
    [ -f "$a" ] || continue
    found=1
    name=$(basename "$a")            # crash-<sha1>, leak-..., timeout-..., oom-...
    kind=${name%%-*}
    case $name in crash-*) dest=$corpus/$t/$name ;; *) dest=$corpus/$t/crash-$name ;; esac
    cp "$a" "$dest"
    echo "fuzz.sh: $t: $kind, reproducer saved as ${dest#$root/}" >&2
    echo "  replay: $build/bin/$t $dest  (log: $build/artifacts/$t.log)" >&2
  done
  if [ $rc -ne 0 ] || [ $found -ne 0 ]; then
    [ $found -eq 0 ] && echo "fuzz.sh: $t exited with $rc (log: $build/artifacts/$t.log)" >&2
    failed+=("$t")
  fi
done

if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz.sh: FAILED: ${failed[*]}; fix, then keep the reproducers in the corpus" >&2
  exit 1
fi
echo "fuzz.sh: no crash in ${targets[*]} (${seconds}s each)"
