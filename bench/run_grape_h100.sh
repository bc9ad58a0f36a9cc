#!/usr/bin/env bash
# The GRAPE libraries on a GPU host (grape/README.md): the [gpu] tests of the engines behind them,
# then a Plummer sphere of 64k particles for 1 time unit through the C client of
# tests/grape/clients/hermite_g6.c linked against libg6 (GPU engine), against grove's own
# `hermite` on direct-gpu with the same parameters; wall times and |dE/E| for bench/results/.
# Usage on the GPU host, from the repository root: bench/run_grape_h100.sh OUTDIR
# Programs from build/ (scripts/setup.sh) or from GROVE_BIN (with hermite_g6_client, a build of
# the client against build/grape/libg6.so; set LD_LIBRARY_PATH for a copied set).
source "$(dirname "$0")/common.sh"
client=${GROVE_BIN:+$GROVE_BIN/hermite_g6_client}; client=${client:-$PWD/build/tests/hermite_g6_client}
n=${GROVE_N:-65536}; eta=0.01; dt_max=0.0625; eps=0.00390625; t_end=${GROVE_T_END:-1}
echo "== gpu tests"; $gpu_tests "[grape],[hermite6]" > "$out/gpu_tests.log" 2>&1; echo "rc=$?"; tail -2 "$out/gpu_tests.log"
echo "== memcheck"; compute-sanitizer --tool memcheck --error-exitcode 9 $gpu_tests "[grape]" > "$out/memcheck.log" 2>&1; echo "rc=$?"
echo "== racecheck"; compute-sanitizer --tool racecheck --error-exitcode 9 $gpu_tests "[grape]" > "$out/racecheck.log" 2>&1; echo "rc=$?"
$grove ic plummer -n "$n" --seed 1 -o "$out/plummer.hdf5" > /dev/null
$grove export "$out/plummer.hdf5" -o "$out/plummer.txt" > /dev/null
echo "== libg6 client (GPU engine, mixed)"
start=$(date +%s%N)
GROVE_G6_ENGINE=gpu $client "$out/plummer.txt" $t_end $eta $dt_max $eps > "$out/client.txt" 2> "$out/client.err"
echo "rc=$? wall $(( ($(date +%s%N) - start) / 1000000 )) ms: $(cat "$out/client.txt")"
echo "== grove hermite (direct-gpu, mixed)"
start=$(date +%s%N)
$grove run "$out/plummer.hdf5" -o "$out/native" --integrator hermite --engine direct-gpu --precision mixed \
  --eta $eta --dt-max $dt_max --eps $eps --t-end $t_end --snapshot-every $t_end > "$out/native.log" 2>&1
echo "rc=$? wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; tail -3 "$out/native/diagnostics.txt"
