#!/usr/bin/env bash
# The README's main job: set up, build, plan every case, then train both
# implementations on every case that fits this machine and print the side-by-side
# tables. Extra arguments are passed to `twinbench run` as overrides.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
bash ci/build.sh
tb=build/harness/twinbench
$tb plan --all
$tb run --preset tiny train.steps=30 "$@"
cases=$(ls cases/*.toml | xargs -n1 basename | sed 's/\.toml$//' | paste -sd, -)
$tb run --case "$cases" "$@"
