#!/usr/bin/env bash
# Checks a GPU kit (ci/gpu_kit.sh made it): its size is within the limit, and
# every library its binary needs resolves, with the kit's lib/ and torch's
# folders first on the path, either to the kit, to torch's folders, or to glibc
# and the C++ runtime (which the device has, the kit carrying a fallback of the
# latter) — never to a library of this build host that the device lacks.
#   bash ci/gpu_kit/check.sh KIT [PYTHON]
set -euo pipefail
kit=$(cd "${1:?usage: check.sh KIT [PYTHON]}" && pwd)
python="${2:-${TWINBENCH_TORCH_PYTHON:-$(cd "$(dirname "$0")/../.." && pwd)/.venv/bin/python}}"
limit_mib="${TWINBENCH_KIT_LIMIT_MIB:-55}"
torch_libs=$(bash "$(dirname "$0")/torch_libs.sh" "$python")
bytes=$(du -sb "$kit" | cut -f1)
status=0
if ((bytes > limit_mib * 1048576)); then
  echo "check.sh: $kit is $((bytes / 1048576)) MiB, over $limit_mib MiB" >&2
  status=1
fi
for f in bin/twinbench campaign.sh summary.py torch_libs.sh cases/01_base.toml variants/eager/train.py; do
  [[ -f "$kit/$f" ]] || { echo "check.sh: $kit lacks $f" >&2; status=1; }
done
system_ok='^(linux-vdso|ld-linux-x86-64|libc|libm|libdl|libpthread|librt|libutil|libresolv|libstdc\+\+|libgcc_s)\.so'
libs=0
while read -r name arrow path _; do
  [[ "$arrow" == "=>" ]] || continue
  libs=$((libs + 1))
  if [[ "$path" == "not" ]]; then echo "check.sh: $name: not found" >&2; status=1; continue; fi
  case "$path" in "$kit"/lib/*) continue ;; esac
  case ":$torch_libs:" in *":$(dirname "$path"):"*) continue ;; esac
  [[ "$path" == */site-packages/nvidia/* || "$path" == */site-packages/torch/* ]] && continue
  [[ "$name" =~ $system_ok ]] && continue
  echo "check.sh: $name resolves to $path: neither in the kit nor torch's nor glibc's" >&2
  status=1
done < <(LD_LIBRARY_PATH="$kit/lib:$torch_libs" ldd "$kit/bin/twinbench")
if ((libs < 10)); then echo "check.sh: ldd listed only $libs libraries: not a kit binary?" >&2; status=1; fi
echo "check.sh: $kit: $(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }') MiB, $libs libraries resolved, $(ls "$kit/lib" | grep -c '\.so') carried$( ((status)) && echo ', FAILED')" >&2
exit $status
