#!/usr/bin/env bash
# The H200 run: the torch baseline first, then moegen-bench-h200 with the
# baseline's column; prints both and keeps them under $OUT (when set, as the
# device tool sets it) or ./h200-out.
#
#   bench/h200/run-on-device.sh CACHE_DIR BENCH_BIN [moegen-bench-h200 options...]
#
# CACHE_DIR: filled by bench/h200/prefill.sh with the moegen whose build id
# BENCH_BIN has (BENCH_BIN: tools/layer-check/build-static.sh's
# moegen-bench-h200). Run from the repository root. Environment: TOKENS
# (comma-separated token counts, default all ten), TORCH_ARGS (more
# torch_baseline.py options), NO_TORCH=1 (skip the baseline), TABLES (space-separated
# sm_90a tuned tables the bench takes its schedules from; default data/sm90a/*_tuned_fmoe.csv,
# TABLES= for the specs' own schedules; prefill.sh must have had the same).
set -uo pipefail

cache=${1:?usage: run-on-device.sh CACHE_DIR BENCH_BIN [options...]}
bench=${2:?usage: run-on-device.sh CACHE_DIR BENCH_BIN [options...]}
shift 2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${OUT:-$PWD/h200-out}
mkdir -p "$out"
tokens=${TOKENS:-1,4,16,64,256,1024,2048,4096,8192,16384}
[ -d "$cache" ] || { echo "run-on-device.sh: no cache directory '$cache'" >&2; exit 1; }
[ -x "$bench" ] || { echo "run-on-device.sh: '$bench' is not an executable" >&2; exit 1; }

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>/dev/null
"$bench" --version
start=$SECONDS

# shellcheck source=tables.sh
source "$here/tables.sh"
sm90a_table_args "$here/../.."

baseline=()
if [ "${NO_TORCH:-0}" != 1 ]; then
  # shellcheck disable=SC2086 # TORCH_ARGS is a list of options
  if python3 "$here/torch_baseline.py" --tokens "$tokens" ${TORCH_ARGS:-} >"$out/torch.csv"; then
    baseline=(--baseline "$out/torch.csv")
    cat "$out/torch.csv"
  else
    echo "run-on-device.sh: the torch baseline failed; the bench runs without its column" >&2
  fi
  echo "torch baseline: $((SECONDS - start)) s"
fi

"$bench" --cache "$cache" --tokens "$tokens" "${baseline[@]}" "${table_args[@]}" "$@" |
  tee "$out/bench.md"
rc=${PIPESTATUS[0]}
echo "run-on-device.sh: $((SECONDS - start)) s in all, bench exit status $rc"
exit "$rc"
