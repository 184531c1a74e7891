#!/usr/bin/env bash
# JVM workload: a Java program building an in-memory inverted index over
# generated documents, with queries and periodic re-sorting (JvmIndex.java).
source "$(dirname "$0")/common.sh"
command -v javac >/dev/null || { apt-get update -qq && apt-get install -y -qq default-jdk-headless; }
javac -d "$WORK" "$REPO/corpora/workloads/JvmIndex.java"
JAVA="$(readlink -f "$(command -v java)")"
cold_args jvm-index
"$CANNERY" capture --label jvm-index --out "$(out_file jvm-index)" "${CAPTURE_FLAGS[@]}" "${COLD_ARGS[@]}" \
  --count 6 --interval 8s --log "$WORK/log" \
  -- "$JAVA" -Xmx512m -XX:+UseSerialGC -cp "$WORK" JvmIndex 90
