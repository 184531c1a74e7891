#!/usr/bin/env bash
# Regenerates the whole shipped corpus (corpora/fleet-snapshots), then checks
# it: no secret-looking strings, and a summary of every workload.
set -euo pipefail
cd "$(dirname "$0")"
source ./common.sh
export CANNERY
for w in python-etl gcc-build redis node-service jvm-index sqlite-cache; do
  echo "== $w"
  bash "./$w.sh"
done
"$CANNERY" corpus scan-secrets "$REPO/corpora"
"$CANNERY" corpus info "$REPO/corpora/fleet-snapshots"
