#!/usr/bin/env bash
# Makes the GPU kit: everything a lent GPU machine (no network; PyTorch 2.11+cu130
# in its python3, no fmt, SQLite, toml++ or libpq) needs to run twinbench's GPU
# campaign in one call, with nothing to compile there (docs/gpu.md, "The GPU kit").
#
#   bash ci/gpu_kit.sh [DIR]     (default DIR: gpu-kit, git-ignored)
#
# DIR holds:
#   bin/twinbench        the CUDA-line binary (build-cuda, built here against the
#                        venv's torch 2.11.0+cu130, the device's own), debug info
#                        stripped, its run path set to ../lib
#   lib/                 every shared library the binary needs that is neither
#                        torch's nor CUDA's nor NCCL's (those come from the
#                        device's torch folder) nor glibc's: taken from `ldd`
#   lib/fallback/        this host's libstdc++ and libgcc_s, used only where the
#                        device's are older (campaign.sh decides from ldd)
#   cases/, variants/    the case files and the eager PyTorch trainer
#   campaign.sh, summary.py, torch_libs.sh, BUILT_FROM, MANIFEST
# and must stay within 55 MiB (the device tool carries 64 MiB, the working tree
# included): this script fails beyond it. ci/gpu_kit/check.sh checks a kit.
set -euo pipefail
cd "$(dirname "$0")/.."
kit="${1:-gpu-kit}"
limit_mib="${TWINBENCH_KIT_LIMIT_MIB:-55}"
bin="${TWINBENCH_KIT_BINARY:-build-cuda/harness/twinbench}"
python="${TWINBENCH_TORCH_PYTHON:-$PWD/.venv/bin/python}"

if [[ ! -x "$bin" ]]; then
  echo "ci/gpu_kit.sh: building $bin (the CUDA line)" >&2
  bash ci/build.sh cuda twinbench
fi
torch_libs=$(bash ci/gpu_kit/torch_libs.sh "$python")

rm -rf "$kit"
mkdir -p "$kit/bin" "$kit/lib/fallback" "$kit/cases" "$kit/variants/eager"
cp "$bin" "$kit/bin/twinbench"
strip --strip-debug "$kit/bin/twinbench"
patchelf --set-rpath '$ORIGIN/../lib' "$kit/bin/twinbench"

# The libraries: what ldd resolves, less torch's folders (the device has them) and glibc.
glibc='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libutil|libresolv|libanl|libnsl)\.so'
cxx_runtime='^(libstdc\+\+|libgcc_s)\.so'
LD_LIBRARY_PATH="$torch_libs" ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' |
  while read -r name path; do
    case ":$torch_libs:" in *":$(dirname "$path"):"*) continue ;; esac
    [[ "$path" == */site-packages/* ]] && continue
    if [[ "$name" =~ $glibc ]]; then continue; fi
    if [[ "$name" =~ $cxx_runtime ]]; then cp -L "$path" "$kit/lib/fallback/$name"; continue; fi
    cp -L "$path" "$kit/lib/$name"
  done
if LD_LIBRARY_PATH="$torch_libs" ldd "$bin" | grep -q 'not found'; then
  echo "ci/gpu_kit.sh: $bin has libraries ldd cannot find here:" >&2
  LD_LIBRARY_PATH="$torch_libs" ldd "$bin" | grep 'not found' >&2
  exit 1
fi

cp cases/*.toml "$kit/cases/"
cp variants/twinbench_trainer.py "$kit/variants/"
cp variants/eager/*.py "$kit/variants/eager/"
cp ci/gpu_kit/campaign.sh ci/gpu_kit/summary.py ci/gpu_kit/torch_libs.sh "$kit/"
{
  echo "commit $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (dirty)')"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
  echo "torch $("$python" -c 'import torch; print(torch.__version__)')"
} >"$kit/BUILT_FROM"
(cd "$kit" && find . -type f ! -name MANIFEST -printf '%s %p\n' | sort -k2 >MANIFEST)

bytes=$(du -sb "$kit" | cut -f1)
mib=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }')
echo "ci/gpu_kit.sh: $kit: $mib MiB, $(find "$kit" -type f | wc -l) files ($(ls "$kit/lib" | grep -c '\.so') libraries)" >&2
if ((bytes > limit_mib * 1048576)); then
  echo "ci/gpu_kit.sh: $kit is $mib MiB, over its limit of $limit_mib MiB" >&2
  exit 1
fi
