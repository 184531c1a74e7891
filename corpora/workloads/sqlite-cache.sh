#!/usr/bin/env bash
# Database page cache: the sqlite3 shell (Debian package) with a 600 MB page
# cache, fed SQL through a FIFO by sqlite-load.py (a shop's customers,
# products, orders and click events, with indexes, plus queries over them).
# Most of its memory is table and index b-tree pages: the low-ratio workload.
source "$(dirname "$0")/common.sh"
command -v sqlite3 >/dev/null || { apt-get update -qq && apt-get install -y -qq sqlite3; }
mkfifo "$WORK/load.sql"
cold_args sqlite-cache
"$CANNERY" capture --label sqlite-cache --out "$(out_file sqlite-cache)" "${CAPTURE_FLAGS[@]}" "${COLD_ARGS[@]}" \
  --count 6 --interval 8s --log "$WORK/log" \
  -- "$(command -v sqlite3)" -batch "$WORK/shop.db" ".read $WORK/load.sql" &
CAP=$!
# Six batches over the capture, then the cache stays until the last sample.
python3 "$REPO/corpora/workloads/sqlite-load.py" 6 3 20 > "$WORK/load.sql"
wait "$CAP"
