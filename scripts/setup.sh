#!/usr/bin/env bash
# Installs the Debian packages Warden builds with (needs root or sudo) and configures and
# builds it in ./build (or $BUILD_DIR). Extra arguments go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
PACKAGES=(g++ cmake ninja-build pkg-config libclips-dev rapidjson-dev catch2 libre2-dev libidn2-dev
          libcli11-dev libssl-dev libtomlplusplus-dev libboost-dev libspdlog-dev libsqlite3-dev
          libcurl4-openssl-dev python3 openssl  # openssl: the TLS tests make their certificates
          clang libclang-rt-dev  # clang + libFuzzer: the fuzz targets (fuzz/run.sh, .ci/run)
          nodejs npm iproute2 util-linux)  # the end-to-end tests: real agent CLIs in a network namespace
missing=()
for p in "${PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
# The pinned agent CLIs and MCP packages of the end-to-end tests (tests/e2e/package-lock.json),
# installed again only when the lockfile changed.
if [ "${WARDEN_SKIP_NPM:-0}" != 1 ]; then
  stamp=tests/e2e/node_modules/.warden-lock.sha256
  want=$(sha256sum tests/e2e/package-lock.json | cut -d' ' -f1)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    (cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error)
    echo "$want" > "$stamp"
  fi
fi
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} "$@" >/dev/null
ninja -C "$BUILD_DIR"
