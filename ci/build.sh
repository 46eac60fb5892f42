#!/usr/bin/env bash
# Configures and builds twinbench (Ninja, unity build, precompiled headers, ccache).
#
#   bash ci/build.sh          Debian's LibTorch 1.13 (CPU) into ./build
#   bash ci/build.sh cuda     PyTorch 2.x of the project venv (ci/venv.sh; CUDA 13.0
#                             LibTorch from PyPI) into ./build-cuda
#   bash ci/build.sh debian twinbench   only the named targets (the main job needs
#                             the binary, not the tests)
#
# TWINBENCH_TORCH_PYTHON=/path/to/python with `cuda` builds against that
# interpreter's torch instead (a GPU host's own PyTorch).
set -euo pipefail
cd "$(dirname "$0")/.."

# ccache: share hits between checkouts in different folders, and accept the PCH.
export CCACHE_BASEDIR="$PWD"
export CCACHE_SLOPPINESS="pch_defines,time_macros,include_file_mtime,include_file_ctime"
export CCACHE_NOHASHDIR=1

line="${1:-debian}"
build_type="${TWINBENCH_BUILD_TYPE:-RelWithDebInfo}"
case "$line" in
  debian)
    dir=build
    torch_args=()
    ;;
  cuda)
    dir=build-cuda
    python="${TWINBENCH_TORCH_PYTHON:-}"
    if [[ -z "$python" ]]; then
      bash ci/venv.sh
      python="$PWD/.venv/bin/python"
    fi
    torch_args=(-DTWINBENCH_TORCH_PYTHON="$python")
    ;;
  *) echo "ci/build.sh: unknown build line '$line' (debian | cuda)" >&2; exit 2 ;;
esac

cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" "${torch_args[@]}" >/dev/null
targets=()
for t in "${@:2}"; do targets+=(--target "$t"); done
cmake --build "$dir" -j "$(nproc)" "${targets[@]}"
