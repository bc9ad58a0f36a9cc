#!/usr/bin/env bash
# Installs, builds and runs the test suite. GPU tests (CTest label gpu, Catch2 tag [gpu]) run
# only where nvidia-smi sees a GPU; every CPU test runs everywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

# Formatting is pinned to clang-format 14 (.clang-format); other versions format differently.
if command -v clang-format >/dev/null && clang-format --version | grep -q "version 14\."; then
  unformatted=$(for f in $(git ls-files '*.cpp' '*.hpp' '*.h' '*.cu' '*.cuh'); do
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || echo "$f"; done)
  if [ -n "$unformatted" ]; then echo "not clang-formatted (run clang-format -i):"; echo "$unformatted"; exit 1; fi
fi
build=${GROVE_BUILD_DIR:-build}
exclude=(-LE gpu)
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then exclude=(); fi
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "${exclude[@]}"
