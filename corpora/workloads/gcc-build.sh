#!/usr/bin/env bash
# C compiler build: gcc -O2 compiling the SQLite amalgamation (sqlite3.c, from
# the libsqlite3-sys crate on crates.io), capturing gcc and its cc1/as children.
source "$(dirname "$0")/common.sh"
mkdir -p "$WORK/fetch/src" && cd "$WORK/fetch"
cat > Cargo.toml <<'TOML'
[package]
name = "fetch-sqlite"
version = "0.0.0"
edition = "2021"
[dependencies]
libsqlite3-sys = { version = "=0.30.1", features = ["bundled"] }
TOML
echo 'fn main() {}' > src/main.rs
cargo fetch -q
SRC="$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/libsqlite3-sys-0.30.1/sqlite3 | head -1)"
GCC="$(command -v gcc)"
cold_args gcc-build
"$CANNERY" capture --label gcc-build --out "$(out_file gcc-build)" "${CAPTURE_FLAGS[@]}" "${COLD_ARGS[@]}" \
  --children --count 10 --interval 5s --wait-exit --cwd "$WORK" --log "$WORK/log" \
  -- "$GCC" -O2 -g -DSQLITE_THREADSAFE=1 -DSQLITE_ENABLE_FTS5 -DSQLITE_ENABLE_RTREE \
     -c "$SRC/sqlite3.c" -o "$WORK/sqlite3.o"
