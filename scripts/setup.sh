#!/usr/bin/env bash
# Installs what grove needs on Debian 12 (apt-get, only what is missing) and builds it in build/.
# Usage: scripts/setup.sh            (Release; the GPU engines too when nvcc is found)
# Environment: GROVE_BUILD_DIR (default build), GROVE_CUDA_ARCHITECTURES (default 90).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential gfortran libopenmpi-dev openmpi-bin cmake ninja-build ccache libeigen3-dev libcxxopts-dev libhdf5-dev catch2 clang-format-14
          pybind11-dev python3-dev python3-pytest python3-h5py python3-matplotlib python3-numpy python3-yt)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# nvcc is not on PATH by default in the CUDA packages.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi

build=${GROVE_BUILD_DIR:-build}
mkdir -p "$build"
log="$build/configure.log"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DGROVE_CUDA_ARCHITECTURES="${GROVE_CUDA_ARCHITECTURES:-90}" >"$log" 2>&1 || { cat "$log"; exit 1; }
grep -E "^-- grove:" "$log" || true
cmake --build "$build" -j "$(nproc)"

# Makes the Python module importable by Debian's /usr/bin/python3: a .pth file in its site
# directory names the build's python/ folder.
if [ -n "$(ls "$build"/python/grove.*.so 2>/dev/null)" ]; then
  site=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
  $sudo_cmd mkdir -p "$site"
  echo "$(cd "$build/python" && pwd)" | $sudo_cmd tee "$site/grove.pth" >/dev/null
fi
