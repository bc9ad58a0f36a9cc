#!/usr/bin/env bash
# The resident leapfrog's measurements on the GPU host (#21), in one call of about five minutes:
# the [gpu] tests, the sanitizers on the resident and look-ahead steps, leapfrog steps with the
# particles kept on the GPU against the host pipeline (alternated pairs), and the step at the
# opening angles that give the issue's matched errors.
# Usage on the GPU host, from the repository root: bench/run_resident_h100.sh OUTDIR
source "$(dirname "$0")/common.sh"
gpu_tests_and_sanitizers "[resident],[lookahead]"
run() { # model theta resident [extra options]
  $grove bench step --model "$1" -n 1048576 --theta "$2" --steps 32 --resident="$3" "${@:4}" \
    > "$out/step_$1_$2_$3.md" 2>&1
  grep -E "^\| $1 " "$out/step_$1_$2_$3.md" | sed "s/^/| resident $3 /"
}
step "pairs: resident on and off, alternated"
for pair in 1 2; do
  for theta in 0.5 0.75; do for resident in true false; do run plummer $theta $resident; done; done
  for resident in true false; do run galaxy 0.5 $resident; done
done
step "matched errors (resident)"
for theta in 0.55 0.6 0.9 0.95; do run plummer $theta true; done
for theta in 0.55 0.6 1.0 1.1; do run galaxy $theta true; done
step "galaxy 2^23, walk + evaluation"
$grove bench tree --models galaxy --tree-sizes 23 --thetas 0.5 --repeat 3 > "$out/tree_galaxy_23.md" 2>&1
grep -E "^\| galaxy" "$out/tree_galaxy_23.md"
