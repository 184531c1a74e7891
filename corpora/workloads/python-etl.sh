#!/usr/bin/env bash
# Python data-processing job (stdlib only): synthetic orders -> CSV -> parse ->
# group-by aggregation -> JSON reports, keeping recent rounds in memory.
source "$(dirname "$0")/common.sh"
PY="$(command -v python3)"
cold_args python-etl
"$CANNERY" capture --label python-etl --out "$(out_file python-etl)" "${CAPTURE_FLAGS[@]}" "${COLD_ARGS[@]}" \
  --count 6 --interval 10s --log "$WORK/log" -- "$PY" "$REPO/corpora/workloads/python-etl.py" 120
