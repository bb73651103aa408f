#!/usr/bin/env bash
# Sets up, builds and runs every test (unit, integration, the shipped rule pack's cases).
# Extra arguments go to cmake, e.g. -DWARDEN_SANITIZE=ON with BUILD_DIR=build-asan.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh "$@"
BUILD_DIR=${BUILD_DIR:-build}
# Most tests wait on daemons, child processes and agent CLIs rather than compute, so they run
# several at a time even on two cores.
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"${WARDEN_TEST_JOBS:-6}"
