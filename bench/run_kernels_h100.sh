#!/usr/bin/env bash
# The direct-summation and Hermite kernels on a GPU host (#17): the [gpu] tests, memcheck and
# racecheck on the small Hermite cases (the direct cases take over ten minutes under racecheck),
# every kernel's rate at N = 2^20 and with 1024 active sinks (`grove bench direct|hermite`, which
# print each kernel's limit), and `grove run --integrator hermite` on a Plummer 64k for one time
# unit (eta = 0.01, mixed). With a second grove (BEFORE), the rates and the run alternate between
# the two builds.
# Usage on the GPU host, from the repository root: bench/run_kernels_h100.sh OUTDIR [BEFORE_GROVE]
source "$(dirname "$0")/common.sh"
before=${2:-}
gpu_tests_and_sanitizers "[hermite-small]"
$grove ic plummer -n 65536 --seed 1 -o /tmp/p64k.hdf5 > /dev/null
rates() { # label grove
  "$2" bench direct --sizes 20:20 --active 10:10 --repeat 3 > "$out/direct_$1.md" 2>&1
  "$2" bench hermite --sizes 20:20 --active 10:10 --repeat 3 > "$out/hermite_$1.md" 2>&1
  grep -hE "^\| (float|mixed|double)[+a-z]* \| [0-9]" "$out/direct_$1.md" "$out/hermite_$1.md" | sed "s/^/| $1 /"
}
plummer() { # label grove
  rm -rf "/tmp/h_$1"
  "$2" run /tmp/p64k.hdf5 -o "/tmp/h_$1" --integrator hermite --engine direct-gpu --precision mixed --eta 0.01 \
    --dt-max 0.0625 --eps 0.00390625 --t-end 1 > "$out/plummer_$1.log" 2>&1
  echo "| $1 | $(grep -E "^done:" "$out/plummer_$1.log" | sed 's/.* in \([0-9.]*\) s .*/\1 s/') | $(grep -oE "force engine [0-9.]+ s|[0-9]+ block steps" "$out/plummer_$1.log" | tr '\n' ' ')| $(tail -1 "/tmp/h_$1/diagnostics.txt" | awk '{print $6}') |"
}
labels=after; [ -n "$before" ] && labels="before after after before"
step "kernel rates (label | precision | N_i | N_j | splits | ms | interactions/s | of limit)"
for l in $labels; do g=$grove; [ $l = before ] && g=$before; rates $l $g; done
step "Plummer 64k, hermite, mixed, t = 1 (label | wall | force engine, block steps | dE/E)"
for l in $labels; do g=$grove; [ $l = before ] && g=$before; plummer $l $g; done
