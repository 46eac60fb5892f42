#!/usr/bin/env bash
# The README's main job: set up, build, calibrate this machine's matmul peak (for
# MFU), plan every case, then run the CPU matrix — both implementations, every case
# (06_1b in its [reduced] form, what cannot run here recorded as skipped with the
# reason), a few repeats — into ./twinbench.db and print the MaxView tables.
# Then render the pair report and the index for that matrix and print the path of
# index.html. Extra arguments go to `twinbench matrix` (e.g. --repeats 5 train.steps=20).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
bash ci/build.sh
tb=build/harness/twinbench
$tb calibrate --db twinbench.db
$tb plan --all
$tb matrix --reduced --repeats 2 --db twinbench.db "$@"
$tb report pair --db twinbench.db --out twinbench-report
