#!/usr/bin/env bash
# Installs the Debian packages Warden builds with (needs root or sudo) and configures and
# builds it in ./build (or $BUILD_DIR). Extra arguments go to cmake. WARDEN_TARGETS names
# what to build (default: everything, tests included; scripts/run.sh builds only `warden`).
# Compiles go through ccache (~/.cache/ccache), shared by every checkout on the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
PACKAGES=(g++ cmake ninja-build pkg-config ccache libclips-dev rapidjson-dev catch2 libre2-dev libidn2-dev
          libcli11-dev libssl-dev libtomlplusplus-dev libboost-dev libspdlog-dev libsqlite3-dev
          libcurl4-openssl-dev python3 openssl  # openssl: the TLS tests make their certificates
          libpq-dev postgresql  # approvals in PostgreSQL; the tests start a real server (initdb)
          libedit-dev  # warden chat: line editing and history (BSD editline, not GNU readline)
          clang libclang-rt-dev  # clang + libFuzzer: the fuzz targets (fuzz/run.sh, .ci/run)
          libseccomp-dev  # the shell actuator's confinement: its system-call filter
          libhowardhinnant-date-dev tzdata  # the rule functions' local time (local-hour …): the tz database
          bubblewrap python3-pytest  # bench_confine compares with bwrap; the confinement tests run pytest
          clang-format  # the ctest clang_format: every tracked C++ file formatted (scripts/format_check.py)
          python3-prometheus-client curl  # /metrics read by Prometheus' own parser (tests), by curl (docs/OPERATIONS.md)
          iproute2 util-linux  # the end-to-end tests: real agent CLIs in a network namespace (ip, unshare)
          # the install and CLI tests: systemd-analyze verify on the installed unit, the manual
          # pages rendered (groff, lexgrog), the zsh and fish completions run
          systemd groff-base man-db zsh fish)
missing=()
for p in "${PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
# Node and npm for the end-to-end tests: Debian's, unless the machine already has both (a
# Node build that bundles npm conflicts with Debian's npm package).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  for p in nodejs npm; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
fi
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
TARGETS=${WARDEN_TARGETS:-}
# The pinned agent CLIs and MCP packages of the end-to-end tests (tests/e2e/package-lock.json),
# installed again only when the lockfile changed; not needed to build and run the daemon.
stamp=tests/e2e/node_modules/.warden-lock.sha256
want=$(sha256sum tests/e2e/package-lock.json | cut -d' ' -f1)
# npm mostly waits on the network and the disk, so it runs beside the build; its output is
# shown if it fails, and the script fails after the build.
npm_pid=""
npm_log=tests/e2e/npm-ci.log
if [ -z "$TARGETS" ] && { [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; }; then
  (cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error) > "$npm_log" 2>&1 &
  npm_pid=$!
fi
# A cache large enough for the three builds CI makes (release, sanitizers, fuzzers).
if [ "$(ccache --get-config max_size 2>/dev/null)" != "10.0G" ]; then ccache --max-size=10G >/dev/null; fi
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} "$@" >/dev/null
build_status=0
# shellcheck disable=SC2086
ninja -C "$BUILD_DIR" $TARGETS || build_status=$?
if [ -n "$npm_pid" ]; then
  if wait "$npm_pid"; then
    echo "$want" > "$stamp"
    rm -f "$npm_log"
  else
    cat "$npm_log" >&2
    echo "setup.sh: npm ci in tests/e2e failed (the end-to-end tests need its packages)" >&2
    exit 1
  fi
fi
exit "$build_status"
