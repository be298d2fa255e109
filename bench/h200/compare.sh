#!/usr/bin/env bash
# Compares sets of sm_90a tuned tables, or builds of moegen, in the H200
# bench, the way the tables' rows and the kernels' changes are chosen
# (data/sm90a/README.md, bench/README.md): every set in one run, in rounds
# whose order alternates (set 1 first, then last first), and a report of each
# set's times per layer and token count against the first set's.
#
#   bench/h200/compare.sh prefill CACHE_DIR SET...        # here, with moegen (MOEGEN_BIN)
#   bench/h200/compare.sh run CACHE_DIR BENCH_BIN SET... [-- moegen-bench-h200 options...]
#   bench/h200/compare.sh pack BUILD_DIR BENCH_BIN [SET]  # here, with moegen (MOEGEN_BIN)
#   bench/h200/compare.sh run-builds BUILD... [-- moegen-bench-h200 options...]
#
# SET: a directory of sm_90a tuned tables (*_tuned_fmoe.csv), e.g. data/sm90a
# and a copy with some rows changed. prefill fills the cache one set at a
# time: given together, a later table's row of the same key would be hidden
# by the first one (MoeLayer keeps the first, and prefill compiles what it
# runs). run (on the GPU machine, from the repository root) runs
# run-on-device.sh without the torch baseline for each set and round, keeps
# each run under $OUT/round<R>/set<I>/, and writes the report to
# $OUT/compare.md (bench/h200/compare.py).
#
# pack makes BUILD_DIR (new or empty) one build's side of a comparison:
# BENCH_BIN (tools/layer-check/build-static.sh's static moegen-bench-h200,
# which must have MOEGEN_BIN's build id), the tables of SET (default
# data/sm90a) under tables/, and cache/ prefilled with them by MOEGEN_BIN.
# run-builds benches each BUILD (such a directory, or a .tar.xz of one, which
# it unpacks under a temporary directory: tar cJf B.tar.xz -C PARENT B) with
# its own binary, cache and tables, as run does sets of tables, and names each
# by its directory.
#
# Environment: ROUNDS (default 2), TOKENS (as run-on-device.sh), THRESHOLD
# (percent, default 1), OUT (default ./h200-out); SPECS and MOEGEN_BIN (as
# prefill.sh). The exit status is 1 when a run failed (a check, a missing
# kernel), after the report.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usage() {
  echo "usage: compare.sh prefill CACHE_DIR SET... | run CACHE_DIR BENCH_BIN SET... [-- options]" \
    "| pack BUILD_DIR BENCH_BIN [SET] | run-builds BUILD... [-- options]" >&2
  exit 2
}
tables_of() {
  local t=("$1"/*_tuned_fmoe.csv)
  [ -f "${t[0]}" ] || { echo "compare.sh: no *_tuned_fmoe.csv in '$1'" >&2; exit 1; }
  echo "${t[*]}"
}
build_id() {
  "$1" --version 2>/dev/null | sed -n 's/.*(build \(.*\)).*/\1/p' | head -n 1
}

# Benches set i = 0.. (names[i], caches[i], benches[i], tables[i]) in ROUNDS
# alternating rounds, then reports them; opts: moegen-bench-h200's options.
names=() caches=() benches=() tables=() opts=()
bench_rounds() {
  local rounds=${ROUNDS:-2} out=${OUT:-$PWD/h200-out} failed=0 r i dir rc
  [[ "$rounds" =~ ^[1-9][0-9]?$ ]] || { echo "compare.sh: ROUNDS '$rounds': 1 to 99" >&2; exit 2; }
  local -A files
  for ((r = 1; r <= rounds; r++)); do
    local order=("${!names[@]}")
    if ((r % 2 == 0)); then
      order=()
      for ((i = ${#names[@]} - 1; i >= 0; i--)); do order+=("$i"); done
    fi
    for i in "${order[@]}"; do
      dir=$out/round$r/set$((i + 1))
      mkdir -p "$dir"
      echo "compare.sh: round $r, ${names[$i]}"
      NO_TORCH=1 TABLES="${tables[$i]}" OUT="$dir" "$here/run-on-device.sh" "${caches[$i]}" \
        "${benches[$i]}" "${opts[@]}" >"$dir/run.log" 2>&1
      rc=$?
      if [ $rc -ne 0 ]; then
        echo "compare.sh: round $r of ${names[$i]} exited $rc ($dir/run.log)" >&2
        failed=1
      fi
      files[$i]=${files[$i]:+${files[$i]},}$dir/bench.md
    done
  done
  local args=()
  for i in "${!names[@]}"; do args+=("${names[$i]}=${files[$i]}"); done
  python3 "$here/compare.py" --threshold "${THRESHOLD:-1}" "${args[@]}" | tee "$out/compare.md"
  [ "${PIPESTATUS[0]}" -eq 0 ] || exit 1
  exit "$failed"
}
# The operands before "--" into `sets`, the rest into `opts`.
split_opts() {
  sets=()
  while [ $# -gt 0 ]; do
    if [ "$1" = -- ]; then
      shift
      opts=("$@")
      return
    fi
    sets+=("$1")
    shift
  done
}

mode=${1:-}
[ $# -ge 2 ] || usage
shift
case "$mode" in
prefill)
  [ $# -ge 2 ] || usage
  cache=$1
  shift
  for set in "$@"; do
    list=$(tables_of "$set") || exit 1
    echo "compare.sh: prefilling the set $set"
    TABLES="$list" "$here/prefill.sh" "$cache" || exit 1
  done
  ;;
run)
  [ $# -ge 3 ] || usage
  cache=$1 bench=$2
  shift 2
  split_opts "$@"
  [ ${#sets[@]} -ge 1 ] || usage
  for set in "${sets[@]}"; do
    list=$(tables_of "$set") || exit 1
    names+=("$set") caches+=("$cache") benches+=("$bench") tables+=("$list")
  done
  bench_rounds
  ;;
pack)
  if [ $# -lt 2 ] || [ $# -gt 3 ]; then usage; fi
  dir=$1 bench=$2 set=${3:-$here/../../data/sm90a}
  moegen=${MOEGEN_BIN:-$here/../../build/bin/moegen}
  [ -x "$bench" ] || { echo "compare.sh: '$bench' is not an executable" >&2; exit 1; }
  want=$(build_id "$moegen") got=$(build_id "$bench")
  [ -n "$want" ] || { echo "compare.sh: '$moegen' prints no build id (MOEGEN_BIN)" >&2; exit 1; }
  if [ "$got" != "$want" ]; then
    echo "compare.sh: $bench has build id '$got', $moegen '$want': its cache would not serve it" >&2
    exit 1
  fi
  if [ -e "$dir" ] && [ -n "$(ls -A "$dir")" ]; then
    echo "compare.sh: '$dir' is not empty; pack makes a new build directory" >&2
    exit 1
  fi
  list=$(tables_of "$set") || exit 1
  read -ra files <<<"$list"
  mkdir -p "$dir/tables" && cp "$bench" "$dir/moegen-bench-h200" && cp "${files[@]}" "$dir/tables/" ||
    exit 1
  TABLES="$(tables_of "$dir/tables")" MOEGEN_BIN=$moegen "$here/prefill.sh" "$dir/cache" || exit 1
  echo "compare.sh: packed build $want with the tables of $set in $dir"
  ;;
run-builds)
  split_opts "$@"
  [ ${#sets[@]} -ge 1 ] || usage
  unpacked=$(mktemp -d "${TMPDIR:-/tmp}/compare-builds.XXXXXX") || exit 1
  trap 'rm -rf "$unpacked"' EXIT
  for build in "${sets[@]}"; do
    name=$(basename "$build" .tar.xz) dir=$build
    if [[ "$build" == *.tar.xz ]]; then
      mkdir -p "$unpacked/${#names[@]}"
      tar xJf "$build" -C "$unpacked/${#names[@]}" || {
        echo "compare.sh: cannot unpack '$build'" >&2
        exit 1
      }
      dir=$unpacked/${#names[@]}/$name
    fi
    for part in moegen-bench-h200 cache tables; do
      [ -e "$dir/$part" ] || { echo "compare.sh: build '$build' has no $part (compare.sh pack)" >&2; exit 1; }
    done
    list=$(tables_of "$dir/tables") || exit 1
    names+=("$name") caches+=("$dir/cache") benches+=("$dir/moegen-bench-h200") tables+=("$list")
  done
  bench_rounds
  ;;
*)
  usage
  ;;
esac
