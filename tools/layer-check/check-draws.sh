#!/usr/bin/env bash
# Checks every layer of a `moegen draw` directory with moegen-layer-check: each
# spec of DIR/draws.txt at its token count and CU count, kernels from DIR/cache
# (filled by the same moegen build as the tool), every stage against the
# reference, the output and workspace poisoned with NaN bytes first (--poison). Prints PASS or FAIL per layer (a failure with the tail of its
# output), then a summary; exits 1 if any layer failed, 2 on bad usage.
#
#   tools/layer-check/check-draws.sh DIR [LAYER_CHECK [ARGS...]]
#
# LAYER_CHECK defaults to moegen-layer-check on PATH; ARGS go to every call
# (--backend emu for gfx950 draws, --backend emu --target sm_90a to run sm_90a
# draws on the emulator; --load-only; --weight-scale 64 ...).
# Environment: TOKENS (token counts for every layer instead of the
# manifest's, e.g. 1,37,256), WRAP (a command put before each call, e.g.
# "compute-sanitizer --tool memcheck --error-exitcode 1"), LOG_DIR (where each
# layer's output is kept, default DIR/logs).
set -uo pipefail

dir=${1:?usage: check-draws.sh DIR [LAYER_CHECK [ARGS...]]}
shift
bin=${1:-moegen-layer-check}
[ $# -gt 0 ] && shift
manifest=$dir/draws.txt
if [ ! -f "$manifest" ]; then
  echo "check-draws.sh: $manifest: no such file (write it with 'moegen draw --out $dir')" >&2
  exit 2
fi
logs=${LOG_DIR:-$dir/logs}
mkdir -p "$logs"
read -r -a wrap <<< "${WRAP:-}"

passed=0
failed=0
while read -r file tokens cus; do
  [ -z "$file" ] && continue
  tokens=${TOKENS:-$tokens}
  log=$logs/${file%.moe}.log
  if "${wrap[@]}" "$bin" "$dir/$file" --cache "$dir/cache" --tokens "$tokens" --cu-num "$cus" \
      --poison "$@" > "$log" 2>&1; then
    passed=$((passed + 1))
    echo "PASS $file ($tokens tokens, $cus CUs)"
  else
    failed=$((failed + 1))
    echo "FAIL $file ($tokens tokens, $cus CUs): $log"
    tail -n 12 "$log" | sed 's/^/  /'
  fi
done < "$manifest"
echo "check-draws: $passed passed, $failed failed of $((passed + failed)) layers in $dir"
[ "$failed" -eq 0 ]
