#!/usr/bin/env bash
# Sets up, builds and runs every test (unit, integration, the shipped rule pack's cases).
# Extra arguments go to cmake, e.g. -DWARDEN_SANITIZE=ON with BUILD_DIR=build-asan.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh "$@"
echo "test.sh: set up and built in ${SECONDS} s"
BUILD_DIR=${BUILD_DIR:-build}
# Most tests wait on daemons, child processes and agent CLIs rather than compute, so they run
# several at a time even on two cores.
start=$SECONDS
status=0
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"${WARDEN_TEST_JOBS:-6}" || status=$?
echo "test.sh: the suite ran in $((SECONDS - start)) s (all: ${SECONDS} s)"
exit "$status"
