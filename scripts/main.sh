#!/usr/bin/env bash
# The main job: installs and builds grove, makes the built-in galaxy model (bulge + disk + halo,
# masses 1:1:4), and runs the accuracy sweeps: tree against double-precision direct summation for
# theta = 0.2 ... 1.0 (the geometric criterion) and alpha = 1e-4 ... 1e-2 (the relative one), error
# percentiles for all particles and per component, cost and timings, and the plots (both criteria
# on the cost-accuracy panel). Outputs go to out/ (override with GROVE_OUT).
# N defaults to 10^6 with a GPU and 10^5 on the CPU only (about a minute on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
grove=${GROVE_BUILD_DIR:-build}/src/grove
out=${GROVE_OUT:-out}
mkdir -p "$out"
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then n=${GROVE_N:-1000000}; else n=${GROVE_N:-100000}; fi
eps=${GROVE_EPS:-0.05}
thetas=${GROVE_THETAS:-0.2:1.0:0.1}
alphas=${GROVE_ALPHAS:-1e-4,2e-4,5e-4,1e-3,2e-3,5e-3,1e-2}
"$grove" ic galaxy -n "$n" --seed 1 -o "$out/galaxy.hdf5"
"$grove" accuracy "$out/galaxy.hdf5" --theta "$thetas" --eps "$eps" -o "$out/accuracy.hdf5" | tee "$out/accuracy.md"
"$grove" accuracy "$out/galaxy.hdf5" --mac relative --alpha "$alphas" --eps "$eps" -o "$out/accuracy-relative.hdf5" |
  tee "$out/accuracy-relative.md"
/usr/bin/python3 scripts/plot_accuracy.py "$out/accuracy.hdf5" "$out/accuracy-relative.hdf5" -o "$out/accuracy.png"
/usr/bin/python3 scripts/plot_snapshot.py "$out/galaxy.hdf5" -o "$out/galaxy.png"
echo
echo "tables: $out/accuracy.md, $out/accuracy-relative.md   plots: $out/accuracy.png (error distributions, scaling, cost) and $out/galaxy.png (the model)"
