#!/usr/bin/env bash
# The GRAPE libraries on a GPU host (grape/README.md): the [gpu] tests of the engines behind them,
# the libraries' own tests and the legacy-style clients of tests/grape/clients on the GPU engine,
# then a Plummer sphere of 64k particles for 1 time unit through the C client of
# tests/grape/clients/hermite_g6.c linked against libg6, against grove's own `hermite` on
# direct-gpu with the same parameters; wall times and |dE/E| for bench/results/.
# Usage on the GPU host, from the repository root: bench/run_grape_h100.sh OUTDIR
# Programs from build/ (scripts/setup.sh) or from GROVE_BIN (with grove_tests and the clients built
# in build/tests against build/grape; set LD_LIBRARY_PATH for a copied set).
source "$(dirname "$0")/common.sh"
bin=${GROVE_BIN:-$PWD/build/tests}
client=$bin/hermite_g6_client
tests=${GROVE_BIN:+$GROVE_BIN/grove_tests}; tests=${tests:-$PWD/build/tests/grove_tests}
n=${GROVE_N:-65536}; eta=0.01; dt_max=0.0625; eps=0.00390625; t_end=${GROVE_T_END:-1}
echo "== gpu tests"; $gpu_tests "[grape],[hermite6]" > "$out/gpu_tests.log" 2>&1; echo "rc=$?"; tail -2 "$out/gpu_tests.log"
echo "== memcheck"; compute-sanitizer --tool memcheck --error-exitcode 9 $gpu_tests "[grape]" > "$out/memcheck.log" 2>&1; echo "rc=$?"
echo "== racecheck"; compute-sanitizer --tool racecheck --error-exitcode 9 $gpu_tests "[grape]" > "$out/racecheck.log" 2>&1; echo "rc=$?"
echo "== the libraries' own tests, now on the GPU engine"; $tests "[grape]~[slow]" > "$out/grape_tests.log" 2>&1; echo "rc=$?"; tail -2 "$out/grape_tests.log"
# The legacy-style clients on a Plummer 1k as tests/grape/test_grape.cpp runs them on the CPU,
# against grove's own integrators on direct-gpu: dE/E side by side.
$grove ic plummer -n 1024 --seed 11 -o "$out/p1k.hdf5" > /dev/null; $grove export "$out/p1k.hdf5" -o "$out/p1k.txt" > /dev/null
echo "== clients, Plummer 1k, t = 0.5 (dE/E, then block steps and particle steps)"
echo "C g6 hermite:       $($client "$out/p1k.txt" 0.5 0.01 0.0625 0.015625 2>> "$out/clients.err")"
[ -x $bin/hermite_g6_fortran_client ] && echo "Fortran g6 hermite: $($bin/hermite_g6_fortran_client "$out/p1k.txt" 0.5 0.01 0.0625 0.015625 2>> "$out/clients.err")"
$grove run "$out/p1k.hdf5" -o "$out/h1k" --integrator hermite --engine direct-gpu --precision double --eta 0.01 \
  --dt-max 0.0625 --eps 0.015625 --t-end 0.5 --snapshot-every 0.5 > /dev/null 2>&1
echo "grove hermite:      $(tail -1 "$out/h1k/diagnostics.txt" | awk '{print $6}')"
echo "C g5 leapfrog:      $($bin/leapfrog_g5_client "$out/p1k.txt" 0.5 0.0078125 0.015625 2>> "$out/clients.err")"
$grove run "$out/p1k.hdf5" -o "$out/l1k" --integrator leapfrog --engine direct-gpu --precision double --dt 0.0078125 \
  --eps 0.015625 --t-end 0.5 --snapshot-every 0.5 > /dev/null 2>&1
echo "grove leapfrog:     $(tail -1 "$out/l1k/diagnostics.txt" | awk '{print $6}')"
sort -u "$out/clients.err"
$grove ic plummer -n "$n" --seed 1 -o "$out/plummer.hdf5" > /dev/null
$grove export "$out/plummer.hdf5" -o "$out/plummer.txt" > /dev/null
# Wall times of separate processes on a shared host vary by 10-20 % from run to run (the first
# run after the tests is often the slowest): one shorter run of each program first (to t = 0.25,
# with the client's GROVE_G6_TIMING breakdown), then three alternated pairs, each pair's ratio and
# the ratio of the sums.
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
client_run() { $client "$out/plummer.txt" $1 $eta $dt_max $eps > "$out/client.txt" 2> "$out/client.err"; }
native_run() {
  rm -rf "$out/native"
  $grove run "$out/plummer.hdf5" -o "$out/native" --integrator hermite --engine direct-gpu --precision mixed \
    --eta $eta --dt-max $dt_max --eps $eps --t-end $1 --snapshot-every $1 > "$out/native.log" 2>&1
}
echo "== where the client's time goes, to t = 0.25 (GROVE_G6_TIMING=1)"
GROVE_G6_TIMING=1 client_run 0.25; grep "since g6_open" "$out/client.err"
native_run 0.25; grep -o "force engine [0-9.]* s, integration [0-9.]* s" "$out/native.log"
echo "== libg6 client (GPU engine, mixed) against grove hermite (direct-gpu, mixed), Plummer $n to t = $t_end"
sum_c=0; sum_n=0
for pair in 1 2 3; do
  start=$(date +%s%N); client_run $t_end; rc_c=$?; c=$(ms $start)
  start=$(date +%s%N); native_run $t_end; rc_n=$?; g=$(ms $start)
  sum_c=$((sum_c + c)); sum_n=$((sum_n + g))
  echo "pair $pair: client rc=$rc_c $c ms ($(cat "$out/client.txt")), grove rc=$rc_n $g ms ($(tail -1 "$out/native/diagnostics.txt" | awk '{print $6}')), ratio $(awk -v a=$c -v b=$g 'BEGIN{printf "%.3f", a/b}')"
done
echo "sums: client $sum_c ms, grove $sum_n ms, ratio $(awk -v a=$sum_c -v b=$sum_n 'BEGIN{printf "%.3f", a/b}')"
