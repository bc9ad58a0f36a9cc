#!/usr/bin/env bash
# Fails when a lower floor includes a higher floor's header (docs/architecture.md, "Floors and folders"). Each library folder
# may include the folders listed for it and nothing above; tests/ may include anything.
# Usage: scripts/check_floors.sh   (run by scripts/test.sh, hence by CI)
set -euo pipefail
cd "$(dirname "$0")/.."

# folder : include prefixes it may use ("core/" is src/core, "cli/" src/cli, "engines/" src/engines,
# "studies/" src/studies)
rules=(
  "src/core:core"
  "tree:core tree"
  "gpu:core tree gpu"
  "src/engines:core tree gpu engines"
  "src/parallel:core tree parallel"
  "integrators:core integrators"
  "src/studies:core tree engines parallel studies"
  "src/cli:core tree gpu engines integrators parallel studies cli"
  "python:core tree gpu engines integrators studies"
  "grape:core engines grape"
)
bad=0
for rule in "${rules[@]}"; do
  folder=${rule%%:*}
  allowed=" ${rule#*:} "
  while IFS= read -r line; do
    file=${line%%:*}
    header=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"${line#*:}")
    prefix=${header%%/*}
    [ "$prefix" = "$header" ] && { echo "$file: includes \"$header\" without its library folder"; bad=1; continue; }
    if [[ "$allowed" != *" $prefix "* ]]; then
      echo "$file: a ${folder}/ file includes \"$header\", a header of a higher floor"
      bad=1
    fi
  done < <(grep -rHE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$folder" --include='*.cpp' --include='*.hpp' \
             --include='*.h' --include='*.cu' --include='*.cuh' || true)
done
if [ "$bad" -ne 0 ]; then echo "check_floors: the floors are not one-way (see docs/architecture.md)"; exit 1; fi
echo "check_floors: every include goes down or sideways within its floor"
