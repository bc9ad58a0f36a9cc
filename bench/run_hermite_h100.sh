#!/usr/bin/env bash
# The Hermite measurements on the GPU host: [gpu] tests, memcheck of the Hermite kernels, the
# kernel rates, and Hermite runs of Plummer spheres (eps = 1/256, 0.25 time units).
# Usage on the GPU host, from the repository root: bench/run_hermite_h100.sh OUTDIR
source "$(dirname "$0")/common.sh"
echo "== gpu tests"; $gpu_tests "[gpu]" > "$out/gpu_tests.log" 2>&1; echo "rc=$?"; tail -2 "$out/gpu_tests.log"
echo "== memcheck"; compute-sanitizer --tool memcheck $gpu_tests "[hermite-small]" 2>&1 | tail -1
echo "== racecheck"; compute-sanitizer --tool racecheck $gpu_tests "[hermite-small]" 2>&1 | tail -1
echo "== kernel"; $grove bench hermite --sizes ${SIZES:-14:20} --active 6:14 --sources 20 --precision mixed,double --repeat 3 > "$out/bench_hermite.md" 2>&1; cat "$out/bench_hermite.md"
for n in 16384 65536 262144; do
  $grove ic plummer -n $n --seed 1 -o /tmp/p$n.hdf5 > /dev/null
  for prec in ${PRECISIONS:-mixed double}; do
    echo "== hermite N = $n $prec"
    rm -rf /tmp/h$n$prec
    timeout ${RUN_LIMIT:-150} $grove run /tmp/p$n.hdf5 -o /tmp/h$n$prec --integrator hermite --engine direct-gpu --precision $prec --eps 0.00390625 --eta 0.01 --dt-max 0.03125 --t-end 0.25 --log-every 8 > "$out/hermite_${n}_$prec.log" 2>&1
    tail -2 "$out/hermite_${n}_$prec.log"
  done
done
