#!/usr/bin/env bash
# The step pipeline's measurements on the GPU host (#21), in one call of about five minutes: the
# [gpu] tests, the sanitizers on the tree engine, the host build in both input orders, leapfrog
# steps with the next tree built while the GPU evaluates (look-ahead) against a build every step
# (which picks the default), and the direct and Hermite kernel rates against their instruction
# limits (#17).
# Usage on the GPU host, from the repository root: bench/run_step_h100.sh OUTDIR
source "$(dirname "$0")/common.sh"
gpu_tests_and_sanitizers "[lookahead],tree-gpu forces in its own order*"
step "tree build"; $grove bench tree-build --build-sizes 1e6,1e7 --repeat 5 > "$out/tree_build.md" 2>&1
for theta in 0.5 0.75; do
  for lookahead in true false true false; do
    step "bench step plummer theta $theta lookahead $lookahead"
    $grove bench step --model plummer -n 1048576 --theta $theta --steps 32 --lookahead=$lookahead \
      > "$out/step_plummer_${theta}_$lookahead.md" 2>&1
    grep -E "^\| (sort|gather|moments|look-ahead build|other|plummer) " "$out/step_plummer_${theta}_$lookahead.md"
  done
done
for lookahead in true false; do
  step "bench step galaxy lookahead $lookahead"
  $grove bench step --model galaxy -n 1048576 --theta 0.5 --steps 32 --lookahead=$lookahead > "$out/step_galaxy_$lookahead.md" 2>&1
  grep "^| galaxy" "$out/step_galaxy_$lookahead.md"
done
step "direct"; $grove bench direct --sizes 20:20 --active 10:10 --repeat 3 > "$out/bench_direct.md" 2>&1; cat "$out/bench_direct.md"
step "hermite"; $grove bench hermite --sizes 20:20 --active 10:10 --repeat 3 > "$out/bench_hermite.md" 2>&1; cat "$out/bench_hermite.md"
