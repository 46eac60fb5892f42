#!/usr/bin/env bash
# The GPU kit's rehearsal on a bare system: runs `campaign.sh --device cpu` from
# the kit inside a bare Debian root (ci/gpu_kit/bare_root.sh) in which nothing of
# twinbench's build exists, with only the kit and the venv's pip-installed
# torch==2.11.0 mounted in (read-only): what a lent GPU machine offers, less the GPU.
#   bash ci/gpu_kit/rehearse.sh [--record] [KIT] [OUT]   (defaults: gpu-kit, gpu-rehearsal)
# --record: the summary's table of steps goes into docs/results/gpu_kit_rehearsal.md
# (block `steps`, through ci/campaign_results.py), which docs/gpu.md quotes.
# Exit: the campaign's (0: every step passed); 77: cannot rehearse here (not root,
# or no root file system could be made) — a failure where $CI is set.
set -euo pipefail
cd "$(dirname "$0")/../.."
record=0
[[ ${1:-} == --record ]] && { record=1; shift; }
kit=$(cd "${1:-gpu-kit}" && pwd)
mkdir -p "${2:-gpu-rehearsal}"
out=$(cd "${2:-gpu-rehearsal}" && pwd)
python="${TWINBENCH_TORCH_PYTHON:-$PWD/.venv/bin/python}"
cannot() {
  echo "rehearse.sh: cannot rehearse here: $*" >&2
  [[ -n "${CI:-}" ]] && exit 1
  exit 77
}
[[ $(id -u) -eq 0 ]] || cannot "a chroot needs root"
root=$(bash ci/gpu_kit/bare_root.sh) || cannot "no bare root file system (bare_root.sh failed)"
# The point of the rehearsal: the build's libraries are not in the bare root.
for lib in libfmt.so.9 libtomlplusplus.so.3 libpq.so.5 libbenchmark.so.1; do
  if find "$root/usr/lib" "$root/lib" -name "$lib*" 2>/dev/null | grep -q .; then
    echo "rehearse.sh: $root has $lib: not a bare system" >&2; exit 1
  fi
done
site=$("$python" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))')
version=$("$python" -c 'import torch; print(torch.__version__)')
echo "rehearse.sh: kit $kit, bare root $root, torch $version from $site" >&2
start=$(date +%s)
set +e
unshare --mount --fork -- bash -euo pipefail -c '
  root=$1 kit=$2 site=$3 out=$4
  mount --make-rprivate /
  mkdir -p "$root/kit" "$root/opt/torch-site" "$root/out" "$root/tmp" "$root/proc" "$root/dev"
  mount --bind "$kit" "$root/kit" && mount -o remount,bind,ro "$root/kit"
  mount --bind "$site" "$root/opt/torch-site" && mount -o remount,bind,ro "$root/opt/torch-site"
  mount --bind "$out" "$root/out"
  mount -t proc proc "$root/proc"
  mount --rbind /dev "$root/dev"
  mount -t tmpfs tmpfs "$root/tmp"
  exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp TMPDIR=/tmp \
    PYTHONPATH=/opt/torch-site OUT=/out TWINBENCH_TORCH_PYTHON=python3 \
    bash /kit/campaign.sh --device cpu
' rehearse "$root" "$kit" "$site" "$out"
rc=$?
set -e
echo "rehearse.sh: campaign exit $rc after $(($(date +%s) - start)) s; results in $out: $(ls "$out" | tr '\n' ' ')" >&2
[[ -f "$out/summary.md" ]] || { echo "rehearse.sh: no summary.md" >&2; exit 1; }
if (( record )); then
  # The summary's "## Steps" table, as the campaign wrote it.
  awk '/^## Steps/{on=1; next} on && /^## /{exit} on && /^\|/' "$out/summary.md" >"$out/steps.md"
  python3 ci/campaign_results.py write docs/results/gpu_kit_rehearsal.md steps --command "ci/gpu_kit/rehearse.sh --record" \
    --table "$out/steps.md" --note "campaign.sh --device cpu in a bare Debian root (torch $version pip-installed, nothing of \
the build): exit $rc after $(($(date +%s) - start)) s; load $(cut -d' ' -f1 /proc/loadavg) at the end."
fi
exit $rc
