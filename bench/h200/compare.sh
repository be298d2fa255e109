#!/usr/bin/env bash
# Compares sets of sm_90a tuned tables in the H200 bench, the way the tables'
# rows are chosen (data/sm90a/README.md): every set in one cache and one run,
# in rounds whose order alternates (set 1 first, then last first), and a report
# of each set's times per layer and token count against the first set's.
#
#   bench/h200/compare.sh prefill CACHE_DIR SET...        # here, with moegen (MOEGEN_BIN)
#   bench/h200/compare.sh run CACHE_DIR BENCH_BIN SET... [-- moegen-bench-h200 options...]
#
# SET: a directory of sm_90a tuned tables (*_tuned_fmoe.csv), e.g. data/sm90a
# and a copy with some rows changed. prefill fills the cache one set at a
# time: given together, a later table's row of the same key would be hidden
# by the first one (MoeLayer keeps the first, and prefill compiles what it
# runs). run (on the GPU machine, from the repository root) runs
# run-on-device.sh without the torch baseline for each set and round, keeps
# each run under $OUT/round<R>/set<I>/, and writes the report to
# $OUT/compare.md (bench/h200/compare.py). Environment: ROUNDS (default 2),
# TOKENS (as run-on-device.sh), THRESHOLD (percent, default 1), OUT (default
# ./h200-out). The exit status is 1 when a run failed (a check, a missing
# kernel), after the report.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usage() {
  echo "usage: compare.sh prefill CACHE_DIR SET... | run CACHE_DIR BENCH_BIN SET... [-- options]" >&2
  exit 2
}
tables_of() {
  local t=("$1"/*_tuned_fmoe.csv)
  [ -f "${t[0]}" ] || { echo "compare.sh: no *_tuned_fmoe.csv in '$1'" >&2; exit 1; }
  echo "${t[*]}"
}

mode=${1:-}
[ $# -ge 3 ] || usage
shift
case "$mode" in
prefill)
  cache=$1
  shift
  for set in "$@"; do
    tables=$(tables_of "$set") || exit 1
    echo "compare.sh: prefilling the set $set"
    TABLES="$tables" "$here/prefill.sh" "$cache" || exit 1
  done
  ;;
run)
  [ $# -ge 3 ] || usage
  cache=$1 bench=$2
  shift 2
  sets=() opts=()
  while [ $# -gt 0 ]; do
    if [ "$1" = -- ]; then
      shift
      opts=("$@")
      break
    fi
    sets+=("$1")
    shift
  done
  [ ${#sets[@]} -ge 1 ] || usage
  rounds=${ROUNDS:-2}
  [[ "$rounds" =~ ^[1-9][0-9]?$ ]] || { echo "compare.sh: ROUNDS '$rounds': 1 to 99" >&2; exit 2; }
  out=${OUT:-$PWD/h200-out}
  declare -A tables files
  for i in "${!sets[@]}"; do
    tables[$i]=$(tables_of "${sets[$i]}") || exit 1
  done
  failed=0
  for ((r = 1; r <= rounds; r++)); do
    order=("${!sets[@]}")
    if ((r % 2 == 0)); then
      order=()
      for ((i = ${#sets[@]} - 1; i >= 0; i--)); do order+=("$i"); done
    fi
    for i in "${order[@]}"; do
      dir=$out/round$r/set$((i + 1))
      mkdir -p "$dir"
      echo "compare.sh: round $r, ${sets[$i]}"
      NO_TORCH=1 TABLES="${tables[$i]}" OUT="$dir" "$here/run-on-device.sh" "$cache" "$bench" \
        "${opts[@]}" >"$dir/run.log" 2>&1
      rc=$?
      if [ $rc -ne 0 ]; then
        echo "compare.sh: round $r of ${sets[$i]} exited $rc ($dir/run.log)" >&2
        failed=1
      fi
      files[$i]=${files[$i]:+${files[$i]},}$dir/bench.md
    done
  done
  args=()
  for i in "${!sets[@]}"; do args+=("${sets[$i]}=${files[$i]}"); done
  python3 "$here/compare.py" --threshold "${THRESHOLD:-1}" "${args[@]}" | tee "$out/compare.md"
  [ "${PIPESTATUS[0]}" -eq 0 ] || exit 1
  exit "$failed"
  ;;
*)
  usage
  ;;
esac
