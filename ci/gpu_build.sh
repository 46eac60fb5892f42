#!/usr/bin/env bash
# Run ON THE GPU HOST (no network): builds twinbench against that host's own
# PyTorch (python3's torch; CUDA 13.0 LibTorch) into ./build-gpu, with the other
# build dependencies taken from .gpu-deps/ (made by ci/gpu_deps.sh) unpacked into a
# prefix, never into /.
#   TWINBENCH_TORCH_PYTHON  interpreter whose torch to build against (default python3)
#   TWINBENCH_DEPS_PREFIX   where to unpack the .debs (default /tmp/twinbench-deps)
set -euo pipefail
cd "$(dirname "$0")/.."
python="${TWINBENCH_TORCH_PYTHON:-python3}"
prefix="${TWINBENCH_DEPS_PREFIX:-/tmp/twinbench-deps}"
if [[ -d .gpu-deps ]]; then
  mkdir -p "$prefix"
  for f in .gpu-deps/*.deb; do dpkg-deb -x "$f" "$prefix"; done
  usr="$prefix/usr"
  export PATH="$usr/bin:$PATH"
  export PKG_CONFIG_PATH="$usr/lib/x86_64-linux-gnu/pkgconfig:$usr/share/pkgconfig"
  export LD_LIBRARY_PATH="$usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  prefix_args=(-DCMAKE_PREFIX_PATH="$usr" -DCMAKE_INCLUDE_PATH="$usr/include" -DCMAKE_LIBRARY_PATH="$usr/lib/x86_64-linux-gnu"
               -DCMAKE_BUILD_RPATH="$usr/lib/x86_64-linux-gnu")
else
  prefix_args=()  # the host has the packages itself
fi
"$python" -c 'import torch; print("ci/gpu_build.sh: torch", torch.__version__, "CUDA", torch.version.cuda)' >&2
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTWINBENCH_TORCH_PYTHON="$python" \
  -DTWINBENCH_BUILD_TESTS=OFF "${prefix_args[@]}" >/dev/null
cmake --build build-gpu -j "$(nproc)" --target twinbench
echo build-gpu/harness/twinbench
