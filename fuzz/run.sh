#!/bin/sh
# Builds the libFuzzer targets with clang and runs each for DURATION seconds (in parallel,
# one process per target), then the shell parser's differential check against bash on the
# seed corpus. New corpus entries go to BUILD/corpus/TARGET (seeded from fuzz/corpus/),
# crashes to BUILD/artifacts/TARGET/, logs to BUILD/fuzz-TARGET.log. Exit 1 on any crash,
# leak, timeout or disagreement with bash. See docs/FUZZING.md.
#
#   fuzz/run.sh 600            # ten minutes
#   WARDEN_FUZZ_BUILD=/tmp/b fuzz/run.sh 60 fuzz_frame
set -eu
DURATION=${1:-60}
shift || true
TARGETS=${*:-"fuzz_frame fuzz_request fuzz_proposal fuzz_shell fuzz_tables fuzz_data fuzz_audit fuzz_model_answer"}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${WARDEN_FUZZ_BUILD:-$ROOT/build-fuzz}

CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD" -G Ninja -DWARDEN_FUZZ=ON \
  -DWARDEN_TESTS=OFF -DWARDEN_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# shellcheck disable=SC2086
ninja -C "$BUILD" $TARGETS shell_parse

export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
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
  if [ "$crashes" -ne 0 ]; then
    status=1
    grep -E -A12 '^==[0-9]+==ERROR|runtime error|fuzz_[a-z]+: ' "$BUILD/fuzz-$t.log" | head -40
  fi
done
echo "== shell_differential (seeds)"
"$ROOT/fuzz/shell_differential.sh" "$BUILD" || status=1
exit $status
