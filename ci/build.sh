#!/usr/bin/env bash
# Configures and builds twinbench into ./build (Ninja, precompiled headers, ccache).
set -euo pipefail
cd "$(dirname "$0")/.."

# ccache: share hits between checkouts in different folders, and accept the PCH.
export CCACHE_BASEDIR="$PWD"
export CCACHE_SLOPPINESS="pch_defines,time_macros,include_file_mtime,include_file_ctime"
export CCACHE_NOHASHDIR=1

build_type="${TWINBENCH_BUILD_TYPE:-RelWithDebInfo}"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$build_type" >/dev/null
cmake --build build -j "$(nproc)"
