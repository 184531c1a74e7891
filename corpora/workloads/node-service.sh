#!/usr/bin/env bash
# Node.js service: an HTTP JSON API with an in-memory document store and LRU
# cache (node-service.js), loaded by a separate node client process.
source "$(dirname "$0")/common.sh"
PORT=8391
NODE="$(command -v node)"
cold_args node-service
"$CANNERY" capture --label node-service --out "$(out_file node-service)" "${CAPTURE_FLAGS[@]}" "${COLD_ARGS[@]}" \
  --count 6 --interval 5s --log "$WORK/log" \
  -- "$NODE" "$REPO/corpora/workloads/node-service.js" "$PORT" &
CAP=$!
"$NODE" "$REPO/corpora/workloads/node-client.js" "$PORT" 28 >/dev/null
wait "$CAP"
