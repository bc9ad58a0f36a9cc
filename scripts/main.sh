#!/usr/bin/env bash
# The main job on a built-in default: installs and builds grove, makes a Plummer sphere, computes
# its forces by direct summation (GPU when present) and with the treecode, and prints the
# tree-versus-direct error percentiles. Outputs go to out/ (override with GROVE_OUT).
# N defaults to 10^6 with a GPU and 5*10^4 on the CPU (about a minute on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
grove=${GROVE_BUILD_DIR:-build}/src/grove
out=${GROVE_OUT:-out}
mkdir -p "$out"
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then n=${GROVE_N:-1000000}; else n=${GROVE_N:-50000}; fi
eps=${GROVE_EPS:-0.001}
theta=${GROVE_THETA:-0.5}
"$grove" ic plummer -n "$n" --seed 1 -o "$out/plummer.hdf5"
"$grove" forces "$out/plummer.hdf5" --engine direct --eps "$eps" -o "$out/forces_direct.hdf5"
"$grove" forces "$out/plummer.hdf5" --engine tree --theta "$theta" --eps "$eps" -o "$out/forces_tree.hdf5"
echo
echo "tree (theta = $theta) against direct summation, relative acceleration error:"
/usr/bin/python3 scripts/compare_forces.py "$out/forces_direct.hdf5" "$out/forces_tree.hdf5"
