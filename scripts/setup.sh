#!/usr/bin/env bash
# Installs the Debian packages Warden builds with (needs root or sudo) and configures and
# builds it in ./build (or $BUILD_DIR). Extra arguments go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
PACKAGES=(g++ cmake ninja-build pkg-config libclips-dev rapidjson-dev catch2 libre2-dev libidn2-dev
          libcli11-dev libssl-dev libtomlplusplus-dev libboost-dev libspdlog-dev libsqlite3-dev
          libcurl4-openssl-dev python3 openssl  # openssl: the TLS tests make their certificates
          clang libclang-rt-dev)  # clang + libFuzzer: the fuzz targets (fuzz/run.sh, .ci/run)
missing=()
for p in "${PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} "$@" >/dev/null
ninja -C "$BUILD_DIR"
