#!/usr/bin/env bash
# Shared setup for the workload scripts: finds (or builds) the cannery binary
# and defines the capture settings every shipped workload uses.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT_DIR="$REPO/corpora/fleet-snapshots"
if [[ -z "${CANNERY:-}" ]]; then
  (cd "$REPO" && cargo build --release -q -p cannery)
  CANNERY="${CARGO_TARGET_DIR:-$REPO/target}/release/cannery"
fi
WORK="$(mktemp -d /tmp/cannery-workload.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
# Every workload: clean environment (only what is passed with --env), each
# process frozen (ptrace) while it is read, at most 5 s, dedup,
# secret-looking pages dropped, at most MAX_PAGES pages sampled uniformly
# with a fixed seed over COUNT samples, zstd level 19.
# (COLD=…, below: 1,200 each, so cold and hot fit the cold corpus' budget.)
if [[ -n "${COLD:-}" ]]; then MAX_PAGES="${MAX_PAGES:-1200}"; fi
MAX_PAGES="${MAX_PAGES:-6000}"
CAPTURE_FLAGS=(--freeze --max-pause 5s --dedup --redact-secrets --max-pages "$MAX_PAGES" --seed 20261122 --level 19
               --env PATH=/usr/local/bin:/usr/bin:/bin --env LANG=C.UTF-8 --env HOME="$WORK")
out_file() { mkdir -p "$OUT_DIR/$1"; echo "$OUT_DIR/$1/$1.cansnap"; }
# COLD=reclaim:50% captures the cold corpus instead (corpora/fleet-cold, needs
# root): the pages the kernel's own reclaim swaps out at each sample, and
# beside each workload NAME.hot, the pages still resident after the step.
COLD_ARGS=()
if [[ -n "${COLD:-}" ]]; then
  OUT_DIR="$REPO/corpora/fleet-cold"
fi
# cold_args NAME: the capture flags of cold mode for workload NAME.
cold_args() {
  if [[ -n "${COLD:-}" ]]; then
    mkdir -p "$OUT_DIR/$1.hot"
    COLD_ARGS=(--cold "$COLD" --setup --keep-hot "$OUT_DIR/$1.hot/$1.hot.cansnap")
  fi
}
