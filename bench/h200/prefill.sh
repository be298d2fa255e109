#!/usr/bin/env bash
# Fills a kernel cache with the sm_90a kernels of the layers moegen-bench-h200
# times by default (bench/h200/Plan.cpp), for a GPU machine without the
# compiler, and prints its size. The cache must come from the moegen build
# whose build id the static moegen-bench-h200 has (tools/layer-check/build-static.sh
# with MOEGEN_BIN checks it).
#
#   bench/h200/prefill.sh CACHE_DIR      # MOEGEN_BIN: the moegen to use (default build/bin/moegen)
#
# With the kernels of every row of the sm_90a tuned tables (data/sm90a/*_tuned_fmoe.csv,
# or the space-separated TABLES; TABLES= for none), which run-on-device.sh hands to the bench.
# SPECS (space-separated paths) replaces the five layers.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=${1:?usage: prefill.sh CACHE_DIR}
moegen=${MOEGEN_BIN:-$root/build/bin/moegen}
specs=("$root"/examples/kimi_k3_tp8_a16w4.moe "$root"/examples/kimi_k3_tp8_a4w4.moe
       "$root"/examples/kimi_k3_tp8_a8w4.moe "$root"/bench/h200/deepseek_v3_tp8_e256_a16w4.moe
       "$root"/bench/h200/deepseek_v3_tp8_e256_a4w4.moe)
if [ -n "${SPECS:-}" ]; then
  read -ra specs <<<"$SPECS"
fi
args=()
for s in "${specs[@]}"; do
  args+=(--spec "$s")
done
# shellcheck source=tables.sh
source "$root/bench/h200/tables.sh"
sm90a_table_args "$root"
"$moegen" cache prefill --target sm_90a --cu-num 132 "${args[@]}" "${table_args[@]}" --dir "$dir"
du -sh "$dir"
