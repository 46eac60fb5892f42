#!/usr/bin/env bash
# The README's test command: set up, build, run the whole test suite (ctest over GoogleTest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
start=$(date +%s)
bash ci/build.sh
built=$(date +%s)
echo "ci/test.sh: build took $((built - start)) s" >&2
ctest --test-dir build --output-on-failure -j "$(nproc)"
echo "ci/test.sh: tests took $(($(date +%s) - built)) s" >&2
