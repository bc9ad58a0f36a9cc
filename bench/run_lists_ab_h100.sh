#!/usr/bin/env bash
# The list kernels of several builds alternated on the same GPU host: `bench tree` at 2^20
# (Plummer and galaxy, theta 0.5 and 0.75, eps 0.01, the direct float kernel's softening) in two
# rounds, then the 2^23 galaxy at its softening (0.05), then leapfrog steps at 2^20.
# Usage on the GPU host: bench/run_lists_ab_h100.sh OUTDIR LABEL=GROVE [LABEL=GROVE ...]
set -uo pipefail
out=${1:?output directory}; shift
[ $# -ge 1 ] || { echo "usage: $0 OUTDIR LABEL=GROVE [LABEL=GROVE ...]" >&2; exit 2; }
mkdir -p "$out"
echo "== bench tree 2^20, eps 0.01 (lists: rates and share of the direct float kernel)"
for round in 1 2; do
  for build in "$@"; do
    label=${build%%=*}; grove=${build#*=}
    "$grove" bench tree --models plummer,galaxy --tree-sizes 20 --thetas 0.5,0.75 --repeat 5 \
      --tree-eps 0.01 > "$out/tree_20_${label}_$round.md" 2>&1
    grep -E "^\| (plummer|galaxy) " "$out/tree_20_${label}_$round.md" | sed "s/^/| $label /"
  done
done
echo "== galaxy 2^23, theta 0.5, eps 0.05"
for build in "$@"; do
  label=${build%%=*}; grove=${build#*=}
  "$grove" bench tree --models galaxy --tree-sizes 23 --thetas 0.5 --repeat 3 --tree-eps 0.05 \
    > "$out/tree_23_$label.md" 2>&1
  grep -E "^\| galaxy" "$out/tree_23_$label.md" | sed "s/^/| $label /"
done
echo "== steps at 2^20"
for c in "plummer 0.5" "galaxy 0.5" "plummer 0.75"; do
  read -r model theta <<< "$c"
  for build in "$@"; do
    label=${build%%=*}; grove=${build#*=}
    "$grove" bench step --model "$model" -n 1048576 --theta "$theta" --steps 32 \
      > "$out/step_${label}_${model}_$theta.md" 2>&1
    grep -E "^\| $model " "$out/step_${label}_${model}_$theta.md" | sed "s/^/| $label /"
  done
done
