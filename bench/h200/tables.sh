# Sourced by prefill.sh and run-on-device.sh: sets table_args to --table for each sm_90a tuned
# table the bench takes its schedules from: the space-separated TABLES when set (TABLES= for
# none, the specs' own schedules), else data/sm90a/*_tuned_fmoe.csv under the root $1.
sm90a_table_args() {
  local tables t
  if [ -n "${TABLES+set}" ]; then
    read -ra tables <<<"$TABLES"
  else
    tables=("$1"/data/sm90a/*_tuned_fmoe.csv)
  fi
  table_args=()
  for t in "${tables[@]}"; do
    if [ -f "$t" ]; then table_args+=(--table "$t"); fi
  done
}
