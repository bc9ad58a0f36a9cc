#!/usr/bin/env bash
# Installs, builds and runs the test suite. GPU tests (CTest label gpu, Catch2 tag [gpu]) run
# only where nvidia-smi sees a GPU; every CPU test runs everywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

# Formatting is pinned to clang-format 14 (.clang-format; setup.sh installs it): other versions
# format differently, and a missing one must not let the check pass unseen.
format=$(command -v clang-format-14 || true)
[ -n "$format" ] || { echo "test.sh: clang-format-14 is missing (scripts/setup.sh installs it)"; exit 1; }
unformatted=$(for f in $(git ls-files '*.cpp' '*.hpp' '*.h' '*.cu' '*.cuh'); do
  "$format" --dry-run -Werror "$f" >/dev/null 2>&1 || echo "$f"; done)
if [ -n "$unformatted" ]; then echo "not clang-formatted (run clang-format-14 -i):"; echo "$unformatted"; exit 1; fi
scripts/check_floors.sh
build=${GROVE_BUILD_DIR:-build}
exclude=(-LE gpu)
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then exclude=(); fi
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "${exclude[@]}"
