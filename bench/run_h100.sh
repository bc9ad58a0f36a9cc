#!/usr/bin/env bash
# Everything a GPU host measures for bench/results/, in one call (docs/user-guide.md): [gpu] tests,
# sanitizers, host build, tree engine, leapfrog per-step cost, theta sweeps.
# Usage on the GPU host, from the repository root: bench/run_h100.sh OUTDIR
source "$(dirname "$0")/common.sh"
step "gpu tests"; $gpu_tests "[gpu]" > "$out/gpu_tests.log" 2>&1; echo "rc=$?"; tail -2 "$out/gpu_tests.log"
step "memcheck"; compute-sanitizer --tool memcheck $gpu_tests "tree-gpu: degenerate inputs and repeatability" > "$out/memcheck.log" 2>&1; tail -1 "$out/memcheck.log"
step "racecheck"; compute-sanitizer --tool racecheck $gpu_tests "tree-gpu: degenerate inputs and repeatability" > "$out/racecheck.log" 2>&1; tail -1 "$out/racecheck.log"
step "tree build"; $grove bench tree-build --build-sizes 1e5,1e6,1e7 --repeat 3 > "$out/tree_build.md" 2>&1
step "tree engine"; $grove bench tree --models uniform,galaxy --tree-sizes 20,23 --thetas 0.45,0.5,0.75 --repeat 5 > "$out/bench_tree.md" 2> "$out/bench_tree.err"
step "leapfrog 2^20"
$grove ic galaxy -n 1048576 --seed 1 -o /tmp/g1m.hdf5 > /dev/null
$grove run /tmp/g1m.hdf5 -o /tmp/lf1m --engine tree-gpu --theta 0.5 --eps 0.05 --dt 2.5e-4 --t-end 0.25 --snapshot-every 0.25 --log-every 100 > "$out/leapfrog_1m.log" 2>&1
tail -3 "$out/leapfrog_1m.log"; awk '!/^#/{de=$6} END{print "final dE/E", de}' /tmp/lf1m/diagnostics.txt
step "accuracy 1e6"; $grove accuracy /tmp/g1m.hdf5 --theta 0.2:1.0:0.1 --eps 0.05 --repeat 3 -o "$out/accuracy_1e6.hdf5" > "$out/accuracy_1e6.md" 2>&1
step "accuracy 1e5"; $grove ic galaxy -n 100000 --seed 1 -o /tmp/g1e5.hdf5 > /dev/null
$grove accuracy /tmp/g1e5.hdf5 --theta 0.2:1.0:0.1 --eps 0.05 --repeat 3 -o "$out/accuracy_1e5.hdf5" > "$out/accuracy_1e5.md" 2>&1
step "accuracy 1e7 sampled"; $grove ic galaxy -n 10000000 --seed 1 -o /tmp/g1e7.hdf5 > /dev/null
$grove accuracy /tmp/g1e7.hdf5 --theta 0.2:1.0:0.1 --eps 0.05 --sample 100000 --repeat 3 -o "$out/accuracy_1e7.hdf5" > "$out/accuracy_1e7.md" 2>&1
step "summary"; head -8 "$out/tree_build.md" | tail -4; grep "| all |" "$out"/accuracy_1e6.md | head -9
