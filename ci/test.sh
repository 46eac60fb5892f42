#!/usr/bin/env bash
# The README's test command: set up, then build and run the whole test suite
# (ctest over GoogleTest) on both LibTorch lines, one after the other:
#   debian  Debian's LibTorch 1.13 (CPU) into ./build
#   cuda    the venv's PyTorch 2.x (CUDA 13.0 LibTorch from PyPI) into ./build-cuda;
#           its tests run on the CPU, since CI machines have no GPU.
# TWINBENCH_LINES="debian" (or "cuda") runs one line only.
# Prints each line's setup, build and test times and its number of tests.
set -euo pipefail
cd "$(dirname "$0")/.."

lines="${TWINBENCH_LINES:-debian cuda}"
summary=()
t0=$(date +%s)
bash ci/setup.sh
summary+=("setup (apt): $(($(date +%s) - t0)) s")
t=$(date +%s)
bash ci/venv.sh  # both lines' tests run the venv's implementations (eager, compiled, linen, nnx)
summary+=("setup (venv): $(($(date +%s) - t)) s")
if [[ " $lines " == *" cuda "* && $(id -u) -eq 0 ]]; then
  # The GPU kit's rehearsal (a cuda-line test) needs a bare Debian root: made meanwhile, mostly downloads.
  bash ci/gpu_kit/bare_root.sh >/dev/null 2>"${TMPDIR:-/tmp}/twinbench-bare-root.log" &
fi
for line in $lines; do
  dir=build; [[ "$line" == cuda ]] && dir=build-cuda
  t=$(date +%s)
  bash ci/build.sh "$line"
  summary+=("$line: build: $(($(date +%s) - t)) s")
  t=$(date +%s)
  count=$(ctest --test-dir "$dir" -N | sed -n 's/^Total Tests: //p')
  ctest --test-dir "$dir" --output-on-failure -j "$(nproc)"
  summary+=("$line: tests: $(($(date +%s) - t)) s, $count tests passed")
done
printf 'ci/test.sh: %s\n' "${summary[@]}" "total: $(($(date +%s) - t0)) s" >&2
