#!/usr/bin/env bash
# The README's test command: set up, then build and run the whole test suite
# (ctest over GoogleTest) on both LibTorch lines, one after the other (the second built
# at low priority while the first runs its tests):
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
# Each line after the first is built while the line before it runs its tests, at the lowest
# priority (nice 19): the tests leave a core idle for minutes (the suites that run alone, the
# servers' outages, the last long test), and the build takes that time instead of its own
# 6 minutes after them; a test's process still gets its core (a nice-19 neighbour has 1.5% of
# the share of a nice-0 one).
background=
kill_tree() { local child; for child in $(pgrep -P "$1"); do kill_tree "$child"; done; kill "$1" 2>/dev/null || true; }
cleanup() { [[ -z $background ]] || kill_tree "$background"; }
trap cleanup EXIT
set -- $lines
while [[ $# -gt 0 ]]; do
  line=$1 next=${2:-}
  shift
  dir=build; [[ "$line" == cuda ]] && dir=build-cuda
  if [[ -z $background ]]; then
    t=$(date +%s)
    bash ci/build.sh "$line"
    summary+=("$line: build: $(($(date +%s) - t)) s")
  else
    t=$(date +%s)
    if ! wait "$background"; then
      background=
      cat "$build_log" >&2
      echo "ci/test.sh: the $line line's build failed (its log above)" >&2
      exit 1
    fi
    background=
    cat "$build_log"
    summary+=("$line: build: $(($(cat "$build_log.end") - background_t0)) s at low priority beside the tests before it"
              "$line: waited for its build after them: $(($(date +%s) - t)) s")
  fi
  if [[ -n $next ]]; then
    build_log=$(mktemp "${TMPDIR:-/tmp}/twinbench-build-$next.XXXXXX")
    background_t0=$(date +%s)
    (rc=0; nice -n 19 bash ci/build.sh "$next" >"$build_log" 2>&1 || rc=$?; date +%s >"$build_log.end"; exit $rc) &
    background=$!
  fi
  t=$(date +%s)
  count=$(ctest --test-dir "$dir" -N | sed -n 's/^Total Tests: //p')
  ctest --test-dir "$dir" --output-on-failure -j "$(nproc)"
  summary+=("$line: tests: $(($(date +%s) - t)) s, $count tests passed")
done
printf 'ci/test.sh: %s\n' "${summary[@]}" "total: $(($(date +%s) - t0)) s" >&2
