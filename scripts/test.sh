#!/usr/bin/env bash
# Installs, builds and runs the test suite. GPU tests (CTest label gpu, Catch2 tag [gpu]) run
# only where nvidia-smi sees a GPU; every CPU test runs everywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build=${GROVE_BUILD_DIR:-build}
exclude=(-LE gpu)
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then exclude=(); fi
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "${exclude[@]}"
