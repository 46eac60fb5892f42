#!/usr/bin/env bash
# Makes (once) and prints a bare Debian root for the GPU kit's rehearsal: Debian's
# essential packages, python3 and the C++ runtime (what any machine that runs
# PyTorch has), and none of twinbench's build packages (no fmt, CLI11, SQLite
# headers, toml++, libpq, Google Benchmark). mmdebstrap, from Debian's archive.
#   bash ci/gpu_kit/bare_root.sh [DIR]   (default $TWINBENCH_BARE_ROOT, else
#                                         /var/tmp/twinbench-bare-bookworm)
# Idempotent: a root made from the same recipe is reused. Needs root and the archive.
set -euo pipefail
root="${1:-${TWINBENCH_BARE_ROOT:-/var/tmp/twinbench-bare-bookworm}}"
mirror="${TWINBENCH_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
recipe="mmdebstrap --variant=essential --include=python3,libstdc++6 bookworm $mirror"
made() { [[ -f "$root/.twinbench-recipe" && "$(cat "$root/.twinbench-recipe")" == "$recipe" ]]; }
if made; then echo "$root"; exit 0; fi
command -v mmdebstrap >/dev/null || { echo "bare_root.sh: mmdebstrap is missing (ci/setup.sh installs it)" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "bare_root.sh: making a root file system needs root" >&2; exit 1; }
mkdir -p "$(dirname "$root")"
exec 9>"$root.lock"
flock 9  # one maker at a time (ci/test.sh starts one early; the rehearsal may ask meanwhile)
if made; then echo "$root"; exit 0; fi
start=$(date +%s)
rm -rf "$root.tmp"
# shellcheck disable=SC2086
mmdebstrap --quiet --mode=root --variant=essential --include=python3,libstdc++6 bookworm "$root.tmp" "$mirror" </dev/null >&2
echo "$recipe" >"$root.tmp/.twinbench-recipe"
rm -rf "$root"
mv "$root.tmp" "$root"
echo "bare_root.sh: $root made in $(($(date +%s) - start)) s ($(du -sh "$root" | cut -f1))" >&2
echo "$root"
