# Sourced by the bench/run_*.sh scripts: the output folder from $1, the programs, the test data.
# Programs from build/ (scripts/setup.sh), or from the folder GROVE_BIN names (e.g. a copy made
# for a host without the build's libraries; set LD_LIBRARY_PATH for them).
set -uo pipefail
out=${1:?output directory}
mkdir -p "$out"
grove=${GROVE_BIN:+$GROVE_BIN/grove}; grove=${grove:-$PWD/build/src/grove}
gpu_tests=${GROVE_BIN:+$GROVE_BIN/grove_gpu_tests}; gpu_tests=${gpu_tests:-$PWD/build/tests/grove_gpu_tests}
export GROVE_DATA_DIR=$PWD/data # the sample models the tests read
step() { echo "== $1"; }
# The [gpu] tests, then memcheck and racecheck on the cases that FILTER ($1) selects.
gpu_tests_and_sanitizers() {
  step "gpu tests"; $gpu_tests "[gpu]" > "$out/gpu_tests.log" 2>&1; echo "rc=$?"; tail -2 "$out/gpu_tests.log"
  for tool in memcheck racecheck; do
    step "$tool"; compute-sanitizer --tool $tool $gpu_tests "$1" > "$out/$tool.log" 2>&1
    tail -1 "$out/$tool.log"
  done
}
