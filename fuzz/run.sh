#!/bin/sh
# Builds the libFuzzer targets with clang and runs each for DURATION seconds (in parallel,
# one process per target). New corpus entries go to BUILD/corpus/TARGET (seeded from
# fuzz/corpus/), crashes to BUILD/artifacts/TARGET/, logs to BUILD/fuzz-TARGET.log.
#
#   fuzz/run.sh 600            # ten minutes
#   WARDEN_FUZZ_BUILD=/tmp/b fuzz/run.sh 60 fuzz_frame
set -eu
DURATION=${1:-60}
shift || true
TARGETS=${*:-"fuzz_frame fuzz_request"}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${WARDEN_FUZZ_BUILD:-$ROOT/build-fuzz}

CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD" -G Ninja -DWARDEN_FUZZ=ON \
  -DWARDEN_TESTS=OFF -DWARDEN_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# shellcheck disable=SC2086
ninja -C "$BUILD" $TARGETS

pids=""
for t in $TARGETS; do
  seeds="$ROOT/fuzz/corpus/${t#fuzz_}"
  mkdir -p "$BUILD/corpus/$t" "$BUILD/artifacts/$t"
  "$BUILD/fuzz/$t" -max_total_time="$DURATION" -print_final_stats=1 -timeout=10 \
    -rss_limit_mb=2048 -artifact_prefix="$BUILD/artifacts/$t/" \
    "$BUILD/corpus/$t" "$seeds" >"$BUILD/fuzz-$t.log" 2>&1 &
  pids="$pids $!"
done
status=0
for p in $pids; do wait "$p" || status=1; done
for t in $TARGETS; do
  echo "== $t"
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' \
    "$BUILD/fuzz-$t.log" || tail -5 "$BUILD/fuzz-$t.log"
  crashes=$(find "$BUILD/artifacts/$t" -type f | wc -l)
  echo "artifacts (crashes/leaks/timeouts): $crashes"
  [ "$crashes" -eq 0 ] || status=1
done
exit $status
