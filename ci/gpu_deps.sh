#!/usr/bin/env bash
# Run HERE (a machine with Debian's archive): downloads the Debian packages that a
# twinbench build needs besides LibTorch/CUDA (which the GPU host has) into
# .gpu-deps/ (git-ignored; ~15 MB), for a GPU host that has no network.
# Then carry .gpu-deps to the host and run ci/gpu_build.sh there.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(
  libfmt-dev libfmt9 libcli11-dev libsqlite3-dev libsqlite3-0 sqlite3
  libtomlplusplus-dev libtomlplusplus3 nlohmann-json3-dev
  zlib1g-dev libssl-dev libssl3 libbenchmark-dev libbenchmark1debian
  libgtest-dev libgmock-dev
  libgloo-dev  # ProcessGroupGloo.hpp includes gloo's headers; the wheel ships its library, not them
  pkgconf pkgconf-bin libpkgconf3 ccache
)
mkdir -p .gpu-deps
(cd .gpu-deps && rm -f ./*.deb && apt-get download "${packages[@]}" >/dev/null)
du -sh .gpu-deps >&2
ls .gpu-deps >&2
