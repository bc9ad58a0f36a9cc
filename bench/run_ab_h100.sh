#!/usr/bin/env bash
# Two builds of grove alternated on the same GPU host, for a change's before / after: leapfrog
# steps at 2^20 (Plummer theta 0.5 and 0.75, galaxy theta 0.5) in two rounds, then the 2^23
# galaxy's walk + evaluation, each build in turn.
# Usage on the GPU host: bench/run_ab_h100.sh OUTDIR BEFORE_GROVE AFTER_GROVE
set -uo pipefail
out=${1:?output directory}; before=${2:?grove before}; after=${3:?grove after}
mkdir -p "$out"
step() { # label grove model theta
  "$2" bench step --model "$3" -n 1048576 --theta "$4" --steps 32 > "$out/step_$1_$3_$4.md" 2>&1
  grep -E "^\| $3 " "$out/step_$1_$3_$4.md" | sed "s/^/| $1 /"
}
echo "== steps, alternated"
for round in 1 2; do
  for c in "plummer 0.5" "plummer 0.75" "galaxy 0.5"; do
    step before "$before" $c
    step after "$after" $c
  done
done
echo "== galaxy 2^23, walk + evaluation"
for label in before after; do
  bin=$before; [ $label = after ] && bin=$after
  "$bin" bench tree --models galaxy --tree-sizes 23 --thetas 0.5 --repeat 3 > "$out/tree_23_$label.md" 2>&1
  grep -E "^\| galaxy" "$out/tree_23_$label.md" | sed "s/^/| $label /"
done
